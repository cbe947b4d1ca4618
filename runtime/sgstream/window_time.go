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
	op := "window_aggregate"
	spec := StoreSpec{Name: store, Kind: WindowStore, Logged: true}
	var size int64
	switch {
	case w.Sliding != nil:
		op = "sliding_window_aggregate"
		spec.Retention = w.Sliding.StoreRetention()
		spec.WindowSize = w.Sliding.TimeDifference
		size = w.Sliding.TimeDifference.Milliseconds()
	case w.Time != nil:
		spec.Retention = w.Time.StoreRetention()
		spec.WindowSize = w.Time.Size
		size = w.Time.Size.Milliseconds()
	default:
		b.Errorf("%s %q: stream is not windowed", op, name)
	}
	if emit == EmitOnClose {
		spec.Retention += timeFirstRetentionSlack
	}
	for _, o := range opts {
		o(&spec)
	}
	info := b.AddNode(name, op, g.Stream.info)
	b.AddStore(info, spec)
	keySerde := TimeWindowedSerde[K]{Inner: g.Key, Size: spec.WindowSize}
	valSerde := TimestampedValueSerde[VA]{Inner: aggSerde}

	getter := func(t *Task) (ValueGetter[Windowed[K], VA], error) {
		st, err := openWindowStore(t, store, g.Key, valSerde)
		if err != nil {
			return nil, err
		}
		return windowGetter[K, VA]{st}, nil
	}
	table, out := NewTable[Windowed[K], VA](b, info, getter, store, keySerde, aggSerde)
	if b.task == nil {
		return table
	}
	core := &windowAggCore[K, V, VA]{t: b.task, name: name, f: f, emit: emit, out: out, observed: -1}
	var node Node[K, V]
	if w.Sliding != nil {
		p := &slidingAggregator[K, V, VA]{windowAggCore: core, d: size, grace: w.Sliding.Grace.Milliseconds()}
		node = p
	} else {
		p := &timeWindowAggregator[K, V, VA]{windowAggCore: core, w: *w.Time}
		node = p
	}
	g.Stream.To(node)
	b.OnInit(info, func(t *Task) error {
		st, err := openWindowStore(t, store, g.Key, valSerde)
		if err != nil {
			return err
		}
		core.store = st
		if emit == EmitOnClose {
			if core.em, err = newEmitState(t, st.Store); err != nil {
				return err
			}
		}
		return nil
	})
	return table
}

func openWindowStore[K, VA any](t *Task, name string, key serdes.Serde[K], val TimestampedValueSerde[VA]) (*TypedWindowStore[K, TimestampedValue[VA]], error) {
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

// windowAggCore is what time and sliding window aggregations share.
type windowAggCore[K, V, VA any] struct {
	t     *Task
	name  string
	f     aggFuncs[K, V, VA]
	emit  EmitStrategy
	out   Node[Windowed[K], Change[VA]]
	store *TypedWindowStore[K, TimestampedValue[VA]]
	em    *emitState
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

// forwardUpdate forwards an update under EmitOnUpdate. Old is the value
// Kafka sends when old values are enabled.
func (c *windowAggCore[K, V, VA]) forwardUpdate(r *Record[K, V], win Windowed[K], oldAgg VA, oldNull bool, newAgg VA, newNull bool, ts int64) error {
	if c.emit == EmitOnClose {
		return nil
	}
	return c.out.Process(Record[Windowed[K], Change[VA]]{
		Key:       win,
		Value:     Change[VA]{New: newAgg, NewNull: newNull, Old: oldAgg, OldNull: oldNull},
		Timestamp: ts,
		Headers:   r.Headers,
	})
}

// drop counts and logs a record (or one window of it) skipped as late.
func (c *windowAggCore[K, V, VA]) drop(ts, closeTime int64, window string) {
	c.t.Drop()
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
		return c.out.Process(Record[Windowed[K], Change[VA]]{
			Key:       Windowed[K]{Key: key, Start: start, End: windowEnd(start, size)},
			Value:     Change[VA]{New: v.Value, OldNull: true},
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
