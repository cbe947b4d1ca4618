package sgstream

import "github.com/streamgen/streamgen/serdes"

// Null values as user functions see them. A stream whose values can be null
// where a user function reads them has pointer values in generated code
// (Stream[K, *int64]): nil is the tombstone. The operators keep their plain
// value types and track nullness in Record.ValueNull; Nullable and
// NonNullable convert between the two views of one stream without adding a
// node to the topology.

// Nullable views s with pointer values: a record whose value is null
// arrives as nil, any other as a pointer to its value.
func Nullable[K, V any](s Stream[K, V]) Stream[K, *V] {
	out, next := newStream[K, *V](s.b, s.info)
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		v := ptrTo(r.Value, r.ValueNull)
		return next.Process(Record[K, *V]{Key: r.Key, KeyNull: r.KeyNull, Value: v, ValueNull: v == nil, Timestamp: r.Timestamp, Headers: r.Headers})
	}))
	return out
}

// NonNullable views a stream with pointer values as one with plain values:
// nil becomes a null value (ValueNull, with V's zero value), which sinks
// write as a tombstone and aggregations skip.
func NonNullable[K, V any](s Stream[K, *V]) Stream[K, V] {
	out, next := newStream[K, V](s.b, s.info)
	s.to(nodeFunc[K, *V](func(r Record[K, *V]) error {
		out := Record[K, V]{Key: r.Key, KeyNull: r.KeyNull, ValueNull: r.Value == nil, Timestamp: r.Timestamp, Headers: r.Headers}
		if r.Value != nil {
			out.Value = *r.Value
		}
		return next.Process(out)
	}))
	return out
}

// FilterNotNull drops the records whose value is null: Kafka Streams'
// filter((key, value) -> value != null), on any value type.
func FilterNotNull[K, V any](s Stream[K, V], name string) Stream[K, V] {
	out, next := newStream[K, V](s.b, s.b.addNode(name, "filter", s.info))
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		if r.ValueNull {
			return nil
		}
		return next.Process(r)
	}))
	return out
}

// The operators below take user functions that Kafka Streams hands a null
// value, for a stream whose values can be null: the generator calls them
// where the value is a primitive or an enum, so the function sees nil where
// the plain operator would pass V's zero value. Where Kafka drops a null
// before the function (a plain aggregation, sliding windows, joins), the
// plain operators already drop and count it.

// GroupByNullable is GroupBy with a key selector that sees a null value as
// nil: Kafka's KStream#groupBy calls the selector for every record, then
// the aggregation drops the null (time and session windows aggregate it).
func GroupByNullable[K, V, K2 any](s Stream[K, *V], name string, fn func(key K, value *V) K2, key serdes.Serde[K2], value serdes.Serde[V]) GroupedStream[K2, V] {
	return groupBy(s.b, s.info, name, func(sel *nodeInfo) Stream[K2, V] { return NonNullable(selectKeyOn(s, sel, fn)) }, key, value)
}

// ToDynamicNullable is ToDynamic with a topic chooser that sees a null
// value as nil, as Kafka's TopicNameExtractor does; the record is written
// as a tombstone.
func ToDynamicNullable[K, V any](s Stream[K, *V], name string, choose func(key K, value *V) string, allowed []string, cfg SinkConfig[K, V]) {
	ToDynamic(s, name, choose, allowed, SinkConfig[K, *V]{Key: cfg.Key, Value: ptrSerde[V]{cfg.Value}})
}

// AggregateWindowedNullable is AggregateWindowed with an aggregator that
// sees a null value as nil: Kafka's KStreamWindowAggregate skips only null
// keys. (Sliding windows drop null values before the aggregator.)
func AggregateWindowedNullable[K, V, VA any](w TimeWindowedStream[K, V], name, store string, emit EmitStrategy, init func() VA, agg func(key K, value *V, agg VA) VA, aggSerde serdes.Serde[VA], opts ...WindowStoreOpt) Table[Windowed[K], VA] {
	return windowedAggregate(w, name, store, emit, aggregateFuncsOf(init, nullableAdder(agg), nil), aggSerde, opts)
}

