package sgstream

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"fmt"
	"sort"

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

// The record cache (Kafka Streams' ThreadCache and CachingKeyValueStore),
// one per task, shared by the task's cached stores under one byte budget.
//
// Writes to a cached store stay in the cache, dirty, until the cache
// flushes: in Task.FlushCaches (commit), or when the cache is over budget
// and evicts its least recently used entry; evicting a dirty entry flushes
// the entry's whole store first, as Kafka does. A store's flush visits its
// dirty keys in the order they were last written; for each, it reads the
// value being replaced from the underlying store, writes the new one, and
// passes both to the store's flush listener, which forwards them — except
// a key created and deleted between two flushes (no old value, new null),
// which is neither written nor forwarded.
//
// Reads are served from the cache first. Range reads flush the store first
// (forwarding its dirty keys) and then read the underlying store; DSL
// operators never range over their cached stores.

type recordCache struct {
	max    int64
	size   int64
	lru    list.List // of *cacheEntry, least recently used first
	stores []*cachedKV
}

type cacheEntry struct {
	store   *cachedKV
	key     string
	value   []byte // nil: deleted
	dirty   bool
	ts      int64 // record-context timestamp of the last write
	headers []Header
	seq     uint64 // order of the last write, for the flush order
	elem    *list.Element
}

func (e *cacheEntry) size() int64 { return int64(len(e.key)+len(e.value)) + 64 }

// cachedKV is a key-value store behind the record cache. It passes
// Transactional and Restorer through to the underlying store; Abort and
// Close drop the cache's entries for the store.
type cachedKV struct {
	sgstate.KeyValueStore
	t        *Task
	cache    *recordCache
	order    int // topological position: caches flush upstream stores first
	entries  map[string]*cacheEntry
	seq      uint64
	flushing bool
	listener func(key, newRaw, oldRaw []byte, ctxTs int64) error
}

// wrapCache puts spec's store behind the task's record cache when the task
// has one and the store asks for it.
func (t *Task) wrapCache(spec *StoreSpec, s sgstate.Store) sgstate.Store {
	kv, ok := s.(sgstate.KeyValueStore)
	if !ok || t.cfg.CacheMaxBytes <= 0 || !spec.Cached || spec.Custom != nil || t.ID.IsGlobal() {
		return s
	}
	if _, ok := s.(sgstate.Transactional); !ok {
		return s
	}
	if t.cache == nil {
		t.cache = &recordCache{max: t.cfg.CacheMaxBytes}
	}
	order := len(t.topo.nodes)
	for _, n := range t.topo.nodes {
		for _, st := range n.Stores {
			if st == spec.Name && n.ID < order {
				order = n.ID
			}
		}
	}
	c := &cachedKV{KeyValueStore: kv, t: t, cache: t.cache, order: order, entries: map[string]*cacheEntry{}}
	t.cache.stores = append(t.cache.stores, c)
	sort.SliceStable(t.cache.stores, func(i, j int) bool { return t.cache.stores[i].order < t.cache.stores[j].order })
	return c
}

// FlushCaches flushes the task's record cache, forwarding the latest
// update of every dirty key, upstream stores first. The engine calls it
// before committing the Kafka transaction, so the forwarded records and the
// flushed store writes join that transaction; Commit calls it too.
func (t *Task) FlushCaches() error {
	if t.cache == nil {
		return nil
	}
	for _, c := range t.cache.stores {
		if err := c.flush(); err != nil {
			return fmt.Errorf("streamgen: task %s: flush cache of store %q: %w", t.ID, c.Name(), err)
		}
	}
	return nil
}

func (c *cachedKV) Get(key []byte) ([]byte, bool, error) {
	if e, ok := c.entries[string(key)]; ok {
		c.cache.lru.MoveToBack(e.elem)
		if e.value == nil {
			return nil, false, nil
		}
		return bytes.Clone(e.value), true, nil
	}
	return c.KeyValueStore.Get(key)
}

func (c *cachedKV) Put(key, value []byte) error {
	if value == nil {
		return c.Delete(key)
	}
	return c.put(key, value)
}

func (c *cachedKV) Delete(key []byte) error { return c.put(key, nil) }

