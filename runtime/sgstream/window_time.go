package sgstream

import (
	"fmt"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// windowedAggregate builds a time- or sliding-window aggregation node, its
// window store and the resulting table.
func windowedAggregate[K, V, VA any](w TimeWindowedStream[K, V], name, store string, emit EmitStrategy, f aggFuncs[K, V, VA], aggSerde serdes.Serde[VA], opts []WindowStoreOpt) Table[Windowed[K], VA] {
	g := w.Grouped
	b := g.Stream.b
	a := newWindowAgg(b, name, store, w.Time, w.Sliding, emit, g.Key, aggSerde, opts)
	info := b.g.Stateful(name, a.op, g.Stream.info, a.spec.Name)
	b.declareStore(a.spec)
	table := a.table(b, info, aggSerde)
	if b.task != nil {
		g.Stream.to(windowProcessor(a, b.task, name, f))
	}
	return table
}

// windowAgg is the store and output of one time- or sliding-window
// aggregation, shared by the processors that write it: one for an
// aggregation, one per input for a cogroup (Kafka's
// CogroupedStreamAggregateBuilder gives every input its own
// KStreamWindowAggregate over the same store). It is built once per task.
type windowAgg[K, VA any] struct {
	op   string
	spec StoreSpec
	// Exactly one of time and sliding is set.
	time    *TimeWindows
	sliding *SlidingWindows
	emit    EmitStrategy
	key     serdes.Serde[K]
	val     TimestampedValueSerde[VA]
	out     recordNode[Windowed[K], tableChange[VA]]
	store   *TypedWindowStore[K, TimestampedValue[VA]]
	em      *emitState
	// cached is the store behind the record cache, nil without one: its
	// flushes forward the updates (emit on update), not the processors.
	cached *cachedWindow
}

func newWindowAgg[K, VA any](b *Builder, name, store string, tw *TimeWindows, sw *SlidingWindows, emit EmitStrategy, key serdes.Serde[K], aggSerde serdes.Serde[VA], opts []WindowStoreOpt) *windowAgg[K, VA] {
	a := &windowAgg[K, VA]{op: "window_aggregate", time: tw, sliding: sw, emit: emit, key: key,
		val: TimestampedValueSerde[VA]{Inner: aggSerde}, spec: StoreSpec{Name: store, Kind: WindowStore, Logged: true, Timestamped: true}}
	switch {
	case sw != nil:
		a.op = "sliding_window_aggregate"
		a.spec.Retention = sw.StoreRetention()
		a.spec.WindowSize = sw.TimeDifference
	case tw != nil:
		a.spec.Retention = tw.StoreRetention()
		a.spec.WindowSize = tw.Size
	default:
		b.errorf("%s %q: stream is not windowed", a.op, name)
	}
	if emit == EmitOnClose {
		a.spec.Retention += timeFirstRetentionSlack
	}
	// Kafka Streams caches the stores of time windows whatever the emit
	// strategy, and sliding windows' only when they emit on update
	// (WindowStoreMaterializer, SlidingWindowStoreMaterializer).
	a.spec.Cached = tw != nil || emit == EmitOnUpdate
	for _, o := range opts {
		o.applyStore(&a.spec)
	}
	return a
}

// table declares the resulting table on node info (the aggregation, or a
// cogroup's merge node) and opens the store when a task initialises.
func (a *windowAgg[K, VA]) table(b *Builder, info *nodeInfo, aggSerde serdes.Serde[VA]) Table[Windowed[K], VA] {
	store := a.spec.Name
	getter := func(t *task) (valueGetter[Windowed[K], VA], error) {
		st, err := openWindowStore(t, store, a.key, a.val)
		if err != nil {
			return nil, err
		}
		return windowGetter[K, VA]{st}, nil
	}
	keySerde := TimeWindowedSerde[K]{Inner: a.key, Size: a.spec.WindowSize}
	table, out := newTable[Windowed[K], VA](b, info, getter, store, keySerde, aggSerde)
	a.out = out
	if b.task == nil {
		return table
	}
	b.onInit(info, func(t *task) error {
		st, err := openWindowStore(t, store, a.key, a.val)
		if err != nil {
			return err
		}
		a.store = st
		if a.emit == EmitOnClose {
			if a.em, err = newEmitState(t, st.Store); err != nil {
				return err
			}
		}
		a.cached, _ = st.Store.(*cachedWindow)
		if a.cached != nil {
			a.cached.ns.SetOldValues(sendsOld(table))
			if a.emit == EmitOnUpdate {
				a.cached.listener = a.forwardFlushed
			}
		}
		return nil
	})
	return table
}

// forwardFlushed forwards a window the record cache flushed, with the
// timestamp of its aggregate (the record context's for a delete) and the
// headers of its last update: Kafka's TimestampedCacheFlushListener.
func (a *windowAgg[K, VA]) forwardFlushed(kb []byte, start int64, newRaw, oldRaw []byte, ts int64, headers []Header) error {
	if f, ok := a.out.(*fanout[Windowed[K], tableChange[VA]]); ok && len(f.children) == 0 {
		// A table nothing reads (a windowed count kept for queries): the
		// forward is counted, and nothing needs decoding.
		f.n++
		return nil
	}
	k, err := a.key.Decode(kb)
	if err != nil {
		return fmt.Errorf("%w: store %q: decode key: %w", ErrProcessing, a.spec.Name, err)
	}
	ch := tableChange[VA]{NewNull: newRaw == nil, OldNull: oldRaw == nil}
	if newRaw != nil {
		v, err := decodeFor(a.spec.Name, a.val, newRaw)
		if err != nil {
			return err
		}
		ch.New, ts = v.Value, v.Timestamp
	}
	if oldRaw != nil {
		v, err := decodeFor(a.spec.Name, a.val, oldRaw)
		if err != nil {
			return err
		}
		ch.Old = v.Value
	}
	win := Windowed[K]{Key: k, Start: start, End: windowEnd(start, a.spec.WindowSize.Milliseconds())}
	return a.out.Process(Record[Windowed[K], tableChange[VA]]{Key: win, Value: ch, Timestamp: ts, Headers: headers})
}

// setHeaders gives the record cache the headers of the record whose
// updates follow, which a flush forwards with them.
func (a *windowAgg[K, VA]) setHeaders(r []Header) {
	if a.cached != nil {
		a.cached.setHeaders(r)
	}
}

// windowProcessor is the processor that folds one input's records into
// a's windows with f. Each keeps its own observed stream time, as each
// Kafka processor does, even when several share the store.
func windowProcessor[K, V, VA any](a *windowAgg[K, VA], t *task, name string, f aggFuncs[K, V, VA]) recordNode[K, V] {
	core := &windowAggCore[K, V, VA]{windowAgg: a, t: t, name: name, f: f, observed: -1}
	if a.sliding != nil {
		return &slidingAggregator[K, V, VA]{windowAggCore: core, d: a.sliding.TimeDifference.Milliseconds(), grace: a.sliding.Grace.Milliseconds()}
	}
	return &timeWindowAggregator[K, V, VA]{windowAggCore: core, w: *a.time}
}

func openWindowStore[K, VA any](t *task, name string, key serdes.Serde[K], val TimestampedValueSerde[VA]) (*TypedWindowStore[K, TimestampedValue[VA]], error) {
	s, err := t.Store(name)
	if err != nil {
		return nil, err
	}
	ws, ok := s.(sgstate.WindowStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: store %q is a %T, not a window store", name, s)
	}
	return NewTypedWindowStore[K, TimestampedValue[VA]](ws, key, val), nil
}

// windowGetter looks windowed aggregates up by windowed key (Kafka's
// KStreamWindowAggregateValueGetter).
type windowGetter[K, VA any] struct {
	s *TypedWindowStore[K, TimestampedValue[VA]]
}

func (g windowGetter[K, VA]) Get(key Windowed[K]) (VA, int64, bool, error) {
	v, found, err := g.s.Fetch(key.Key, key.Start)
	return v.Value, v.Timestamp, found, err
}

// windowAggCore is what time and sliding window processors share: the
// aggregation's store and output, and the processor's own input.
type windowAggCore[K, V, VA any] struct {
	*windowAgg[K, VA]
	t    *task
	name string
	f    aggFuncs[K, V, VA]
	// observed is the operator's observed stream time, -1 before the first
	// record (Kafka's NO_TIMESTAMP).
	observed int64
}

func (c *windowAggCore[K, V, VA]) observe(ts int64) {
	if ts > c.observed {
		c.observed = ts
	}
}

// put stores an aggregate; a null aggregate deletes the window, as
// ValueAndTimestamp.make(null, ts) does in Kafka.
func (c *windowAggCore[K, V, VA]) put(key K, start int64, agg VA, null bool, ts int64) error {
	if null {
		return c.store.Delete(key, start)
	}
	return c.store.Put(key, start, TimestampedValue[VA]{Value: agg, Timestamp: ts})
}

// forwardUpdate forwards an update under EmitOnUpdate, unless the record
// cache will (Kafka's TimestampedTupleForwarder). Old is the value Kafka
// sends when old values are enabled.
func (c *windowAggCore[K, V, VA]) forwardUpdate(r *Record[K, V], win Windowed[K], oldAgg VA, oldNull bool, newAgg VA, newNull bool, ts int64) error {
	if c.emit == EmitOnClose || c.cached != nil {
		return nil
	}
	return c.out.Process(Record[Windowed[K], tableChange[VA]]{
		Key:       win,
		Value:     tableChange[VA]{New: newAgg, NewNull: newNull, Old: oldAgg, OldNull: oldNull},
		Timestamp: ts,
		Headers:   r.Headers,
	})
}

// drop counts and logs a record (or one window of it) skipped as late.
func (c *windowAggCore[K, V, VA]) drop(ts, closeTime int64, window string) {
	c.t.DropLate()
	c.t.Logger().Debug("skipping record for expired window", "node", c.name, "timestamp", ts,
		"window", window, "expiration", closeTime, "stream_time", c.observed)
}

func (c *windowAggCore[K, V, VA]) dropNull(what string) {
	c.t.Drop()
	c.t.Logger().Warn("skipping record due to null "+what, "node", c.name)
}

// emitRange forwards every stored window with start in [lower, upper] as a
// final result (Kafka's fetchAndEmit); end is the window end for a start.
func (c *windowAggCore[K, V, VA]) emitRange(r *Record[K, V], closeTime, lower, upper, size int64) error {
	err := c.store.FetchAll(lower, upper, func(key K, start int64, v TimestampedValue[VA]) error {
		return c.out.Process(Record[Windowed[K], tableChange[VA]]{
			Key:       Windowed[K]{Key: key, Start: start, End: windowEnd(start, size)},
			Value:     tableChange[VA]{New: v.Value, OldNull: true},
			Timestamp: v.Timestamp,
			Headers:   r.Headers,
		})
	})
	if err != nil {
		return err
	}
	return c.em.emitted(closeTime)
}

// timeWindowAggregator is Kafka's KStreamWindowAggregate for TimeWindows.
type timeWindowAggregator[K, V, VA any] struct {
	*windowAggCore[K, V, VA]
	w      TimeWindows
	starts []int64
}

func (p *timeWindowAggregator[K, V, VA]) Process(r Record[K, V]) error {
	// Only null keys are skipped: a null value is aggregated (Kafka's
	// KStreamWindowAggregate has no value check).
	if r.KeyNull {
		p.dropNull("key")
		return nil
	}
	ts := r.Timestamp
	p.observe(ts)
	p.setHeaders(r.Headers)
	closeTime := p.observed - p.w.Grace.Milliseconds()
	size := p.w.sizeMs()
	p.starts = p.w.appendWindowStarts(p.starts[:0], ts)
	for _, start := range p.starts {
		end := windowEnd(start, size)
		if end <= closeTime {
			p.drop(ts, closeTime, fmt.Sprintf("[%d,%d)", start, end))
			continue
		}
		old, found, err := p.store.Fetch(r.Key, start)
		if err != nil {
			return err
		}
		oldAgg, oldNull, newTs := old.Value, false, max(ts, old.Timestamp)
		if !found {
			oldAgg, oldNull = p.f.init()
			newTs = ts
		}
		newAgg, newNull := p.f.add(r.Key, r.Value, r.ValueNull, oldAgg, oldNull)
		if err := p.put(r.Key, start, newAgg, newNull, newTs); err != nil {
			return err
		}
		win := Windowed[K]{Key: r.Key, Start: start, End: end}
		if err := p.forwardUpdate(&r, win, oldAgg, oldNull, newAgg, newNull, newTs); err != nil {
			return err
		}
	}
	return p.maybeEmitFinal(&r, closeTime)
}

// maybeEmitFinal emits the windows that closed since the last emission:
// those with start in (last - size, closeTime - size], i.e. end <= closeTime.
func (p *timeWindowAggregator[K, V, VA]) maybeEmitFinal(r *Record[K, V], closeTime int64) error {
	if p.emit != EmitOnClose || !p.em.due(closeTime) {
		return nil
	}
	size := p.w.sizeMs()
	upper := closeTime - size
	if upper < 0 {
		return nil
	}
	lower := int64(0)
	if p.em.last != -1 {
		lower = max(0, p.em.last-size) + 1
		// Kafka skips the scan when no window ends in the new range: the
		// windows containing upper are those containing lower-1.
		if equalInt64s(p.w.WindowStarts(upper), p.w.WindowStarts(lower-1)) {
			return nil
		}
	}
	return p.emitRange(r, closeTime, lower, upper, size)
}

func equalInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
