package sgstream

import "github.com/streamgen/streamgen/serdes"

// Table is a typed handle on a KTable while the topology is built. Its
// records are changes: the new value and, when a downstream operator needs
// it (table group-by subtractors), the old one.
type Table[K, V any] struct {
	b    *Builder
	info *nodeInfo
	out  *fanout[K, tableChange[V]]
	// getter builds, per task, a lookup of the table's current values; it
	// is what joins use. Materialized tables read their store; filter and
	// map_values compute from their parent's getter, as Kafka Streams'
	// KTableValueGetter does.
	getter func(t *task) (valueGetter[K, V], error)
	// store is the name of the store that materializes the table, or "".
	store string
	// old records whether downstream operators need old values (Kafka
	// Streams' sendOldValues); see sendOldValues.
	old *tableOpts
	// versioned is set on a table read into a versioned store and on
	// the filters and map_values of one (Kafka's
	// isVersionedOrVersionedUpstream: an operator without a store of its
	// own inherits it; joins, aggregations and to_table do not).
	versioned bool
	// Key and Value serialize the table's keys and values where needed.
	Key   serdes.Serde[K]
	Value serdes.Serde[V]
}

// valueGetter looks up a table's current value for a key.
type valueGetter[K, V any] interface {
	// Get returns the value and its timestamp; found is false when the key
	// has no value (never written or deleted).
	Get(key K) (value V, timestamp int64, found bool, err error)
}

// newTable creates a table handle whose changes are whatever is forwarded to
// the returned node. getter may be nil for a table that cannot be looked
// up; store names the materializing store or is "".
func newTable[K, V any](b *Builder, info *nodeInfo, getter func(t *task) (valueGetter[K, V], error), store string, key serdes.Serde[K], value serdes.Serde[V]) (Table[K, V], recordNode[K, tableChange[V]]) {
	f := &fanout[K, tableChange[V]]{}
	b.countForwards(info, &f.n)
	return Table[K, V]{b: b, info: info, out: f, getter: getter, store: store, old: &tableOpts{}, Key: key, Value: value}, f
}

// to attaches a child that receives every change of the table.
func (t Table[K, V]) to(n recordNode[K, tableChange[V]]) { t.out.add(n) }

// GroupedStream is a stream grouped by key (after a repartition when the
// key changed), ready for aggregation or windowing.
type GroupedStream[K, V any] struct {
	Stream Stream[K, V]
	Key    serdes.Serde[K]
	Value  serdes.Serde[V]
}

// GroupedTable is a table re-grouped by a new key: each update arrives as a
// subtraction of the old value from the old group and an addition of the
// new value to the new group.
type GroupedTable[K, V any] struct {
	b     *Builder
	info  *nodeInfo
	out   *fanout[K, tableChange[V]]
	Key   serdes.Serde[K]
	Value serdes.Serde[V]
}

// newGroupedTable creates a grouped-table handle fed by the returned node.
func newGroupedTable[K, V any](b *Builder, info *nodeInfo, key serdes.Serde[K], value serdes.Serde[V]) (GroupedTable[K, V], recordNode[K, tableChange[V]]) {
	f := &fanout[K, tableChange[V]]{}
	b.countForwards(info, &f.n)
	return GroupedTable[K, V]{b: b, info: info, out: f, Key: key, Value: value}, f
}

// to attaches a child that receives the grouped changes.
func (g GroupedTable[K, V]) to(n recordNode[K, tableChange[V]]) { g.out.add(n) }
