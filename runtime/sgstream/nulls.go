package sgstream

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
		var v *V
		if !r.ValueNull {
			v = &r.Value
		}
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