// AggregateSessionNullable is AggregateSession with an aggregator that
// sees a null value as nil (KStreamSessionWindowAggregate skips only null
// keys).
func AggregateSessionNullable[K, V, VA any](s SessionWindowedStream[K, V], name, store string, emit EmitStrategy, init func() VA, agg func(key K, value *V, agg VA) VA, merger func(key K, agg1, agg2 VA) VA, aggSerde serdes.Serde[VA], opts ...WindowStoreOpt) Table[Windowed[K], VA] {
	return sessionAggregate(s, name, store, emit, aggregateFuncsOf(init, nullableAdder(agg), merger), aggSerde, opts)
}

// ReduceWindowedNullable is ReduceWindowed with a reducer over pointers:
// a null first value makes the window's aggregate null (a delete, as in
// Kafka, whose aggregatorForReducer keeps the first value as it is), a
// later null value reaches the reducer as nil, and a nil result deletes
// the window's row. agg is never nil.
func ReduceWindowedNullable[K, V any](w TimeWindowedStream[K, V], name, store string, emit EmitStrategy, reducer func(agg, value *V) *V, opts ...WindowStoreOpt) Table[Windowed[K], V] {
	return windowedAggregate(w, name, store, emit, nullableReduceFuncs[K](reducer), w.Grouped.Value, opts)
}

// ReduceSessionNullable is ReduceSession with a reducer over pointers, as
// ReduceWindowedNullable.
func ReduceSessionNullable[K, V any](s SessionWindowedStream[K, V], name, store string, emit EmitStrategy, reducer func(agg, value *V) *V, opts ...WindowStoreOpt) Table[Windowed[K], V] {
	return sessionAggregate(s, name, store, emit, nullableReduceFuncs[K](reducer), s.Grouped.Value, opts)
}

// CogroupNullable is Cogroup with an aggregator that sees a null value as
// nil, which time and session windows hand it.
func CogroupNullable[K, V, A any](g GroupedStream[K, V], agg func(key K, value *V, agg A) A) *CogroupedStream[K, A] {
	return CogroupWithNullable(&CogroupedStream[K, A]{b: g.Stream.b, Key: g.Key}, g, agg)
}

// CogroupWithNullable is CogroupWith with an aggregator that sees a null
// value as nil.
func CogroupWithNullable[K, V, A any](c *CogroupedStream[K, A], g GroupedStream[K, V], agg func(key K, value *V, agg A) A) *CogroupedStream[K, A] {
	return cogroupWith(c, g, nullableAdder(agg))
}

// nullableAdder is an aggregator that reads a null value as nil.
func nullableAdder[K, V, VA any](agg func(K, *V, VA) VA) func(K, V, bool, VA) VA {
	return func(k K, v V, vNull bool, a VA) VA { return agg(k, ptrTo(v, vNull), a) }
}

// nullableReduceFuncs are reduceFuncs for a reducer over pointers.
func nullableReduceFuncs[K, V any](reducer func(agg, value *V) *V) aggFuncs[K, V, V] {
	return reduceFuncsOf[K](func(agg, v V, vNull bool) (V, bool) {
		r := reducer(&agg, ptrTo(v, vNull))
		if r == nil {
			var zero V
			return zero, true
		}
		return *r, false
	})
}

// ptrTo is v as a pointer, nil when it is null.
func ptrTo[V any](v V, null bool) *V {
	if null {
		return nil
	}
	return &v
}

// ptrSerde writes *V as V: a nil value never reaches it, because sinks
// write a null value as a tombstone without encoding it.
type ptrSerde[V any] struct{ inner serdes.Serde[V] }

func (s ptrSerde[V]) Append(dst []byte, v *V) ([]byte, error) { return s.inner.Append(dst, *v) }

func (s ptrSerde[V]) Decode(b []byte) (*V, error) {
	v, err := s.inner.Decode(b)
	return &v, err
}
