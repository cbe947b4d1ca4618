package sgstream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// KVStore is a typed view of a key-value store that holds Kafka Streams'
// ValueAndTimestamp: each value is stored with the timestamp of the record
// that last wrote it, as the 8-byte big-endian timestamp followed by the
// value bytes (ValueAndTimestampSerializer's layout). DSL tables and
// aggregations keep their state in one; their StoreSpec is Timestamped, so
// the changelog holds Kafka Streams' timestamped layout (the raw value, the
// timestamp as the record's) and a Java application's changelog restores.
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
	null  nullTest[V]
}

// NewKVStore wraps s, which must be a sgstate.KeyValueStore.
func NewKVStore[K, V any](s sgstate.Store, key serdes.Serde[K], value serdes.Serde[V]) (*KVStore[K, V], error) {
	kv, ok := s.(sgstate.KeyValueStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: store %q is a %T, not a key-value store", s.Name(), s)
	}
	st := &KVStore[K, V]{s: kv, key: key, value: value, null: newNullTest[V]()}
	if c, ok := s.(*cachedKV); ok {
		st.cache = c
	}
	return st, nil
}

// openKVStore is NewKVStore on the task's store called name.
func openKVStore[K, V any](t *task, name string, key serdes.Serde[K], value serdes.Serde[V]) (*KVStore[K, V], error) {
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
	var raw []byte
	var ok bool
	if s.cache != nil {
		// Decoding straight from the cache's copy saves copying it first:
		// decoders do not retain their input.
		raw, ok, _, err = s.cache.lookup(kb)
	} else {
		raw, ok, err = s.s.Get(kb)
	}
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
	if s.null.of(value) {
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
	return s.s.Put(kb, s.vbuf)
}

// Delete removes key.
func (s *KVStore[K, V]) Delete(key K) error {
	kb, err := s.encodeKey(key)
	if err != nil {
		return err
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

// forwards reports whether the operator that owns the store forwards its
// own updates. It is false when the store is cached: then the cache
// forwards the latest update of each key when it flushes (Kafka Streams'
// TimestampedTupleForwarder).
func (s *KVStore[K, V]) forwards() bool { return s.cache == nil }

// SetFlushListener registers fn to receive, when the record cache flushes,
// each dirty key's latest value and the value it replaced in the underlying
// store, with the timestamp of the latest update. Null values are reported
// with the null flags. It does nothing for a store without cache.
func (s *KVStore[K, V]) setFlushListener(fn func(key K, change tableChange[V], ts int64) error) {
	if s.cache == nil {
		return
	}
	s.cache.listener = func(kb, newRaw, oldRaw []byte, ctxTs int64) error {
		k, err := s.key.Decode(kb)
		if err != nil {
			return fmt.Errorf("%w: store %q: decode key: %w", ErrProcessing, s.s.Name(), err)
		}
		var ch tableChange[V]
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

// needOldValues says whether the flush listener needs the old value of each
// flushed key (default true). Owners of a cached store whose table sends
// no old values downstream turn it off, which saves a read of the
// underlying store per flushed key; the listener then gets OldNull for
// updates. It does nothing for a store without cache.
func (s *KVStore[K, V]) needOldValues(need bool) {
	if s.cache != nil {
		s.cache.ns.SetOldValues(need)
	}
}

// kvGetter is the valueGetter of a materialized table.
type kvGetter[K, V any] struct{ s *KVStore[K, V] }

func (g kvGetter[K, V]) Get(key K) (V, int64, bool, error) { return g.s.Get(key) }

// storeGetter is the getter factory of a table materialized in store.
func storeGetter[K, V any](store string, key serdes.Serde[K], value serdes.Serde[V]) func(t *task) (valueGetter[K, V], error) {
	return func(t *task) (valueGetter[K, V], error) {
		s, err := openKVStore(t, store, key, value)
		if err != nil {
			return nil, err
		}
		return kvGetter[K, V]{s}, nil
	}
}

// The record cache (Kafka Streams' ThreadCache and CachingKeyValueStore):
// one sgstate.Cache per task, shared by the task's cached stores under one
// byte budget, one namespace per store. sgstate.Cache holds the rules
// (coalescing per key, LRU eviction within the namespace being written,
// flushing the whole namespace when a dirty entry is evicted, skipping keys
// created and deleted between two flushes); this file connects it to the
// key-value stores and the graph, window_cache.go to window and session
// stores.
//
// Writes to a cached store stay in the cache, dirty, until the cache
// flushes: in task.FlushCaches (commit), or on such an eviction. A flush
// visits the store's dirty keys in the order they were last written; for
// each it writes the new value to the underlying store and passes it, with
// the value it replaced, to the store's flush listener, which forwards them.
//
// Reads are served from the cache first. Range reads flush the store first
// (forwarding its dirty keys) and then read the underlying store, so they
// see every cached write; DSL operators never range over their cached
// stores. Abort drops the store's entries, dirty and clean, since clean ones
// may reflect writes being rolled back.

// recordCache is a task's cache and its cached stores in topological
// order, the order FlushCaches flushes them in: a flush forwards records
// downstream, which may dirty downstream stores, so upstream stores go
// first.
type recordCache struct {
	c      *sgstate.Cache
	stores []cachedStore
}

// cachedKV is a key-value store behind the record cache. It passes
// Transactional and Restorer through to the underlying store.
type cachedKV struct {
	sgstate.KeyValueStore
	cachedBase
	listener func(key, newRaw, oldRaw []byte, ctxTs int64) error
}

// wrapCache puts spec's store behind the task's record cache when the task
// has one and the store asks for it: a key-value store (a table or an
// aggregation), or the window or session store of a windowed aggregation.
func (t *task) wrapCache(spec *StoreSpec, s sgstate.Store) sgstate.Store {
	if t.cfg.CacheMaxBytes <= 0 || !spec.Cached || spec.Custom != nil || spec.RetainDuplicates || t.id.IsGlobal() {
		return s
	}
	if _, ok := s.(sgstate.Transactional); !ok {
		return s
	}
	if t.cache == nil {
		t.cache = &recordCache{c: sgstate.NewCache(t.cfg.CacheMaxBytes)}
	}
	base := cachedBase{inner: s, t: t, rc: t.cache, order: t.storeOrder(spec.Name)}
	var c cachedStore
	switch st := s.(type) {
	case sgstate.KeyValueStore:
		kv := &cachedKV{KeyValueStore: st, cachedBase: base}
		kv.ns = t.cache.c.Namespace(spec.Name, st.Get, kv.flushEntry)
		c = kv
	case sgstate.WindowStore:
		c = newCachedWindow(st, base)
	case sgstate.SessionStore:
		c = newCachedSession(st, base)
	default:
		return s
	}
	t.cache.stores = append(t.cache.stores, c)
	sort.SliceStable(t.cache.stores, func(i, j int) bool { return t.cache.stores[i].position() < t.cache.stores[j].position() })
	return c.(sgstate.Store)
}

// storeOrder is the topological position of the first node using store.
func (t *task) storeOrder(store string) int {
	order := len(t.topo.nodes)
	for _, n := range t.topo.nodes {
		for _, st := range n.Stores {
			if st == store && n.ID < order {
				order = n.ID
			}
		}
	}
	return order
}

// FlushCaches flushes the task's record cache, forwarding the latest
// update of every dirty key, upstream stores first. The engine calls it
// before committing the Kafka transaction, so the forwarded records and the
// flushed store writes join that transaction; Commit calls it too.
func (t *task) FlushCaches() error {
	if t.cache == nil {
		return nil
	}
	for _, c := range t.cache.stores {
		if err := c.namespace().Flush(); err != nil {
			return fmt.Errorf("streamgen: task %s: flush cache of store %q: %w", t.id, c.Name(), err)
		}
	}
	return nil
}

// flushEntry is the namespace's flush callback: write the surviving value
// to the underlying store, then forward it.
func (c *cachedKV) flushEntry(e sgstate.FlushEntry) error {
	var err error
	if e.NewValue == nil {
		err = c.KeyValueStore.Delete(e.Key)
	} else {
		err = c.KeyValueStore.Put(e.Key, e.NewValue)
	}
	if err != nil || c.listener == nil {
		return err
	}
	return c.listener(e.Key, e.NewValue, e.OldValue, e.Timestamp)
}

func (c *cachedKV) Get(key []byte) ([]byte, bool, error) {
	v, ok, cached, err := c.lookup(key)
	if cached && ok {
		v = bytes.Clone(v)
	}
	return v, ok, err
}

// lookup is Get without the copy of a cached value: cached reports that v
// is the cache's own slice, which nobody may modify (the cache never does).
func (c *cachedKV) lookup(key []byte) (v []byte, ok, cached bool, err error) {
	if v, ok := c.ns.Get(key); ok {
		return v, v != nil, true, nil // nil: a cached delete
	}
	v, ok, err = c.KeyValueStore.Get(key)
	return v, ok, false, err
}

func (c *cachedKV) Put(key, value []byte) error {
	var headers []Header
	if r := c.t.Current(); r != nil {
		headers = r.Headers
	}
	return c.ns.PutContext(key, value, c.t.contextTimestamp(), nil, c.t.contextSize(headers))
}

func (c *cachedKV) Delete(key []byte) error { return c.Put(key, nil) }

func (c *cachedKV) Range(from, to []byte, fn func(key, value []byte) error) error {
	if err := c.ns.Flush(); err != nil {
		return err
	}
	return c.KeyValueStore.Range(from, to, fn)
}

func (c *cachedKV) ReverseRange(from, to []byte, fn func(key, value []byte) error) error {
	if err := c.ns.Flush(); err != nil {
		return err
	}
	return c.KeyValueStore.ReverseRange(from, to, fn)
}

func (c *cachedKV) PrefixScan(prefix []byte, fn func(key, value []byte) error) error {
	if err := c.ns.Flush(); err != nil {
		return err
	}
	return c.KeyValueStore.PrefixScan(prefix, fn)
}

func (c *cachedKV) All(fn func(key, value []byte) error) error {
	if err := c.ns.Flush(); err != nil {
		return err
	}
	return c.KeyValueStore.All(fn)
}

// Close drops the store's namespace without flushing, as closing drops
// staged writes, and forgets the cache once its last store is gone.
func (c *cachedKV) Close() error { return c.close(c) }
