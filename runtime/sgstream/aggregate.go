package sgstream

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/streamgen/streamgen/serdes"
)

// GroupByKey groups a stream by its key, as Kafka Streams' groupByKey
// does. When the key changed upstream (after map, select_key, flat_map or
// process), pass RepartitionAs: records then go through the repartition
// topic <app id>-<name>-repartition first, so each key's records meet in
// one task.
func GroupByKey[K, V any](s Stream[K, V], key serdes.Serde[K], value serdes.Serde[V], opts ...GroupOpt) GroupedStream[K, V] {
	var cfg groupConfig
	for _, o := range opts {
		o.applyGroup(&cfg)
	}
	if cfg.repartition != "" {
		s = Repartition(s, cfg.repartition, 0, key, value)
	}
	return GroupedStream[K, V]{Stream: s, Key: key, Value: value}
}

// GroupOpt is an option of GroupByKey.
type GroupOpt interface{ applyGroup(*groupConfig) }

type groupConfig struct {
	repartition string // "" = group in place
}

type groupOpt func(*groupConfig)

func (f groupOpt) applyGroup(c *groupConfig) { f(c) }

// RepartitionAs routes the records through the repartition topic
// <app id>-<name>-repartition before grouping, for a key that changed
// upstream (Kafka's Grouped.as(name) on a key-changing stream). The default
// groups in place, without a topic.
func RepartitionAs(name string) GroupOpt {
	return groupOpt(func(c *groupConfig) { c.repartition = name })
}

// GroupBy selects a new key and groups by it, always through the
// repartition topic <app id>-<name>-repartition (KStream#groupBy).
func GroupBy[K, V, K2 any](s Stream[K, V], name string, fn func(key K, value V) K2, key serdes.Serde[K2], value serdes.Serde[V]) GroupedStream[K2, V] {
	return groupBy(s.b, s.info, name, func(sel *nodeInfo) Stream[K2, V] { return selectKeyOn(s, sel, fn) }, key, value)
}

// groupBy lays out a stream group-by after node from: selected runs the
// key selection as the node it is given, and its output goes through the
// repartition topic.
func groupBy[K2, V any](b *Builder, from *nodeInfo, name string, selected func(sel *nodeInfo) Stream[K2, V], key serdes.Serde[K2], value serdes.Serde[V]) GroupedStream[K2, V] {
	selInfo, sink, source := b.g.GroupBy(name, "select_key", from)
	return GroupedStream[K2, V]{Stream: repartitionThrough(selected(selInfo), sink, source, key, value), Key: key, Value: value}
}

// GroupByTable re-groups a table by a new key (KTable#groupBy with
// KTableRepartitionMap): an update of a row is sent to the old group as a
// subtraction of the old mapped value and to the new group as an addition
// of the new mapped value, through <app id>-<name>-repartition. When both
// map to the same group, one record carries both halves, so the aggregate
// applies subtract then add and emits once. Mapped pairs with a null key or
// value are not sent. On a versioned table an out-of-order update is not
// sent at all (KTableRepartitionMap with versioned semantics: the
// aggregate holds the latest version of each row), and not counted as
// dropped, as Kafka Streams does not count it.
func GroupByTable[K, V, K2, V2 any](t Table[K, V], name string, fn func(key K, value V) (K2, V2), key serdes.Serde[K2], value serdes.Serde[V2]) GroupedTable[K2, V2] {
	sendOldValues(t)
	selInfo, sink, source := t.b.g.GroupBy(name, "table_group_by", t.info)
	mapped, next := newStream[K2, tableChange[V2]](t.b, selInfo)
	var kbufOld, kbufNew []byte
	versioned := t.versioned
	t.to(nodeFunc[K, tableChange[V]](func(r Record[K, tableChange[V]]) error {
		if r.KeyNull {
			return fmt.Errorf("%w: node %q: table record with null key", ErrProcessing, name)
		}
		if versioned && r.Value.NotLatest {
			return nil
		}
		var oldK, newK K2
		var oldV, newV V2
		oldOK, newOK := false, false
		if !r.Value.OldNull {
			oldK, oldV = fn(r.Key, r.Value.Old)
			oldOK = !isNull(oldK) && !isNull(oldV)
		}
		if !r.Value.NewNull {
			newK, newV = fn(r.Key, r.Value.New)
			newOK = !isNull(newK) && !isNull(newV)
		}
		if oldOK && newOK {
			// Same group: compare the serialized keys, which is what
			// decides the partition and the store key.
			var err error
			if kbufOld, err = key.Append(kbufOld[:0], oldK); err != nil {
				return fmt.Errorf("%w: node %q: serialize key: %w", ErrProcessing, name, err)
			}
			if kbufNew, err = key.Append(kbufNew[:0], newK); err != nil {
				return fmt.Errorf("%w: node %q: serialize key: %w", ErrProcessing, name, err)
			}
			if bytes.Equal(kbufOld, kbufNew) {
				return next.Process(Record[K2, tableChange[V2]]{Key: newK, Value: tableChange[V2]{New: newV, Old: oldV}, Timestamp: r.Timestamp, Headers: r.Headers})
			}
		}
		if oldOK {
			if err := next.Process(Record[K2, tableChange[V2]]{Key: oldK, Value: tableChange[V2]{Old: oldV, NewNull: true}, Timestamp: r.Timestamp, Headers: r.Headers}); err != nil {
				return err
			}
		}
		if newOK {
			return next.Process(Record[K2, tableChange[V2]]{Key: newK, Value: tableChange[V2]{New: newV, OldNull: true}, Timestamp: r.Timestamp, Headers: r.Headers})
		}
		return nil
	}))
	rs := repartitionThrough(mapped, sink, source, key, tableChangeSerde[V2]{Inner: value})
	g, in := newGroupedTable[K2, V2](t.b, rs.info, key, value)
	rs.to(in)
	return g
}

