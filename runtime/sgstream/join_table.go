package sgstream

import (
	"fmt"

	"github.com/streamgen/streamgen/serdes"
)

// Stream-table and stream-global-table joins follow
// KStreamKTableJoinProcessor; table-table joins follow KTableKTableInnerJoin,
// KTableKTableLeftJoin (with KTableKTableRightJoin for the right side),
// KTableKTableOuterJoin and KTableKTableJoinMerger of Kafka Streams 4.x.

// lookup reads a value getter; a null value counts as absent.
func lookup[K, V any](g valueGetter[K, V], key K) (V, int64, bool, error) {
	v, ts, found, err := g.Get(key)
	if err != nil || !found || isNull(v) {
		var zero V
		return zero, 0, false, err
	}
	return v, ts, true, nil
}

func joinStreamTable[K, V1, V2, VR any](s Stream[K, V1], t Table[K, V2], name string, kind JoinKind, joiner Joiner[K, V1, V2, VR]) Stream[K, VR] {
	return joinStreamTableOpts[K, V1, V2, VR](s, t, name, kind, joiner, nil)
}

// joinStreamTableOpts is KStreamKTableJoinProcessor: buf is the grace
// buffer, nil without a grace period. A versioned table is read as of the
// stream record's timestamp.
func joinStreamTableOpts[K, V1, V2, VR any](s Stream[K, V1], t Table[K, V2], name string, kind JoinKind, joiner Joiner[K, V1, V2, VR], buf *graceBuffer[K, V1]) Stream[K, VR] {
	b := s.b
	// The table is a parent so that the join runs in the table's
	// sub-topology, where the stores its getter reads are open.
	info := b.g.StreamTableJoin(name, s.info, t.info, t.lookupStore())
	if kind != InnerJoin && kind != LeftJoin {
		b.errorf("join %q: a stream-table join is inner or left, not %v", name, kind)
	}
	factory := t.getter
	if factory == nil {
		b.errorf("join %q: table %q cannot be looked up; materialize it", name, t.info.Name)
	}
	if buf != nil {
		b.addStore(info, StoreSpec{Name: buf.store, Kind: KeyValueStore, Logged: true, OwnLayout: true})
	}
	out, next := newStream[K, VR](b, info)
	var g valueGetter[K, V2]
	var vg asOfGetter[K, V2]
	b.onInit(info, func(tk *task) (err error) {
		if g, err = factory(tk); err != nil {
			return err
		}
		vg, _ = g.(asOfGetter[K, V2])
		if buf != nil {
			if vg == nil {
				return fmt.Errorf("streamgen: join %q: KTable must be versioned to use a grace period in a stream table join", name)
			}
			return buf.init(tk)
		}
		return nil
	})
	leftJoin := kind == LeftJoin
	task := b.task
	doJoin := func(r Record[K, V1]) error {
		var v2 V2
		found := false
		if !r.KeyNull {
			var err error
			if vg != nil {
				v2, _, found, err = vg.GetAsOf(r.Key, r.Timestamp)
				found = found && !isNull(v2)
			} else {
				v2, _, found, err = lookup(g, r.Key)
			}
			if err != nil {
				return err
			}
		}
		if !leftJoin && !found {
			return nil
		}
		v := joiner(r.Key, r.Value, v2, missingSides(false, !found))
		return next.Process(Record[K, VR]{Key: r.Key, KeyNull: r.KeyNull, Value: v, ValueNull: isNull(v), Timestamp: r.Timestamp, Headers: r.Headers})
	}
	s.to(nodeFunc[K, V1](func(r Record[K, V1]) error {
		// A left join keeps a null-key record with a value: it cannot
		// match, so it is emitted with a null table side.
		if !(leftJoin && r.KeyNull && !r.ValueNull) && (r.KeyNull || r.ValueNull) {
			task.Logger().Warn("skipping record due to null join key or value", "join", name)
			task.Drop()
			return nil
		}
		if buf == nil || r.KeyNull {
			return doJoin(r)
		}
		// A record too late for the buffer joins at once, and only a
		// buffered record lets the buffer emit (KIP-923).
		ok, err := buf.put(r)
		if err != nil || !ok {
			if err == nil {
				err = doJoin(r)
			}
			return err
		}
		return buf.evict(doJoin)
	}))
	return out
}

