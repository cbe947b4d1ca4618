package sgstream

import (
	"fmt"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// The typed layer of the TestDriver. The driver itself works on bytes, as
// Kafka does; generated code (streamgen_driver.go) wraps it per topology
// with one typed method per topic and store, and those methods call the
// generic functions below with the topic's or store's serdes. They are
// usable by hand, too, for topics the generator cannot see (a topic
// chooser's targets) or for tests of hand-built topologies.

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
// (TestDriver.Pipe): it and everything it causes are processed to
// completion and committed before PipeTyped returns.
//
// Nulls follow the rules of the rest of sgstream: a key is null when
// r.KeyNull is set or the key is a nil generated record, a value when
// r.ValueNull is set or the value is a nil record (a tombstone). A key or
// value that is not null is never sent as null, even when it serializes to
// no bytes (an empty string), because Kafka tells the two apart.
//
// The partition is chosen as a producer would: Kafka's default partitioner
// on the key bytes, or on the base key of a windowed key (the key serde's
// PartitionKey, as Kafka's WindowedStreamPartitioner); a null key goes to
// partition 0. ToPartition overrides it.
func PipeTyped[K, V any](d *TestDriver, topic string, key serdes.Serde[K], value serdes.Serde[V], r Record[K, V], opts ...PipeOpt) error {
	cfg := pipeConfig{partition: -1}
	for _, o := range opts {
		o.applyPipe(&cfg)
	}
	raw := RawRecord{Topic: topic, Partition: cfg.partition, Timestamp: r.Timestamp, Headers: r.Headers}
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
			if n := d.Partitions(topic); n > 1 {
				raw.Partition = choosePartition(pk.PartitionKey(r.Key, raw.Key), n)
			}
		}
	}
	return d.Pipe(raw)
}

// OutputRecord is a decoded output record with the partition it was
// written to.
type OutputRecord[K, V any] struct {
	Record[K, V]
	Partition int32
}

// ReadTypedOutput returns and removes the records written to topic so far
// (TestDriver.Output), decoded with the topic's serdes, in the order they
// were written, each with its partition. Null keys and values come back
// with KeyNull and ValueNull set and the zero value (nil for records).
//
// A record that does not decode fails the whole read; the records are
// consumed from the driver either way.
func ReadTypedOutput[K, V any](d *TestDriver, topic string, key serdes.Serde[K], value serdes.Serde[V]) ([]OutputRecord[K, V], error) {
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
func ReadTyped[K, V any](d *TestDriver, topic string, key serdes.Serde[K], value serdes.Serde[V]) ([]Record[K, V], error) {
	outs, err := ReadTypedOutput(d, topic, key, value)
	if err != nil {
		return nil, err
	}
	recs := make([]Record[K, V], len(outs))
	for i, o := range outs {
		recs[i] = o.Record
	}
	return recs, nil
}

// storeTask finds the task that owns store on partition, creating it (with
// empty stores) when no record reached it yet: Kafka Streams assigns every
// task before the first record, so a test may read a store of a partition
// that saw nothing. A global store lives in the global task whatever the
// partition.
func (d *TestDriver) storeTask(store string, partition int32) (*Task, error) {
	s, err := d.storeSub(store)
	if err != nil {
		return nil, err
	}
	id := TaskID{Sub: s.ID, Partition: partition}
	if d.tp.IsGlobal(s) {
		id.Partition = GlobalPartition
	} else if n := d.storePartitions(s); partition < 0 || int(partition) >= n {
		return nil, fmt.Errorf("streamgen: test driver: store %q has partitions 0 to %d, not %d", store, n-1, partition)
	}
	return d.taskFor(id)
}

// storeSub is the sub-topology that uses store.
func (d *TestDriver) storeSub(store string) (*SubTopology, error) {
	for _, s := range d.tp.SubTopologies() {
		for _, name := range s.Stores {
			if name == store {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("streamgen: test driver: no node of the topology uses store %q", store)
}

// storePartitions is the partition count of a sub-topology: that of its
// source topics, which CheckCopartitioned keeps equal.
func (d *TestDriver) storePartitions(s *SubTopology) int {
	if len(s.Topics) == 0 {
		return d.cfg.defaultPartitions
	}
	return d.Partitions(s.Topics[0])
}

func (d *TestDriver) openStore(store string, partition int32) (sgstate.Store, error) {
	t, err := d.storeTask(store, partition)
	if err != nil {
		return nil, err
	}
	return t.Store(store)
}

// StorePartition is the partition whose task holds key in store: Kafka's
// default partitioner on the serialized key over the partitions of the
// sub-topology that uses the store, which is where records keyed by key
// land when they were partitioned by that key (piped with the default
// partitioner, or written through a repartition topic). For a global
// store it is GlobalPartition.
func StorePartition[K any](d *TestDriver, store string, key K, keySerde serdes.Serde[K]) (int32, error) {
	s, err := d.storeSub(store)
	if err != nil {
		return 0, err
	}
	if d.tp.IsGlobal(s) {
		return GlobalPartition, nil
	}
	kb, err := keySerde.Append(nil, key)
	if err != nil {
		return 0, fmt.Errorf("streamgen: test driver: store %q: serialize key: %w", store, err)
	}
	if kb == nil {
		kb = []byte{}
	}
	return choosePartition(kb, d.storePartitions(s)), nil
}

// DriverKVStore is the key-value store called store of the task on
// partition, as a KVStore: the layout of DSL tables and aggregations
// (values with the timestamp of the record that wrote them). Reads see
// what the last pipe committed.
func DriverKVStore[K, V any](d *TestDriver, store string, partition int32, key serdes.Serde[K], value serdes.Serde[V]) (*KVStore[K, V], error) {
	s, err := d.openStore(store, partition)
	if err != nil {
		return nil, err
	}
	return NewKVStore(s, key, value)
}

// DriverWindowStore is the window store called store of the task on
// partition. Windowed aggregations keep TimestampedValue values in it:
// pass a TimestampedValueSerde for value.
func DriverWindowStore[K, V any](d *TestDriver, store string, partition int32, key serdes.Serde[K], value serdes.Serde[V]) (*TypedWindowStore[K, V], error) {
	s, err := d.openStore(store, partition)
	if err != nil {
		return nil, err
	}
	ws, ok := s.(sgstate.WindowStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: test driver: store %q is a %T, not a window store", store, s)
	}
	return NewTypedWindowStore(ws, key, value), nil
}

// DriverSessionStore is the session store called store of the task on
// partition.
func DriverSessionStore[K, V any](d *TestDriver, store string, partition int32, key serdes.Serde[K], value serdes.Serde[V]) (*TypedSessionStore[K, V], error) {
	s, err := d.openStore(store, partition)
	if err != nil {
		return nil, err
	}
	ss, ok := s.(sgstate.SessionStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: test driver: store %q is a %T, not a session store", store, s)
	}
	return NewTypedSessionStore(ss, key, value), nil
}
