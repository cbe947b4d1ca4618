package sgstream

import (
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// tableOpts is the build-time state a table handle shares with the nodes
// created from it.
type tableOpts struct {
	// sendOld is set when an operator downstream needs old values (Kafka
	// Streams' enableSendingOldValues). It changes one observable thing:
	// a table filter then skips updates whose new and old values both fail
	// the predicate instead of forwarding a tombstone.
	sendOld bool
	// parent propagates the request upstream through unmaterialized
	// tables (filter, map_values, suppress).
	parent func()
	// noFreeOld is set on an unmaterialized table that cannot give old
	// values without being materialized: filters and map_values on an
	// unmaterialized foreign-key join result.
	noFreeOld bool
	// view is the store an unmaterialized filter's or map_values' lookups
	// read through (KTableValueGetterSupplier#storeNames), for lookupStore.
	view string
}

// lookupStore is the store lookups of t read, as Kafka Streams lists it on
// a joining processor: the materializing store, or for an unmaterialized
// filter or map_values that of the table it reads through, or "".
func (t Table[K, V]) lookupStore() string {
	if t.store == "" && t.old != nil {
		return t.old.view
	}
	return t.store
}

// freeOldValues reports whether t can give old values without being
// materialized, as Kafka Streams' KTableImpl#enableSendingOldValues(false)
// answers: a table with a store can, an unmaterialized foreign-key join
// result cannot, unmaterialized tables built on one inherit its answer.
func freeOldValues[K, V any](t Table[K, V]) bool {
	return t.store != "" || (t.info.Op != "fk_join_result" && (t.old == nil || !t.old.noFreeOld))
}

// sendOldValues records that an operator downstream of t needs the old
// value of each change (table group-by, suppress, table-table joins call
// it, as their Kafka Streams counterparts call enableSendingOldValues). Call
// it while building, before the first record.
func sendOldValues[K, V any](t Table[K, V]) {
	if t.old == nil || t.old.sendOld {
		return
	}
	t.old.sendOld = true
	if t.old.parent != nil {
		t.old.parent()
	}
}

func sendsOld[K, V any](t Table[K, V]) bool { return t.old != nil && t.old.sendOld }

// TableSource reads a topic as a table materialized in store (Kafka
// Streams' builder.table): a null value deletes the key, a null key is
// dropped (counted in Dropped), and every update is forwarded as a Change
// carrying the value it replaced. The store is logged; its changelog is
// <app id>-<store>-changelog.
func TableSource[K, V any](b *Builder, name string, cfg SourceConfig[K, V], store string) Table[K, V] {
	info := b.g.TableSource(name, engine.TopicSpec{Name: cfg.Topic, Role: cfg.role, Partitions: cfg.Partitions}, store)
	b.declareStore(StoreSpec{Name: store, Kind: KeyValueStore, Logged: true, Cached: true, Timestamped: true})
	tbl, out := newTable(b, info, storeGetter(store, cfg.Key, cfg.Value), store, cfg.Key, cfg.Value)
	up := &tableUpserter[K, V]{out: out}
	b.onInit(info, func(t *task) error { return up.init(t, store, cfg.Key, cfg.Value) })
	b.addSource(info, cfg.Topic, func(t *task, raw *RawRecord) error {
		r, ok, err := decodeRecord(t, raw, cfg)
		if err != nil || !ok {
			return err
		}
		return up.Process(r)
	})
	return tbl
}

// ToTable turns a stream into a table materialized in store (Kafka
// Streams' KStream#toTable): each record upserts its key, a null value
// deletes it, a null key is dropped. When the key changed upstream,
// generated code repartitions first (Repartition), as toTable does.
func ToTable[K, V any](s Stream[K, V], name, store string, key serdes.Serde[K], value serdes.Serde[V]) Table[K, V] {
	info := s.b.g.Stateful(name, "to_table", s.info, store)
	s.b.declareStore(StoreSpec{Name: store, Kind: KeyValueStore, Logged: true, Cached: true, Timestamped: true})
	tbl, out := newTable(s.b, info, storeGetter(store, key, value), store, key, value)
	up := &tableUpserter[K, V]{out: out}
	s.b.onInit(info, func(t *task) error { return up.init(t, store, key, value) })
	s.to(up)
	return tbl
}

// tableUpserter is KTableSource's processor: it writes each record to the
// table's store and forwards the change (itself, or through the record
// cache when the store is cached).
type tableUpserter[K, V any] struct {
	t   *task
	kv  *KVStore[K, V]
	out recordNode[K, tableChange[V]]
}

func (u *tableUpserter[K, V]) init(t *task, store string, key serdes.Serde[K], value serdes.Serde[V]) error {
	kv, err := openKVStore(t, store, key, value)
	if err != nil {
		return err
	}
	u.t, u.kv = t, kv
	kv.setFlushListener(func(k K, ch tableChange[V], ts int64) error {
		return u.out.Process(Record[K, tableChange[V]]{Key: k, Value: ch, Timestamp: ts})
	})
	return nil
}

// skipNullTableKey drops a table record with a null key, as KTableSource
// does.
func skipNullTableKey(t *task) error {
	t.Logger().Warn("skipping table record with null key", "node", "table")
	t.Drop()
	return nil
}

func (u *tableUpserter[K, V]) Process(r Record[K, V]) error {
	if r.KeyNull {
		return skipNullTableKey(u.t)
	}
	old, _, found, err := u.kv.Get(r.Key)
	if err != nil {
		return err
	}
	if r.ValueNull {
		err = u.kv.Delete(r.Key)
	} else {
		err = u.kv.Put(r.Key, r.Value, r.Timestamp)
	}
	if err != nil || !u.kv.forwards() {
		return err
	}
	ch := tableChange[V]{New: r.Value, NewNull: r.ValueNull, Old: old, OldNull: !found}
	return u.out.Process(Record[K, tableChange[V]]{Key: r.Key, Value: ch, Timestamp: r.Timestamp, Headers: r.Headers})
}

// GlobalTable is a handle on a GlobalKTable: a table every task can look up
// in full, whatever partitions it processes. Its source is a sub-topology of
// its own that engines run as one global task fed by every partition of
// the topic, before any other task starts, as Kafka Streams'
// GlobalStreamThread does; its store is not logged (the topic is its
// changelog).
//
// How it works: GlobalTableSource declares its topic with role
// engine.TopicGlobal and its store, which makes the source a global
// sub-topology (engine.Topology.IsGlobal). Other tasks never open the
// global store themselves: a join node must not declare it with addStore
// or useStore (that would merge the sub-topologies); it calls lookup() in
// its onInit, which goes through task.GlobalStore to the store provider
// (engine.GlobalStoreProvider).
type GlobalTable[K, V any] struct {
	info  *nodeInfo
	store string
	// Key and Value are the table's serdes.
	Key   serdes.Serde[K]
	Value serdes.Serde[V]
}

// GlobalTableSource reads a topic as a global table materialized in store.
// Null keys are dropped and null values delete; nothing is forwarded.
func GlobalTableSource[K, V any](b *Builder, name string, cfg SourceConfig[K, V], store string) GlobalTable[K, V] {
	info := b.g.GlobalTableSource(name, engine.TopicSpec{Name: cfg.Topic, Partitions: cfg.Partitions}, store)
	b.declareStore(StoreSpec{Name: store, Kind: KeyValueStore})
	up := &tableUpserter[K, V]{out: &fanout[K, tableChange[V]]{}}
	b.onInit(info, func(t *task) error { return up.init(t, store, cfg.Key, cfg.Value) })
	b.addSource(info, cfg.Topic, func(t *task, raw *RawRecord) error {
		r, ok, err := decodeRecord(t, raw, cfg)
		if err != nil || !ok {
			return err
		}
		return up.Process(r)
	})
	return GlobalTable[K, V]{info: info, store: store, Key: cfg.Key, Value: cfg.Value}
}

// lookup returns the per-task value getter factory: call it in a node's
// onInit to look the global table up from any task.
func (g GlobalTable[K, V]) lookup() func(t *task) (valueGetter[K, V], error) {
	return func(t *task) (valueGetter[K, V], error) {
		s, err := t.GlobalStore(g.store)
		if err != nil {
			return nil, err
		}
		kv, err := NewKVStore(s, g.Key, g.Value)
		if err != nil {
			return nil, err
		}
		return kvGetter[K, V]{kv}, nil
	}
}

// FilterTable keeps the table rows for which pred is true (KTableFilter):
// an update whose new value fails is forwarded as a tombstone, so rows
// leave the filtered table; an update whose new and old values both fail is
// skipped, unless old values would need materializing (freeOldValues) and
// no downstream operator asks for them. Lookups (joins) see only passing rows.
func FilterTable[K, V any](t Table[K, V], name string, pred func(key K, value V) bool) Table[K, V] {
	return filterTable(t, name, "filter", pred, true)
}

// FilterNotTable drops the table rows for which pred is true; see
// FilterTable.
func FilterNotTable[K, V any](t Table[K, V], name string, pred func(key K, value V) bool) Table[K, V] {
	return filterTable(t, name, "filter_not", pred, false)
}

func filterTable[K, V any](t Table[K, V], name, op string, pred func(K, V) bool, keep bool) Table[K, V] {
	info := t.b.addNode(name, op, t.info)
	var getter func(*task) (valueGetter[K, V], error)
	if pg := t.getter; pg != nil {
		getter = func(tk *task) (valueGetter[K, V], error) {
			g, err := pg(tk)
			if err != nil {
				return nil, err
			}
			return newFilterGetter(g, pred, keep), nil
		}
	}
	out, next := newTable(t.b, info, getter, "", t.Key, t.Value)
	out.versioned = t.versioned
	versioned := t.versioned
	out.old.parent = func() { sendOldValues(t) }
	out.old.noFreeOld = !freeOldValues(t)
	out.old.view = t.lookupStore()
	if freeOldValues(t) {
		// KTableFilter asks its parent for old values whenever that needs no
		// materializing, so a row that fails before and after is not sent
		// as a tombstone.
		sendOldValues(out)
	}
	opts := out.old
	t.to(nodeFunc[K, tableChange[V]](func(r Record[K, tableChange[V]]) error {
		in := r.Value
		ch := tableChange[V]{OldNull: true, NotLatest: in.NotLatest}
		if !in.NewNull && pred(r.Key, in.New) == keep {
			ch.New = in.New
		} else {
			ch.NewNull = true
		}
		if opts.sendOld && !in.OldNull && pred(r.Key, in.Old) == keep {
			ch.Old, ch.OldNull = in.Old, false
		}
		// With versioned semantics KTableFilter forwards even an update
		// that fails before and after.
		if opts.sendOld && ch.NewNull && ch.OldNull && !versioned {
			return nil
		}
		r.Value = ch
		return next.Process(r)
	}))
	return out
}

type filterGetter[K, V any] struct {
	parent valueGetter[K, V]
	pred   func(K, V) bool
	keep   bool
}

func (g filterGetter[K, V]) Get(key K) (v V, ts int64, found bool, err error) {
	v, ts, found, err = g.parent.Get(key)
	if err != nil || !found || g.pred(key, v) != g.keep {
		var zero V
		return zero, 0, false, err
	}
	return v, ts, true, nil
}

// MapValuesTable maps every row's value (KTableMapValues): tombstones stay
// tombstones, and a mapper that returns a null value deletes the row.
// value serializes the new values where needed. On a versioned table the
// result is versioned too: updates keep their out-of-order mark and
// lookups as of a time map the version valid then.
func MapValuesTable[K, V, V2 any](t Table[K, V], name string, fn func(key K, value V) V2, value serdes.Serde[V2]) Table[K, V2] {
	info := t.b.addNode(name, "map_values", t.info)
	var getter func(*task) (valueGetter[K, V2], error)
	if pg := t.getter; pg != nil {
		getter = func(tk *task) (valueGetter[K, V2], error) {
			g, err := pg(tk)
			if err != nil {
				return nil, err
			}
			return newMapGetter(g, fn), nil
		}
	}
	out, next := newTable(t.b, info, getter, "", t.Key, value)
	// An unmaterialized map_values inherits versioned semantics
	// (isVersionedOrVersionedUpstream), as its value getter does.
	out.versioned = t.versioned
	out.old.parent = func() { sendOldValues(t) }
	out.old.noFreeOld = !freeOldValues(t)
	out.old.view = t.lookupStore()
	opts := out.old
	t.to(nodeFunc[K, tableChange[V]](func(r Record[K, tableChange[V]]) error {
		in := r.Value
		ch := tableChange[V2]{NewNull: true, OldNull: true, NotLatest: in.NotLatest}
		if !in.NewNull {
			ch.New = fn(r.Key, in.New)
			ch.NewNull = isNull(ch.New)
		}
		if opts.sendOld && !in.OldNull {
			ch.Old = fn(r.Key, in.Old)
			ch.OldNull = isNull(ch.Old)
		}
		return next.Process(Record[K, tableChange[V2]]{Key: r.Key, Value: ch, Timestamp: r.Timestamp, Headers: r.Headers})
	}))
	return out
}

type mapGetter[K, V, V2 any] struct {
	parent valueGetter[K, V]
	fn     func(K, V) V2
}

func (g mapGetter[K, V, V2]) Get(key K) (v2 V2, ts int64, found bool, err error) {
	v, ts, found, err := g.parent.Get(key)
	if err != nil || !found {
		return v2, 0, false, err
	}
	return g.mapped(key, v, ts)
}

// mapped maps a found value; a mapper's null result reads as absent.
func (g mapGetter[K, V, V2]) mapped(key K, v V, ts int64) (V2, int64, bool, error) {
	v2 := g.fn(key, v)
	if isNull(v2) {
		var zero V2
		return zero, 0, false, nil
	}
	return v2, ts, true, nil
}

// ToStream turns a table into the stream of its updates (KTable#toStream):
// every change is forwarded with its new value, tombstones included.
func ToStream[K, V any](t Table[K, V], name string) Stream[K, V] {
	out, next := newStream[K, V](t.b, t.b.addNode(name, "to_stream", t.info))
	t.to(nodeFunc[K, tableChange[V]](func(r Record[K, tableChange[V]]) error {
		return next.Process(Record[K, V]{Key: r.Key, Value: r.Value.New, ValueNull: r.Value.NewNull, Timestamp: r.Timestamp, Headers: r.Headers})
	}))
	return out
}
