package sgstream

import (
	"fmt"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// sessionAggregate builds a session-window aggregation node, its session
// store and the resulting table.
func sessionAggregate[K, V, VA any](s SessionWindowedStream[K, V], name, store string, emit EmitStrategy, f aggFuncs[K, V, VA], aggSerde serdes.Serde[VA], opts []WindowStoreOpt) Table[Windowed[K], VA] {
	g := s.Grouped
	b := g.Stream.b
	if f.merge == nil {
		b.errorf("session aggregate %q: a merger is required", name)
	}
	a := newSessionAgg[K, VA](s.Windows, store, emit, g.Key, opts)
	info := b.g.Stateful(name, "session_window_aggregate", g.Stream.info, a.spec.Name)
	b.declareStore(a.spec)
	table := a.table(b, info, aggSerde)
	if b.task != nil {
		g.Stream.to(sessionProcessor(a, b.task, name, f))
	}
	return table
}

// sessionProcessor is the processor that folds one input's records into
// a's sessions with f, with its own observed stream time.
func sessionProcessor[K, V, VA any](a *sessionAgg[K, VA], t *task, name string, f aggFuncs[K, V, VA]) recordNode[K, V] {
	return &sessionAggregator[K, V, VA]{sessionAgg: a, t: t, name: name, f: f, observed: -1}
}

// sessionAgg is the store and output of one session-window aggregation,
// shared by the processors that write it: one for an aggregation, one per
// input for a cogroup (each Kafka KStreamSessionWindowAggregate of a
// cogroup writes the same store). It is built once per task.
type sessionAgg[K, VA any] struct {
	spec       StoreSpec
	emit       EmitStrategy
	key        serdes.Serde[K]
	out        recordNode[Windowed[K], tableChange[VA]]
	store      *TypedSessionStore[K, VA]
	em         *emitState
	gap, grace int64
	// For EmitOnClose: the store's retention as Kafka sees it, its segment
	// interval, and the store's observed stream time (largest session end
	// put or removed; -1 before the first), which Kafka's time-ordered
	// session store uses for expiry.
	retention, segment, storeObserved int64
	// cached is the store behind the record cache, nil without one: its
	// flushes forward the updates, not the processors.
	cached *cachedSession
}

func newSessionAgg[K, VA any](w SessionWindows, store string, emit EmitStrategy, key serdes.Serde[K], opts []WindowStoreOpt) *sessionAgg[K, VA] {
	retention := w.StoreRetention().Milliseconds()
	a := &sessionAgg[K, VA]{emit: emit, key: key, gap: w.Gap.Milliseconds(), grace: w.Grace.Milliseconds(),
		retention: retention, storeObserved: -1,
		spec: StoreSpec{Name: store, Kind: SessionStore, Logged: true, Retention: w.StoreRetention()}}
	if emit == EmitOnClose {
		// Kafka backs EmitOnClose session aggregations with its time-ordered
		// RocksDB session store, whose scan for closed sessions
		// (fetchSessions) returns every session of a live segment instead of
		// applying the retention exactly: sessions are kept until their
		// segment (segmentIntervalMs = max(retention/2, 60s)) expires. The
		// store gets one segment more retention and the aggregator applies
		// Kafka's visibility rules itself.
		a.segment = max(retention/2, 60_000)
		a.spec.Retention += time.Duration(a.segment) * time.Millisecond
	}
	// Kafka Streams caches session stores that emit on update
	// (SessionStoreMaterializer).
	a.spec.Cached = emit == EmitOnUpdate
	for _, o := range opts {
		o.applyStore(&a.spec)
	}
	return a
}

// table declares the resulting table on node info (the aggregation, or a
// cogroup's merge node) and opens the store when a task initialises.
func (a *sessionAgg[K, VA]) table(b *Builder, info *nodeInfo, aggSerde serdes.Serde[VA]) Table[Windowed[K], VA] {
	store := a.spec.Name
	getter := func(t *task) (valueGetter[Windowed[K], VA], error) {
		st, err := openSessionStore(t, store, a.key, aggSerde)
		if err != nil {
			return nil, err
		}
		return sessionGetter[K, VA]{st}, nil
	}
	table, out := newTable[Windowed[K], VA](b, info, getter, store, SessionWindowedSerde[K]{Inner: a.key}, aggSerde)
	a.out = out
	if b.task == nil {
		return table
	}
	b.onInit(info, func(t *task) error {
		st, err := openSessionStore(t, store, a.key, aggSerde)
		if err != nil {
			return err
		}
		a.store = st
		if a.emit == EmitOnClose {
			if a.em, err = newEmitState(t, st.Store); err != nil {
				return err
			}
		}
		if a.cached, _ = st.Store.(*cachedSession); a.cached != nil {
			a.cached.ns.SetOldValues(sendsOld(table))
			a.cached.listener = a.forwardFlushed
		}
		return nil
	})
	return table
}

// forwardFlushed forwards a session the record cache flushed, with the
// session end as timestamp (Kafka's SessionCacheFlushListener).
func (a *sessionAgg[K, VA]) forwardFlushed(kb []byte, start, end int64, newRaw, oldRaw []byte, headers []Header) error {
	k, err := a.key.Decode(kb)
	if err != nil {
		return fmt.Errorf("%w: store %q: decode key: %w", ErrProcessing, a.spec.Name, err)
	}
	ch := tableChange[VA]{NewNull: newRaw == nil, OldNull: oldRaw == nil}
	if newRaw != nil {
		if ch.New, err = decodeFor(a.spec.Name, a.store.Value, newRaw); err != nil {
			return err
		}
	}
	if oldRaw != nil {
		if ch.Old, err = decodeFor(a.spec.Name, a.store.Value, oldRaw); err != nil {
			return err
		}
	}
	win := Windowed[K]{Key: k, Start: start, End: end}
	return a.out.Process(Record[Windowed[K], tableChange[VA]]{Key: win, Value: ch, Timestamp: end, Headers: headers})
}

func openSessionStore[K, VA any](t *task, name string, key serdes.Serde[K], val serdes.Serde[VA]) (*TypedSessionStore[K, VA], error) {
	s, err := t.Store(name)
	if err != nil {
		return nil, err
	}
	ss, ok := s.(sgstate.SessionStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: store %q is a %T, not a session store", name, s)
	}
	return NewTypedSessionStore(ss, key, val), nil
}

// sessionGetter looks session aggregates up by windowed key; the timestamp
// is the session end (Kafka's KTableSessionWindowValueGetter).
type sessionGetter[K, VA any] struct {
	s *TypedSessionStore[K, VA]
}

func (g sessionGetter[K, VA]) Get(key Windowed[K]) (VA, int64, bool, error) {
	v, found, err := g.s.FetchSession(key.Key, key.Start, key.End)
	return v, key.End, found, err
}

// sessionAggregator is Kafka's KStreamSessionWindowAggregate: it folds
// one input's records into the sessions of a with f, with its own observed
// stream time.
type sessionAggregator[K, V, VA any] struct {
	*sessionAgg[K, VA]
	t        *task
	name     string
	f        aggFuncs[K, V, VA]
	observed int64
	merged   []sessionEntry[VA]
}

// earliestEnd is the lower end bound of a keyed session lookup. Kafka's
// session stores hide sessions ending before observed - retention + 1
// (getActualFrom; the time-ordered one too, its relaxed rule is for window
// schemas only). sgstate applies that rule itself unless the store was
// given extra retention for EmitOnClose; then it is applied here.
func (p *sessionAgg[K, VA]) earliestEnd(from int64) int64 {
	if p.emit != EmitOnClose {
		return from
	}
	return max(from, p.storeObserved-p.retention+1)
}

// live reports whether Kafka's time-ordered store still holds a session
// ending at end: its segment is not older than that of observed -
// retention (Java's truncating division, as AbstractSegments.segmentId).
func (p *sessionAgg[K, VA]) live(end int64) bool {
	return end/p.segment >= (p.storeObserved-p.retention)/p.segment
}

func (p *sessionAgg[K, VA]) touch(end int64) {
	p.storeObserved = max(p.storeObserved, end)
}

type sessionEntry[VA any] struct {
	start, end int64
	agg        VA
}

func (p *sessionAggregator[K, V, VA]) Process(r Record[K, V]) error {
	// Only null keys are skipped; null values are aggregated.
	if r.KeyNull {
		p.t.Drop()
		p.t.Logger().Warn("skipping record due to null key", "node", p.name)
		return nil
	}
	ts := r.Timestamp
	p.observed = max(p.observed, ts)
	if p.cached != nil {
		p.cached.setHeaders(r.Headers)
	}
	closeTime := p.observed - p.grace - p.gap

	// Every session that ends at most gap before ts or starts at most gap
	// after it (bounds inclusive) merges with [ts, ts].
	p.merged = p.merged[:0]
	start, end := ts, ts
	agg, aggNull := p.f.init()
	err := p.store.FindSessions(r.Key, p.earliestEnd(ts-p.gap), ts+p.gap, func(s, e int64, v VA) error {
		p.merged = append(p.merged, sessionEntry[VA]{start: s, end: e, agg: v})
		agg, aggNull = p.f.merge(r.Key, agg, aggNull, v, isNull(v))
		start, end = min(start, s), max(end, e)
		return nil
	})
	if err != nil {
		return err
	}
	if end < closeTime {
		p.t.DropLate()
		p.t.Logger().Debug("skipping record for expired window", "node", p.name, "timestamp", ts,
			"window", fmt.Sprintf("[%d,%d]", start, end), "expiration", closeTime, "stream_time", p.observed)
		return p.maybeEmitFinal(&r, closeTime)
	}
	if start != ts || end != ts {
		// Merged-away sessions are deleted downstream first, each with its
		// own end as timestamp.
		for _, m := range p.merged {
			if err := p.store.Remove(r.Key, m.start, m.end); err != nil {
				return err
			}
			p.touch(m.end)
			var none VA
			if err := p.forwardUpdate(&r, Windowed[K]{Key: r.Key, Start: m.start, End: m.end}, m.agg, false, none, true); err != nil {
				return err
			}
		}
	}
	agg, aggNull = p.f.add(r.Key, r.Value, r.ValueNull, agg, aggNull)
	if aggNull {
		err = p.store.Remove(r.Key, start, end)
	} else {
		err = p.store.Put(r.Key, start, end, agg)
	}
	if err != nil {
		return err
	}
	p.touch(end)
	var none VA
	if err := p.forwardUpdate(&r, Windowed[K]{Key: r.Key, Start: start, End: end}, none, true, agg, aggNull); err != nil {
		return err
	}
	return p.maybeEmitFinal(&r, closeTime)
}

// forwardUpdate forwards a session update under EmitOnUpdate, with the
// session end as timestamp.
func (p *sessionAggregator[K, V, VA]) forwardUpdate(r *Record[K, V], win Windowed[K], oldAgg VA, oldNull bool, newAgg VA, newNull bool) error {
	if p.emit == EmitOnClose || p.cached != nil {
		return nil
	}
	return p.out.Process(Record[Windowed[K], tableChange[VA]]{
		Key:       win,
		Value:     tableChange[VA]{New: newAgg, NewNull: newNull, Old: oldAgg, OldNull: oldNull},
		Timestamp: win.End,
		Headers:   r.Headers,
	})
}

// maybeEmitFinal emits the sessions that closed since the last emission:
// end in [last, closeTime - 1], i.e. end < closeTime.
func (p *sessionAggregator[K, V, VA]) maybeEmitFinal(r *Record[K, V], closeTime int64) error {
	if p.emit != EmitOnClose || !p.em.due(closeTime) {
		return nil
	}
	upper := closeTime - 1
	if upper < 0 {
		return nil
	}
	lower := max(0, p.em.last)
	if upper < lower {
		return nil
	}
	err := p.store.FetchEndedBetween(lower, upper, func(key K, start, end int64, v VA) error {
		if !p.live(end) {
			return nil
		}
		return p.out.Process(Record[Windowed[K], tableChange[VA]]{
			Key:       Windowed[K]{Key: key, Start: start, End: end},
			Value:     tableChange[VA]{New: v, OldNull: true},
			Timestamp: end,
			Headers:   r.Headers,
		})
	})
	if err != nil {
		return err
	}
	return p.em.emitted(closeTime)
}