func joinStreamGlobal[K, V1, K2, V2, VR any](s Stream[K, V1], gt GlobalTable[K2, V2], name string, kind JoinKind, keyMapper func(K, V1) K2, joiner Joiner[K, V1, V2, VR]) Stream[K, VR] {
	b := s.b
	// The global store is reached through task.GlobalStore; declaring it
	// here would merge this sub-topology with the global one.
	info := b.g.StreamGlobalJoin(name, s.info)
	if kind != InnerJoin && kind != LeftJoin {
		b.errorf("join %q: a stream-global-table join is inner or left, not %v", name, kind)
	}
	out, next := newStream[K, VR](b, info)
	var g valueGetter[K2, V2]
	factory := gt.lookup()
	b.onInit(info, func(tk *task) (err error) {
		g, err = factory(tk)
		return err
	})
	leftJoin := kind == LeftJoin
	task := b.task
	s.to(nodeFunc[K, V1](func(r Record[K, V1]) error {
		// Kafka calls the key mapper before its null checks, so a mapper
		// that cannot take a null value throws there; we drop the record
		// without calling it.
		if r.ValueNull {
			task.Logger().Warn("skipping record due to null value", "join", name)
			task.Drop()
			return nil
		}
		mapped := keyMapper(r.Key, r.Value)
		mappedNull := isNull(mapped)
		if !(leftJoin && r.KeyNull) && mappedNull {
			task.Logger().Warn("skipping record due to null join key", "join", name)
			task.Drop()
			return nil
		}
		var v2 V2
		found := false
		if !mappedNull {
			var err error
			if v2, _, found, err = lookup(g, mapped); err != nil {
				return err
			}
		}
		if !leftJoin && !found {
			return nil
		}
		v := joiner(r.Key, r.Value, v2, missingSides(false, !found))
		return next.Process(Record[K, VR]{Key: r.Key, KeyNull: r.KeyNull, Value: v, ValueNull: isNull(v), Timestamp: r.Timestamp, Headers: r.Headers})
	}))
	return out
}

// tableJoin is the state of a table-table join in one task.
type tableJoin[K, V1, V2, VR any] struct {
	t      *task
	name   string
	kind   JoinKind
	joiner Joiner[K, V1, V2, VR]
	l      Table[K, V1]
	r      Table[K, V2]
	self   *tableOpts // the result's; sendOld set when downstream needs old values
	g1     valueGetter[K, V1]
	g2     valueGetter[K, V2]
	kv     *KVStore[K, VR] // nil when not materialized
	next   recordNode[K, tableChange[VR]]
}

func joinTables[K, V1, V2, VR any](l Table[K, V1], r Table[K, V2], name string, kind JoinKind, joiner Joiner[K, V1, V2, VR], store string, value serdes.Serde[VR]) Table[K, VR] {
	b := l.b
	info := b.g.TableJoin(name, l.info, r.info, l.lookupStore(), r.lookupStore(), store)
	if kind != InnerJoin && kind != LeftJoin && kind != OuterJoin {
		b.errorf("join %q: unknown join kind %v", name, kind)
	}
	f1, f2 := l.getter, r.getter
	if f1 == nil {
		b.errorf("join %q: table %q cannot be looked up; materialize it", name, l.info.Name)
	}
	if f2 == nil {
		b.errorf("join %q: table %q cannot be looked up; materialize it", name, r.info.Name)
	}
	// Kafka's doJoin: the outer sides send old values so that a deleted
	// row can be told from one that never existed.
	if kind == LeftJoin || kind == OuterJoin {
		sendOldValues(l)
	}
	if kind == OuterJoin {
		sendOldValues(r)
	}
	var getter func(*task) (valueGetter[K, VR], error)
	if store != "" {
		if value == nil {
			b.errorf("join %q: a materialized join needs the result value serde", name)
		}
		b.declareStore(StoreSpec{Name: store, Kind: KeyValueStore, Logged: true, Timestamped: true})
		getter = storeGetter(store, l.Key, value)
	} else if f1 != nil && f2 != nil {
		getter = func(tk *task) (valueGetter[K, VR], error) {
			g1, err := f1(tk)
			if err != nil {
				return nil, err
			}
			g2, err := f2(tk)
			if err != nil {
				return nil, err
			}
			return tableJoinGetter[K, V1, V2, VR]{kind: kind, joiner: joiner, g1: g1, g2: g2}, nil
		}
	}
	out, next := newTable(b, info, getter, store, l.Key, value)
	// A downstream need for old values reaches both parents
	// (KTableKTableAbstractJoin.enableSendingOldValues).
	out.old.parent = func() {
		sendOldValues(l)
		sendOldValues(r)
	}
	j := &tableJoin[K, V1, V2, VR]{t: b.task, name: name, kind: kind, joiner: joiner, l: l, r: r, self: out.old, next: next}
	b.onInit(info, func(tk *task) error {
		var err error
		if j.g1, err = f1(tk); err != nil {
			return err
		}
		if j.g2, err = f2(tk); err != nil {
			return err
		}
		if store != "" {
			if j.kv, err = openKVStore(tk, store, l.Key, value); err != nil {
				return err
			}
			j.kv.setFlushListener(func(k K, ch tableChange[VR], ts int64) error {
				if !j.self.sendOld {
					var zero VR
					ch.Old, ch.OldNull = zero, true
				}
				return j.next.Process(Record[K, tableChange[VR]]{Key: k, Value: ch, Timestamp: ts})
			})
		}
		return nil
	})
	l.to(nodeFunc[K, tableChange[V1]](j.processLeft))
	r.to(nodeFunc[K, tableChange[V2]](j.processRight))
	return out
}

