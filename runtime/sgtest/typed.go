package sgtest

import (
	"fmt"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// The typed layer of the Driver. The driver itself works on bytes, as
// Kafka does; generated code (streamgen_driver.go) wraps it per topology
// with one typed method per topic and store, and those methods call the
// generic functions below with the topic's or store's serdes.

// PipeOpt configures one PipeTyped call.
type PipeOpt interface{ applyPipe(*pipeConfig) }

type pipeConfig struct {
	partition int32
}

type pipeOpt func(*pipeConfig)

func (f pipeOpt) applyPipe(c *pipeConfig) { f(c) }

// ToPartition pipes the record into partition p of its topic instead of
// the partition Kafka's default partitioner picks from the key. The driver
// fails the pipe when the topic has no partition p.
func ToPartition(p int32) PipeOpt { return pipeOpt(func(c *pipeConfig) { c.partition = p }) }

// PipeTyped serializes r with the topic's serdes and pipes it into topic
// (Driver.Pipe): it and everything it causes are processed to
// completion and committed before PipeTyped returns.
//
// Nulls follow the rules of sgstream: a key is null when
// r.KeyNull is set or the key is a nil generated record, a value when
// r.ValueNull is set or the value is a nil record (a tombstone). A key or
// value that is not null is never sent as null, even when it serializes to
// no bytes (an empty string), because Kafka tells the two apart.
//
// The partition is chosen as a producer would: Kafka's default partitioner
// on the key bytes, or on the base key of a windowed key (the key serde's
// PartitionKey, as Kafka's WindowedStreamPartitioner); a null key goes to
// partition 0. ToPartition overrides it.
func PipeTyped[K, V any](d *Driver, topic string, key serdes.Serde[K], value serdes.Serde[V], r sgstream.Record[K, V], opts ...PipeOpt) error {
	cfg := pipeConfig{partition: -1}
	for _, o := range opts {
		o.applyPipe(&cfg)
	}
	raw := sgstream.RawRecord{Topic: topic, Partition: cfg.partition, Timestamp: r.Timestamp, Headers: r.Headers}
	var err error
	if !r.KeyNull && !isNull(r.Key) {
		if raw.Key, err = key.Append(nil, r.Key); err != nil {
			return fmt.Errorf("streamgen: test driver: topic %q: serialize key: %w", topic, err)
		}
		if raw.Key == nil {
			raw.Key = []byte{}
		}
	}
	if !r.ValueNull && !isNull(r.Value) {
		if raw.Value, err = value.Append(nil, r.Value); err != nil {
			return fmt.Errorf("streamgen: test driver: topic %q: serialize value: %w", topic, err)
		}
		if raw.Value == nil {
			raw.Value = []byte{}
		}
	}
	if raw.Partition < 0 && raw.Key != nil {
		if pk, ok := key.(interface{ PartitionKey(K, []byte) []byte }); ok {
			if n := d.d.Partitions(topic); n > 1 {
				raw.Partition = d.d.KeyPartition(topic, pk.PartitionKey(r.Key, raw.Key))
			}
		}
	}
	return d.Pipe(raw)
}

// OutputRecord is a decoded output record with the partition it was
// written to.
type OutputRecord[K, V any] struct {
	sgstream.Record[K, V]
	Partition int32
}

// ReadTypedOutput returns and removes the records written to topic so far
// (Driver.Output), decoded with the topic's serdes, in the order they
// were written, each with its partition. Null keys and values come back
// with KeyNull and ValueNull set and the zero value (nil for records).
//
// A record that does not decode fails the whole read; the records are
// consumed from the driver either way.
func ReadTypedOutput[K, V any](d *Driver, topic string, key serdes.Serde[K], value serdes.Serde[V]) ([]OutputRecord[K, V], error) {
	raws := d.Output(topic)
	out := make([]OutputRecord[K, V], 0, len(raws))
	for i, raw := range raws {
		r := OutputRecord[K, V]{Partition: raw.Partition}
		r.Timestamp = raw.Timestamp
		r.Headers = raw.Headers
		var err error
		if raw.Key == nil {
			r.KeyNull = true
		} else if r.Key, err = key.Decode(raw.Key); err != nil {
			return nil, fmt.Errorf("streamgen: test driver: topic %q: record %d: decode key: %w", topic, i, err)
		}
		if raw.Value == nil {
			r.ValueNull = true
		} else if r.Value, err = value.Decode(raw.Value); err != nil {
			return nil, fmt.Errorf("streamgen: test driver: topic %q: record %d: decode value: %w", topic, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadTyped is ReadTypedOutput without the partitions: the records written
// to topic so far, decoded, in the order they were written. It returns an
// empty (non-nil) slice when there are none, so tests can compare it with
// a literal.
func ReadTyped[K, V any](d *Driver, topic string, key serdes.Serde[K], value serdes.Serde[V]) ([]sgstream.Record[K, V], error) {
	outs, err := ReadTypedOutput(d, topic, key, value)
	if err != nil {
		return nil, err
	}
	recs := make([]sgstream.Record[K, V], len(outs))
	for i, o := range outs {
		recs[i] = o.Record
	}
	return recs, nil
}

// StorePartition is the partition whose task holds key in store: Kafka's
// default partitioner on the serialized key over the partitions of the
// sub-topology that uses the store, which is where records keyed by key
// land when they were partitioned by that key (piped with the default
// partitioner, or written through a repartition topic). For a global
// store it is GlobalPartition.
func StorePartition[K any](d *Driver, store string, key K, keySerde serdes.Serde[K]) (int32, error) {
	kb, err := keySerde.Append(nil, key)
	if err != nil {
		return 0, fmt.Errorf("streamgen: test driver: store %q: serialize key: %w", store, err)
	}
	if kb == nil {
		kb = []byte{}
	}
	return d.d.StorePartition(store, kb)
}

// ForKey opens store with open on the partition that holds key
// (StorePartition): the generated driver's ...StoreForKey methods.
func ForKey[K, S any](d *Driver, store string, key K, keySerde serdes.Serde[K], open func(partition int32) (S, error)) (S, error) {
	p, err := StorePartition(d, store, key, keySerde)
	if err != nil {
		var zero S
		return zero, err
	}
	return open(p)
}

// KVStore is the key-value store called store of the task on
// partition, as a sgstream.KVStore: the layout of DSL tables and aggregations
// (values with the timestamp of the record that wrote them). Reads see
// what the last pipe committed.
func KVStore[K, V any](d *Driver, store string, partition int32, key serdes.Serde[K], value serdes.Serde[V]) (*sgstream.KVStore[K, V], error) {
	s, err := d.d.TaskStore(store, partition)
	if err != nil {
		return nil, err
	}
	return sgstream.NewKVStore(s, key, value)
}

// VersionedStore is the versioned store called store of the task on
// partition: the store of a table read with a history retention.
func VersionedStore[K, V any](d *Driver, store string, partition int32, key serdes.Serde[K], value serdes.Serde[V]) (*sgstream.VersionedStore[K, V], error) {
	s, err := d.d.TaskStore(store, partition)
	if err != nil {
		return nil, err
	}
	return sgstream.NewVersionedStore(s, key, value)
}

// WindowStore is the window store called store of the task on
// partition. Windowed aggregations keep TimestampedValue values in it:
// pass a TimestampedValueSerde for value.
func WindowStore[K, V any](d *Driver, store string, partition int32, key serdes.Serde[K], value serdes.Serde[V]) (*sgstream.TypedWindowStore[K, V], error) {
	s, err := d.d.TaskStore(store, partition)
	if err != nil {
		return nil, err
	}
	ws, ok := s.(sgstate.WindowStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: test driver: store %q is a %T, not a window store", store, s)
	}
	return sgstream.NewTypedWindowStore(ws, key, value), nil
}

// SessionStore is the session store called store of the task on
// partition.
func SessionStore[K, V any](d *Driver, store string, partition int32, key serdes.Serde[K], value serdes.Serde[V]) (*sgstream.TypedSessionStore[K, V], error) {
	s, err := d.d.TaskStore(store, partition)
	if err != nil {
		return nil, err
	}
	ss, ok := s.(sgstate.SessionStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: test driver: store %q is a %T, not a session store", store, s)
	}
	return sgstream.NewTypedSessionStore(ss, key, value), nil
}

// isNull is sgstream's null rule: only a nil generated record (a type with
// an IsNil method that works on a nil receiver) is null.
func isNull[V any](v V) bool {
	n, ok := any(v).(interface{ IsNil() bool })
	return ok && n.IsNil()
}