func (c *cachedKV) put(key, value []byte) error {
	e, ok := c.entries[string(key)]
	if ok {
		c.cache.size -= e.size()
		c.cache.lru.MoveToBack(e.elem)
	} else {
		e = &cacheEntry{store: c, key: string(key)}
		e.elem = c.cache.lru.PushBack(e)
		c.entries[e.key] = e
	}
	e.value = nil
	if value != nil {
		e.value = bytes.Clone(value)
	}
	e.dirty = true
	c.seq++
	e.seq = c.seq
	e.ts = c.t.contextTimestamp()
	e.headers = nil
	if r := c.t.Current(); r != nil {
		e.headers = r.Headers
	}
	c.cache.size += e.size()
	return c.cache.evict()
}

// evict removes least recently used entries while the cache is over
// budget; a dirty one flushes its store first.
func (rc *recordCache) evict() error {
	for rc.size > rc.max && rc.lru.Len() > 0 {
		e := rc.lru.Front().Value.(*cacheEntry)
		if e.dirty {
			if e.store.flushing {
				return nil // evicted after the running flush
			}
			if err := e.store.flush(); err != nil {
				return err
			}
		}
		if cur, ok := e.store.entries[e.key]; ok && cur == e {
			rc.lru.Remove(e.elem)
			delete(e.store.entries, e.key)
			rc.size -= e.size()
		}
	}
	return nil
}

func (c *cachedKV) flush() error {
	if c.flushing {
		return nil
	}
	var dirty []*cacheEntry
	for _, e := range c.entries {
		if e.dirty {
			dirty = append(dirty, e)
		}
	}
	if len(dirty) == 0 {
		return nil
	}
	sort.Slice(dirty, func(i, j int) bool { return dirty[i].seq < dirty[j].seq })
	c.flushing = true
	defer func() { c.flushing = false }()
	for _, e := range dirty {
		e.dirty = false
		key := []byte(e.key)
		old, found, err := c.KeyValueStore.Get(key)
		if err != nil {
			return err
		}
		if e.value == nil && !found {
			continue
		}
		if e.value == nil {
			err = c.KeyValueStore.Delete(key)
		} else {
			err = c.KeyValueStore.Put(key, e.value)
		}
		if err != nil {
			return err
		}
		if c.listener != nil {
			if !found {
				old = nil
			}
			if err := c.listener(key, e.value, old, e.ts); err != nil {
				return err
			}
		}
	}
	return c.cache.evict()
}

func (c *cachedKV) Range(from, to []byte, fn func(key, value []byte) error) error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.KeyValueStore.Range(from, to, fn)
}

func (c *cachedKV) ReverseRange(from, to []byte, fn func(key, value []byte) error) error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.KeyValueStore.ReverseRange(from, to, fn)
}

func (c *cachedKV) PrefixScan(prefix []byte, fn func(key, value []byte) error) error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.KeyValueStore.PrefixScan(prefix, fn)
}

func (c *cachedKV) All(fn func(key, value []byte) error) error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.KeyValueStore.All(fn)
}

// drop forgets the store's cache entries (abort, close).
func (c *cachedKV) drop() {
	for k, e := range c.entries {
		c.cache.lru.Remove(e.elem)
		c.cache.size -= e.size()
		delete(c.entries, k)
	}
}

func (c *cachedKV) Commit(checkpoint map[string]int64) error {
	return c.KeyValueStore.(sgstate.Transactional).Commit(checkpoint)
}

func (c *cachedKV) Abort() error {
	c.drop()
	return c.KeyValueStore.(sgstate.Transactional).Abort()
}

func (c *cachedKV) Checkpoint() (map[string]int64, error) {
	return c.KeyValueStore.(sgstate.Transactional).Checkpoint()
}

func (c *cachedKV) RestoreBatch(records []sgstate.ChangelogRecord) error {
	r, ok := c.KeyValueStore.(sgstate.Restorer)
	if !ok {
		return fmt.Errorf("streamgen: store %q cannot restore", c.Name())
	}
	return r.RestoreBatch(records)
}

func (c *cachedKV) Close() error {
	c.drop()
	for i, s := range c.cache.stores {
		if s == c {
			c.cache.stores = append(c.cache.stores[:i], c.cache.stores[i+1:]...)
			break
		}
	}
	if len(c.cache.stores) == 0 {
		c.t.cache = nil
	}
	return c.KeyValueStore.Close()
}