// oldOf is a change's old value as Kafka would see it: only a parent that
// sends old values (sendOldValues) forwards one.
func oldOf[K, V any](t Table[K, V], ch tableChange[V]) (V, bool) {
	if !sendsOld(t) || ch.OldNull || isNull(ch.Old) {
		var zero V
		return zero, true
	}
	return ch.Old, false
}

func newOf[V any](ch tableChange[V]) (V, bool) {
	if ch.NewNull || isNull(ch.New) {
		var zero V
		return zero, true
	}
	return ch.New, false
}

// unknownTimestamp is Kafka's UNKNOWN (-1): the timestamp of a missing
// other side, which max() then ignores.
const unknownTimestamp = -1

func (j *tableJoin[K, V1, V2, VR]) skipNullKey() error {
	j.t.Logger().Warn("skipping record due to null key", "join", j.name)
	j.t.Drop()
	return nil
}

// skipOutOfOrder drops an out-of-order update of a versioned side, as
// Kafka's table-table joins do with versioned semantics (KIP-914).
func (j *tableJoin[K, V1, V2, VR]) skipOutOfOrder() error {
	j.t.Logger().Info("skipping out-of-order record from versioned table", "join", j.name)
	j.t.Drop()
	return nil
}

// processLeft handles an update of the left table: KTableKTableInnerJoin,
// KTableKTableLeftJoin or KTableKTableOuterJoin with the original joiner.
func (j *tableJoin[K, V1, V2, VR]) processLeft(r Record[K, tableChange[V1]]) error {
	if r.KeyNull {
		return j.skipNullKey()
	}
	if j.l.versioned && r.Value.NotLatest {
		return j.skipOutOfOrder()
	}
	v2, ts2, found, err := lookup(j.g2, r.Key)
	if err != nil {
		return err
	}
	nv, newNull := newOf(r.Value)
	ov, oldNull := oldOf(j.l, r.Value)
	return j.update(r.Key, r.Timestamp, r.Headers, sideUpdate[VR]{
		found: found, otherTs: ts2, newNull: newNull, oldNull: oldNull,
		joinNew: func() (VR, bool) { return j.result(r.Key, nv, v2, missingSides(newNull, !found)) },
		joinOld: func() (VR, bool) { return j.result(r.Key, ov, v2, missingSides(oldNull, !found)) },
	})
}

// processRight handles an update of the right table: the same processors
// with the reversed joiner, and KTableKTableRightJoin for left joins.
func (j *tableJoin[K, V1, V2, VR]) processRight(r Record[K, tableChange[V2]]) error {
	if r.KeyNull {
		return j.skipNullKey()
	}
	if j.r.versioned && r.Value.NotLatest {
		return j.skipOutOfOrder()
	}
	v1, ts1, found, err := lookup(j.g1, r.Key)
	if err != nil {
		return err
	}
	nv, newNull := newOf(r.Value)
	ov, oldNull := oldOf(j.r, r.Value)
	return j.update(r.Key, r.Timestamp, r.Headers, sideUpdate[VR]{
		right: true, found: found, otherTs: ts1, newNull: newNull, oldNull: oldNull,
		joinNew: func() (VR, bool) { return j.result(r.Key, v1, nv, missingSides(!found, newNull)) },
		joinOld: func() (VR, bool) { return j.result(r.Key, v1, ov, missingSides(!found, oldNull)) },
	})
}

