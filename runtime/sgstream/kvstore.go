package sgstream

import (
	"encoding/binary"
	"fmt"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// KVStore is a typed view of a key-value store that holds Kafka Streams'
// ValueAndTimestamp: each value is stored with the timestamp of the record
// that last wrote it, as the 8-byte big-endian timestamp followed by the
// value bytes (ValueAndTimestampSerializer's layout, so the changelog is
// readable by a Java application using a timestamped store). DSL tables and
// aggregations keep their state in one.
//
// A null value is never stored: putting one deletes the key, as a tombstone
// does in Kafka.
type KVStore[K, V any] struct {
	s     sgstate.KeyValueStore
	key   serdes.Serde[K]
	value serdes.Serde[V]
	kbuf  []byte
	vbuf  []byte
	cache *cachedKV // nil when the store has no record cache
}

// NewKVStore wraps s, which must be a sgstate.KeyValueStore.
func NewKVStore[K, V any](s sgstate.Store, key serdes.Serde[K], value serdes.Serde[V]) (*KVStore[K, V], error) {
	kv, ok := s.(sgstate.KeyValueStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: store %q is a %T, not a key-value store", s.Name(), s)
	}
	st := &KVStore[K, V]{s: kv, key: key, value: value}
	if c, ok := s.(*cachedKV); ok {
		st.cache = c
	}
	return st, nil
}

// OpenKVStore is NewKVStore on the task's store called name.
func OpenKVStore[K, V any](t *Task, name string, key serdes.Serde[K], value serdes.Serde[V]) (*KVStore[K, V], error) {
	s, err := t.Store(name)
	if err != nil {
		return nil, err
	}
	return NewKVStore(s, key, value)
}

// Store is the underlying byte store.
func (s *KVStore[K, V]) Store() sgstate.KeyValueStore { return s.s }

func (s *KVStore[K, V]) encodeKey(key K) ([]byte, error) {
	var err error
	if s.kbuf, err = s.key.Append(s.kbuf[:0], key); err != nil {
		return nil, fmt.Errorf("%w: store %q: serialize key: %w", ErrProcessing, s.s.Name(), err)
	}
	return s.kbuf, nil
}

// Get returns the value of key and the timestamp it was written with;
// found is false when the key has no value.
func (s *KVStore[K, V]) Get(key K) (value V, ts int64, found bool, err error) {
	kb, err := s.encodeKey(key)
	if err != nil {
		return value, 0, false, err
	}
	raw, ok, err := s.s.Get(kb)
	if err != nil || !ok {
		return value, 0, false, err
	}
	value, ts, err = s.decode(raw)
	return value, ts, err == nil, err
}

func (s *KVStore[K, V]) decode(raw []byte) (value V, ts int64, err error) {
	if len(raw) < 8 {
		return value, 0, fmt.Errorf("%w: store %q: value has %d bytes, want at least 8 (timestamp)", ErrProcessing, s.s.Name(), len(raw))
	}
	ts = int64(binary.BigEndian.Uint64(raw))
	if value, err = s.value.Decode(raw[8:]); err != nil {
		return value, 0, fmt.Errorf("%w: store %q: decode value: %w", ErrProcessing, s.s.Name(), err)
	}
	return value, ts, nil
}

// Put writes value with timestamp ts. A null value (see Record) deletes.
func (s *KVStore[K, V]) Put(key K, value V, ts int64) error {
	if isNull(value) {
		return s.Delete(key)
	}
	kb, err := s.encodeKey(key)
	if err != nil {
		return err
	}
	s.vbuf = binary.BigEndian.AppendUint64(s.vbuf[:0], uint64(ts))
	if s.vbuf, err = s.value.Append(s.vbuf, value); err != nil {
		return fmt.Errorf("%w: store %q: serialize value: %w", ErrProcessing, s.s.Name(), err)
	}
	if s.cache != nil {
		return s.cache.put(kb, s.vbuf)
	}
	return s.s.Put(kb, s.vbuf)
}

// Delete removes key.
func (s *KVStore[K, V]) Delete(key K) error {
	kb, err := s.encodeKey(key)
	if err != nil {
		return err
	}
	if s.cache != nil {
		return s.cache.put(kb, nil)
	}
	return s.s.Delete(kb)
}

// All visits every key in key-byte order.
func (s *KVStore[K, V]) All(fn func(key K, value V, ts int64) error) error {
	return s.s.All(func(kb, raw []byte) error {
		k, err := s.key.Decode(kb)
		if err != nil {
			return fmt.Errorf("%w: store %q: decode key: %w", ErrProcessing, s.s.Name(), err)
		}
		v, ts, err := s.decode(raw)
		if err != nil {
			return err
		}
		return fn(k, v, ts)
	})
}

// Forwards reports whether the operator that owns the store forwards its
// own updates. It is false when the store is cached: then the cache
// forwards the latest update of each key when it flushes (Kafka Streams'
// TimestampedTupleForwarder).
func (s *KVStore[K, V]) Forwards() bool { return s.cache == nil }

// SetFlushListener registers fn to receive, when the record cache flushes,
// each dirty key's latest value and the value it replaced in the underlying
// store, with the timestamp of the latest update. Null values are reported
// with the null flags. It does nothing for a store without cache.
func (s *KVStore[K, V]) SetFlushListener(fn func(key K, change Change[V], ts int64) error) {
	if s.cache == nil {
		return
	}
	s.cache.listener = func(kb, newRaw, oldRaw []byte, ctxTs int64) error {
		k, err := s.key.Decode(kb)
		if err != nil {
			return fmt.Errorf("%w: store %q: decode key: %w", ErrProcessing, s.s.Name(), err)
		}
		var ch Change[V]
		ts := ctxTs
		if newRaw == nil {
			ch.NewNull = true
		} else if ch.New, ts, err = s.decode(newRaw); err != nil {
			return err
		}
		if oldRaw == nil {
			ch.OldNull = true
		} else if ch.Old, _, err = s.decode(oldRaw); err != nil {
			return err
		}
		return fn(k, ch, ts)
	}
}

// kvGetter is the ValueGetter of a materialized table.
type kvGetter[K, V any] struct{ s *KVStore[K, V] }

func (g kvGetter[K, V]) Get(key K) (V, int64, bool, error) { return g.s.Get(key) }

// storeGetter is the getter factory of a table materialized in store.
func storeGetter[K, V any](store string, key serdes.Serde[K], value serdes.Serde[V]) func(t *Task) (ValueGetter[K, V], error) {
	return func(t *Task) (ValueGetter[K, V], error) {
		s, err := OpenKVStore(t, store, key, value)
		if err != nil {
			return nil, err
		}
		return kvGetter[K, V]{s}, nil
	}
}

// cachedKV is a key-value store behind the record cache.
type cachedKV struct {
	sgstate.KeyValueStore
	listener func(key, newRaw, oldRaw []byte, ctxTs int64) error
}

func (c *cachedKV) put(key, raw []byte) error { return c.KeyValueStore.Put(key, raw) }