// tableChangeSerde serializes a table change through a repartition topic with
// both halves in one record, in the layout of Kafka Streams' 4.x
// ChangedSerializer: a trailing flag byte says which halves are present
// (0 old only, 1 new only, 2 both); with both, the new value's length
// comes first as 4 big-endian bytes, then new, then old.
type tableChangeSerde[V any] struct{ Inner serdes.Serde[V] }

const (
	changeOldOnly byte = 0
	changeNewOnly byte = 1
	changeBoth    byte = 2
)

// Append encodes c; a change with neither half is an error.
func (s tableChangeSerde[V]) Append(dst []byte, c tableChange[V]) ([]byte, error) {
	var err error
	switch {
	case !c.NewNull && !c.OldNull:
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		if dst, err = s.Inner.Append(dst, c.New); err != nil {
			return dst, err
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
		if dst, err = s.Inner.Append(dst, c.Old); err != nil {
			return dst, err
		}
		return append(dst, changeBoth), nil
	case !c.NewNull:
		if dst, err = s.Inner.Append(dst, c.New); err != nil {
			return dst, err
		}
		return append(dst, changeNewOnly), nil
	case !c.OldNull:
		if dst, err = s.Inner.Append(dst, c.Old); err != nil {
			return dst, err
		}
		return append(dst, changeOldOnly), nil
	}
	return dst, fmt.Errorf("streamgen: change with neither new nor old value")
}

// Decode decodes a change written by Append.
func (s tableChangeSerde[V]) Decode(b []byte) (c tableChange[V], err error) {
	if len(b) == 0 {
		return c, fmt.Errorf("streamgen: empty change record")
	}
	flag, body := b[len(b)-1], b[:len(b)-1]
	c.NewNull, c.OldNull = true, true
	switch flag {
	case changeNewOnly:
		c.New, err = s.Inner.Decode(body)
		c.NewNull = false
	case changeOldOnly:
		c.Old, err = s.Inner.Decode(body)
		c.OldNull = false
	case changeBoth:
		if len(body) < 4 || int(binary.BigEndian.Uint32(body)) > len(body)-4 {
			return c, fmt.Errorf("streamgen: change record: bad new-value length")
		}
		n := int(binary.BigEndian.Uint32(body))
		if c.New, err = s.Inner.Decode(body[4 : 4+n]); err != nil {
			return c, err
		}
		c.Old, err = s.Inner.Decode(body[4+n:])
		c.NewNull, c.OldNull = false, false
	default:
		return c, fmt.Errorf("streamgen: change record: unknown flag %d", flag)
	}
	return c, err
}

// aggNode lays out an aggregation's node and declares its key-value store
// (logged, Pebble unless the driver or engine runs in memory).
func aggNode(b *Builder, name, op string, from *nodeInfo, store string) *nodeInfo {
	info := b.g.Stateful(name, op, from, store)
	b.declareStore(aggStoreSpec(store))
	return info
}

func aggStoreSpec(store string) StoreSpec {
	return StoreSpec{Name: store, Kind: KeyValueStore, Logged: true, Cached: true, Timestamped: true}
}

// Count counts the records of each key (KGroupedStream#count): records
// with a null key or value are dropped; every update is emitted.
func Count[K, V any](g GroupedStream[K, V], name, store string) Table[K, int64] {
	return Aggregate(g, name, store, func() int64 { return 0 }, func(_ K, _ V, n int64) int64 { return n + 1 }, serdes.Int64)
}

// Reduce combines the values of each key (KStreamReduce): the first value
// is stored as it is, later ones are reducer(aggregate, value); records with
// a null key or value are dropped; the result's timestamp is the largest
// record timestamp seen for the key.
func Reduce[K, V any](g GroupedStream[K, V], name, store string, reducer func(agg, value V) V) Table[K, V] {
	return streamAggregate(g, name, "reduce", store, g.Value, func(k K, v V, old V, found bool) V {
		if !found {
			return v
		}
		return reducer(old, v)
	})
}

// Aggregate folds the values of each key (KStreamAggregate): init() starts
// a key's aggregate, agg adds a value; records with a null key or value are
// dropped; the result's timestamp is max(record ts, previous aggregate ts).
// An aggregator returning a null value deletes the key.
func Aggregate[K, V, A any](g GroupedStream[K, V], name, store string, init func() A, agg func(key K, value V, agg A) A, aggSerde serdes.Serde[A]) Table[K, A] {
	return streamAggregate(g, name, "aggregate", store, aggSerde, aggregateStep(init, agg))
}

// aggregateStep is KStreamAggregate's fold: init() starts a key's
// aggregate, agg adds the value.
func aggregateStep[K, V, A any](init func() A, agg func(K, V, A) A) func(K, V, A, bool) A {
	return func(k K, v V, old A, found bool) A {
		if !found {
			old = init()
		}
		return agg(k, v, old)
	}
}

// streamAggregate is KStreamAggregate and KStreamReduce: step computes the
// new aggregate from the record and the old aggregate (found false: none).
func streamAggregate[K, V, A any](g GroupedStream[K, V], name, op, store string, aggSerde serdes.Serde[A], step func(K, V, A, bool) A) Table[K, A] {
	b := g.Stream.b
	info := aggNode(b, name, op, g.Stream.info, store)
	tbl, out := newTable(b, info, storeGetter(store, g.Key, aggSerde), store, g.Key, aggSerde)
	u := &aggUpdater[K, A]{out: out, needOld: func() bool { return sendsOld(tbl) }}
	b.onInit(info, func(t *task) error { return u.init(t, store, g.Key, aggSerde) })
	g.Stream.to(foldNode(u, name, step))
	return tbl
}

// foldNode is the processor of KStreamAggregate and KStreamReduce: it
// folds each record into u's store with step, dropping records with a
// null key or value.
func foldNode[K, V, A any](u *aggUpdater[K, A], name string, step func(K, V, A, bool) A) recordNode[K, V] {
	return nodeFunc[K, V](func(r Record[K, V]) error {
		if r.KeyNull || r.ValueNull {
			u.t.Logger().Warn("skipping record with null key or value", "node", name)
			u.t.Drop()
			return nil
		}
		old, oldTs, found, err := u.kv.Get(r.Key)
		if err != nil {
			return err
		}
		ts := r.Timestamp
		if found && oldTs > ts {
			ts = oldTs
		}
		return u.update(r.Key, step(r.Key, r.Value, old, found), old, found, ts, r.Headers)
	})
}

// aggUpdater writes an aggregate and forwards the change, itself or through
// the record cache.
type aggUpdater[K, A any] struct {
	t   *task
	kv  *KVStore[K, A]
	out recordNode[K, tableChange[A]]
	// needOld reports whether the aggregate's table sends old values
	// downstream; it is asked at task init, when the graph is complete.
	needOld func() bool
}

func (u *aggUpdater[K, A]) init(t *task, store string, key serdes.Serde[K], value serdes.Serde[A]) error {
	kv, err := openKVStore(t, store, key, value)
	if err != nil {
		return err
	}
	u.t, u.kv = t, kv
	kv.setFlushListener(func(k K, ch tableChange[A], ts int64) error {
		return u.out.Process(Record[K, tableChange[A]]{Key: k, Value: ch, Timestamp: ts})
	})
	kv.needOldValues(u.needOld == nil || u.needOld())
	return nil
}

func (u *aggUpdater[K, A]) update(key K, agg, old A, found bool, ts int64, headers []Header) error {
	null := isNull(agg)
	var err error
	if null {
		err = u.kv.Delete(key)
	} else {
		err = u.kv.Put(key, agg, ts)
	}
	if err != nil || !u.kv.forwards() {
		return err
	}
	ch := tableChange[A]{New: agg, NewNull: null, Old: old, OldNull: !found}
	return u.out.Process(Record[K, tableChange[A]]{Key: key, Value: ch, Timestamp: ts, Headers: headers})
}

// CountTable counts the rows of each group of a re-grouped table
// (KGroupedTable#count): an update moving a row decrements the old group
// and increments the new one; a count reaches 0, never a tombstone.
func CountTable[K, V any](g GroupedTable[K, V], name, store string) Table[K, int64] {
	return AggregateTable(g, name, store, func() int64 { return 0 },
		func(_ K, _ V, n int64) int64 { return n + 1 },
		func(_ K, _ V, n int64) int64 { return n - 1 }, serdes.Int64)
}

// ReduceTable reduces a re-grouped table (KTableReduce): subtractor removes
// a row's old value, adder adds its new one; the first value of a group is
// stored as it is.
func ReduceTable[K, V any](g GroupedTable[K, V], name, store string, adder, subtractor func(agg, value V) V) Table[K, V] {
	return tableAggregate(g, name, "reduce", store, g.Value, func(k K, ch tableChange[V], old V, found bool, ts, oldTs int64) (V, bool, int64) {
		agg, has := old, found
		if !ch.OldNull && found {
			agg = subtractor(agg, ch.Old)
			has = !isNull(agg)
			ts = max(ts, oldTs)
		}
		if !ch.NewNull {
			if !has {
				agg, has = ch.New, true
			} else {
				agg = adder(agg, ch.New)
				has = !isNull(agg)
				if found {
					ts = max(ts, oldTs)
				}
			}
		}
		return agg, has, ts
	})
}

// AggregateTable aggregates a re-grouped table (KTableAggregate): init()
// starts a group, subtractor removes a row's old value, adder adds its new
// one; the result's timestamp is max(record ts, previous aggregate ts).
func AggregateTable[K, V, A any](g GroupedTable[K, V], name, store string, init func() A, adder, subtractor func(key K, value V, agg A) A, aggSerde serdes.Serde[A]) Table[K, A] {
	return tableAggregate(g, name, "aggregate", store, aggSerde, func(k K, ch tableChange[V], old A, found bool, ts, oldTs int64) (A, bool, int64) {
		agg, has := old, found
		if !ch.OldNull && found {
			agg = subtractor(k, ch.Old, agg)
			has = !isNull(agg)
			ts = max(ts, oldTs)
		}
		if !ch.NewNull {
			if !has {
				agg = init()
			}
			agg = adder(k, ch.New, agg)
			has = !isNull(agg)
			if found {
				ts = max(ts, oldTs)
			}
		}
		return agg, has, ts
	})
}

func tableAggregate[K, V, A any](g GroupedTable[K, V], name, op, store string, aggSerde serdes.Serde[A], step func(K, tableChange[V], A, bool, int64, int64) (A, bool, int64)) Table[K, A] {
	b := g.b
	info := aggNode(b, name, op, g.info, store)
	tbl, out := newTable(b, info, storeGetter(store, g.Key, aggSerde), store, g.Key, aggSerde)
	u := &aggUpdater[K, A]{out: out, needOld: func() bool { return sendsOld(tbl) }}
	b.onInit(info, func(t *task) error { return u.init(t, store, g.Key, aggSerde) })
	g.to(nodeFunc[K, tableChange[V]](func(r Record[K, tableChange[V]]) error {
		if r.KeyNull {
			return fmt.Errorf("%w: node %q: table aggregate record with null key", ErrProcessing, name)
		}
		old, oldTs, found, err := u.kv.Get(r.Key)
		if err != nil {
			return err
		}
		agg, has, ts := step(r.Key, r.Value, old, found, r.Timestamp, oldTs)
		if !has {
			return u.deleteAgg(r.Key, old, found, ts, r.Headers)
		}
		return u.update(r.Key, agg, old, found, ts, r.Headers)
	}))
	return tbl
}

// deleteAgg removes an aggregate that became null and forwards the
// tombstone.
func (u *aggUpdater[K, A]) deleteAgg(key K, old A, found bool, ts int64, headers []Header) error {
	if err := u.kv.Delete(key); err != nil || !u.kv.forwards() {
		return err
	}
	ch := tableChange[A]{NewNull: true, Old: old, OldNull: !found}
	return u.out.Process(Record[K, tableChange[A]]{Key: key, Value: ch, Timestamp: ts, Headers: headers})
}

// CogroupedStream collects grouped streams of one key type, each with its
// own aggregator, into one aggregate (KIP-150 cogroup). Build it with
// Cogroup and CogroupWith, then call CogroupAggregate, or one of
// CogroupWindowedAggregate, CogroupSlidingAggregate and
// CogroupSessionAggregate (Kafka's CogroupedKStream#windowedBy).
type CogroupedStream[K, A any] struct {
	b      *Builder
	inputs []cogroupInput[K, A]
	Key    serdes.Serde[K]
}

// cogroupInput is one grouped stream and its aggregator. Its processors are
// made by closures, which know the input's value type that CogroupedStream
// does not; each attaches one processor that writes the shared state.
type cogroupInput[K, A any] struct {
	info    *nodeInfo
	kv      func(u *aggUpdater[K, A], name string, init func() A)
	window  func(a *windowAgg[K, A], t *task, name string, init func() A)
	session func(a *sessionAgg[K, A], t *task, name string, init func() A, merger func(K, A, A) A)
}

// Cogroup starts a cogroup with g and its aggregator.
func Cogroup[K, V, A any](g GroupedStream[K, V], agg func(key K, value V, agg A) A) *CogroupedStream[K, A] {
	c := &CogroupedStream[K, A]{b: g.Stream.b, Key: g.Key}
	return CogroupWith(c, g, agg)
}

// CogroupWith adds another grouped stream and its aggregator.
func CogroupWith[K, V, A any](c *CogroupedStream[K, A], g GroupedStream[K, V], agg func(key K, value V, agg A) A) *CogroupedStream[K, A] {
	return cogroupWith(c, g, plainAdder(agg))
}

// cogroupWith adds g with add, an aggregator that also learns whether the
// value is null: only the time and session windows hand it a null value,
// as Kafka's KStreamWindowAggregate and KStreamSessionWindowAggregate do;
// the plain aggregation drops the record first.
func cogroupWith[K, V, A any](c *CogroupedStream[K, A], g GroupedStream[K, V], add func(K, V, bool, A) A) *CogroupedStream[K, A] {
	s := g.Stream
	c.inputs = append(c.inputs, cogroupInput[K, A]{
		info: s.info,
		kv: func(u *aggUpdater[K, A], name string, init func() A) {
			s.to(foldNode(u, name, aggregateStep(init, func(k K, v V, a A) A { return add(k, v, false, a) })))
		},
		window: func(a *windowAgg[K, A], t *task, name string, init func() A) {
			s.to(windowProcessor(a, t, name, aggregateFuncsOf(init, add, nil)))
		},
		session: func(a *sessionAgg[K, A], t *task, name string, init func() A, merger func(K, A, A) A) {
			s.to(sessionProcessor(a, t, name, aggregateFuncsOf(init, add, merger)))
		},
	})
	return c
}

// nodes adds the node of every input, <name>-cogroup-agg-<i>, each
// writing the store spec, and the merge node name that passes their
// updates on (Kafka's KTablePassThrough) and which the table hangs off.
func (c *CogroupedStream[K, A]) nodes(name, op string, spec StoreSpec) (merge *nodeInfo, names []string) {
	inputs := make([]*nodeInfo, len(c.inputs))
	for i, in := range c.inputs {
		inputs[i] = in.info
	}
	merge, aggs := c.b.g.Cogroup(name, op, inputs, spec.Name)
	c.b.declareStore(spec)
	for _, a := range aggs {
		names = append(names, a.Name)
	}
	return merge, names
}

// CogroupAggregate aggregates every input of c into one store: each input's
// records are folded by its own aggregator into the shared aggregate
// (KStreamAggregate semantics per input), and every update is forwarded.
// The input nodes are named <name>-cogroup-agg-<i>; the merged table's node
// is name.
func CogroupAggregate[K, A any](c *CogroupedStream[K, A], name, store string, init func() A, aggSerde serdes.Serde[A]) Table[K, A] {
	merge, names := c.nodes(name, "cogroup_aggregate", aggStoreSpec(store))
	tbl, out := newTable(c.b, merge, storeGetter(store, c.Key, aggSerde), store, c.Key, aggSerde)
	u := &aggUpdater[K, A]{out: out, needOld: func() bool { return sendsOld(tbl) }}
	for i, in := range c.inputs {
		in.kv(u, names[i], init)
	}
	c.b.onInit(merge, func(t *task) error { return u.init(t, store, c.Key, aggSerde) })
	return tbl
}

// CogroupWindowedAggregate aggregates every input of c into the tumbling or
// hopping windows w of one window store (Kafka's
// CogroupedKStream#windowedBy(TimeWindows).aggregate). Each input has its
// own KStreamWindowAggregate processor, with its aggregator, writing the
// shared windows; each keeps its own observed stream time, as in Kafka, so
// whether a record is late depends only on the records of its own input.
// Every update is forwarded: Kafka's windowed cogroup has no emit strategy
// (suppress until the windows close for final results). Nodes are named as
// in CogroupAggregate.
func CogroupWindowedAggregate[K, A any](c *CogroupedStream[K, A], name, store string, w TimeWindows, init func() A, aggSerde serdes.Serde[A], opts ...WindowStoreOpt) Table[Windowed[K], A] {
	if err := w.Validate(); err != nil {
		c.b.errorf("cogroup %q: %v", name, err)
	}
	return cogroupWindowed(c, name, store, &w, nil, init, aggSerde, opts)
}

// CogroupSlidingAggregate is CogroupWindowedAggregate for sliding windows
// (CogroupedKStream#windowedBy(SlidingWindows).aggregate): each input runs
// KStreamSlidingWindowAggregate over the shared store.
func CogroupSlidingAggregate[K, A any](c *CogroupedStream[K, A], name, store string, w SlidingWindows, init func() A, aggSerde serdes.Serde[A], opts ...WindowStoreOpt) Table[Windowed[K], A] {
	if err := w.Validate(); err != nil {
		c.b.errorf("cogroup %q: %v", name, err)
	}
	return cogroupWindowed(c, name, store, nil, &w, init, aggSerde, opts)
}

func cogroupWindowed[K, A any](c *CogroupedStream[K, A], name, store string, tw *TimeWindows, sw *SlidingWindows, init func() A, aggSerde serdes.Serde[A], opts []WindowStoreOpt) Table[Windowed[K], A] {
	a := newWindowAgg(c.b, name, store, tw, sw, EmitOnUpdate, c.Key, aggSerde, opts)
	merge, names := c.nodes(name, "cogroup_"+a.op, a.spec)
	tbl := a.table(c.b, merge, aggSerde)
	if t := c.b.task; t != nil {
		for i, in := range c.inputs {
			in.window(a, t, names[i], init)
		}
	}
	return tbl
}

// CogroupSessionAggregate aggregates every input of c into the sessions w
// of one session store (CogroupedKStream#windowedBy(SessionWindows)
// .aggregate): each input runs KStreamSessionWindowAggregate with its
// aggregator and its own observed stream time, so a record of one input
// merges the sessions that records of any input made; merger combines the
// aggregates of merged sessions. Every update is forwarded, as in
// CogroupWindowedAggregate.
func CogroupSessionAggregate[K, A any](c *CogroupedStream[K, A], name, store string, w SessionWindows, init func() A, merger func(key K, agg1, agg2 A) A, aggSerde serdes.Serde[A], opts ...WindowStoreOpt) Table[Windowed[K], A] {
	if err := w.Validate(); err != nil {
		c.b.errorf("cogroup %q: %v", name, err)
	}
	if merger == nil {
		c.b.errorf("cogroup %q: session windows need a merger", name)
	}
	a := newSessionAgg[K, A](w, store, EmitOnUpdate, c.Key, opts)
	merge, names := c.nodes(name, "cogroup_session_window_aggregate", a.spec)
	tbl := a.table(c.b, merge, aggSerde)
	if t := c.b.task; t != nil {
		for i, in := range c.inputs {
			in.session(a, t, names[i], init, merger)
		}
	}
	return tbl
}