// sideUpdate is an update of one side as the join sees it. The joiner is
// behind closures so that both sides share update, each with its own
// argument order, and so that it runs only where Kafka's processor calls it.
type sideUpdate[VR any] struct {
	right            bool  // the update is of the right table
	found            bool  // the other side has a non-null row
	otherTs          int64 // the other side's row timestamp, when found
	newNull, oldNull bool  // this side's new and old values are null
	joinNew, joinOld func() (VR, bool)
}

// update is the body that KTableKTable{Inner,Left,Right,Outer}Join share:
// which of the new and old results are sent, and at which timestamp.
func (j *tableJoin[K, V1, V2, VR]) update(key K, ts int64, headers []Header, u sideUpdate[VR]) error {
	sendOld := j.self.sendOld
	var ch tableChange[VR]
	ch.NewNull, ch.OldNull = true, true
	switch {
	case j.kind == InnerJoin:
		if !u.found {
			return nil
		}
		ts = max(ts, u.otherTs)
		if !u.newNull {
			ch.New, ch.NewNull = u.joinNew()
		}
		if sendOld && !u.oldNull {
			ch.Old, ch.OldNull = u.joinOld()
		}
	case j.kind == LeftJoin && !u.right:
		otherTs := u.otherTs
		if !u.found {
			if u.newNull && u.oldNull {
				return nil
			}
			otherTs = unknownTimestamp
		}
		ts = max(ts, otherTs)
		if !u.newNull {
			ch.New, ch.NewNull = u.joinNew()
		}
		if sendOld && !u.oldNull {
			ch.Old, ch.OldNull = u.joinOld()
		}
	case j.kind == LeftJoin:
		// KTableKTableRightJoin: the left row decides; a deleted right row
		// joins as null.
		if !u.found {
			return nil
		}
		ts = max(ts, u.otherTs)
		ch.New, ch.NewNull = u.joinNew()
		if sendOld {
			ch.Old, ch.OldNull = u.joinOld()
		}
	default: // OuterJoin
		if !u.found {
			if u.newNull && u.oldNull {
				return nil
			}
		} else {
			ts = max(ts, u.otherTs)
		}
		if u.found || !u.newNull {
			ch.New, ch.NewNull = u.joinNew()
		}
		if sendOld && (u.found || !u.oldNull) {
			ch.Old, ch.OldNull = u.joinOld()
		}
	}
	return j.merge(key, ch, ts, headers)
}

func (j *tableJoin[K, V1, V2, VR]) result(key K, v1 V1, v2 V2, m Missing) (VR, bool) {
	v := j.joiner(key, v1, v2, m)
	return v, isNull(v)
}

// merge is KTableKTableJoinMerger: a materialized result goes through its
// store (and the store's record cache, which then forwards on flush).
func (j *tableJoin[K, V1, V2, VR]) merge(key K, ch tableChange[VR], ts int64, headers []Header) error {
	if !j.self.sendOld {
		var zero VR
		ch.Old, ch.OldNull = zero, true
	}
	if j.kv != nil {
		var err error
		if ch.NewNull {
			err = j.kv.Delete(key)
		} else {
			err = j.kv.Put(key, ch.New, ts)
		}
		if err != nil || !j.kv.forwards() {
			return err
		}
	}
	return j.next.Process(Record[K, tableChange[VR]]{Key: key, Value: ch, Timestamp: ts, Headers: headers})
}

// tableJoinGetter computes the join of an unmaterialized result on lookup
// (the KTableKTable*JoinValueGetter classes).
type tableJoinGetter[K, V1, V2, VR any] struct {
	kind   JoinKind
	joiner Joiner[K, V1, V2, VR]
	g1     valueGetter[K, V1]
	g2     valueGetter[K, V2]
}

func (g tableJoinGetter[K, V1, V2, VR]) Get(key K) (VR, int64, bool, error) {
	var zero VR
	v1, ts1, found1, err := lookup(g.g1, key)
	if err != nil {
		return zero, 0, false, err
	}
	if !found1 && g.kind != OuterJoin {
		return zero, 0, false, nil
	}
	v2, ts2, found2, err := lookup(g.g2, key)
	if err != nil {
		return zero, 0, false, err
	}
	var ts int64
	switch {
	case g.kind == InnerJoin && !found2:
		return zero, 0, false, nil
	case !found1 && !found2:
		return zero, 0, false, nil
	case !found1:
		ts = ts2
	case !found2:
		ts = ts1
	default:
		ts = max(ts1, ts2)
	}
	v := g.joiner(key, v1, v2, missingSides(!found1, !found2))
	if isNull(v) {
		return zero, 0, false, nil
	}
	return v, ts, true, nil
}
