package sgstate

import (
	"bytes"
	"slices"
)

// Cache is Kafka Streams' record cache (ThreadCache): a byte budget shared by
// the namespaces (one per cached store) of one stream thread. It coalesces
// updates per key between commits, so downstream sees the latest value per
// key per commit instead of every update.
//
// It is independent of the stores: the processor graph reads through it,
// writes into it, and in the flush callback writes the surviving value to
// the store and forwards it. Rules, as in Kafka:
//   - Put marks the key dirty and most recently used; the value replaces any
//     earlier one (only the latest value and record context are flushed).
//   - When the budget is exceeded, the namespace being written evicts its
//     least recently used entries; evicting a dirty entry flushes the whole
//     namespace, the evicted entry first (it has left the cache by then).
//   - Flush (on commit, or on such an eviction) calls the callback once per
//     dirty key, in the order the keys were last updated, with the old value
//     read from the underlying store — except for keys that did not exist
//     before and were deleted again (new nil, no old value). Deleted keys
//     then leave the cache; the others stay, clean.
//   - A budget of 0 makes every Put flush at once (caching disabled).
//
// A Cache is not safe for concurrent use.
type Cache struct {
	max  int64
	size int64
	ns   map[string]*NamedCache
}

// cacheEntryOverhead is what Kafka Streams counts for an entry beyond its
// key, value and record context's topic and headers: the LRU node's three
// references (24), the dirty flag (1), the timestamp and offset (16) and
// the partition (4). Counting entries as Kafka does makes a full cache
// evict at the same moments as Kafka Streams' (with the record context and
// key prefix PutContext and CountKeyPrefix supply), so what an eviction
// forwards matches too.
const cacheEntryOverhead = 45

// NewCache returns a cache with a budget of maxBytes (Kafka's
// statestore.cache.max.bytes divided among the stream threads). 0 disables
// caching: every Put is flushed immediately.
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: max(maxBytes, 0), ns: map[string]*NamedCache{}}
}

// FlushEntry is one key's surviving update, handed to the flush callback.
// Slices are valid during the callback only.
type FlushEntry struct {
	Key      []byte
	NewValue []byte // nil: the key was deleted
	OldValue []byte // the underlying store's value before this flush; nil if absent
	// Timestamp and Context are those of the latest Put (the record context
	// Kafka forwards with the value).
	Timestamp int64
	Context   any
}

// Namespace returns the cache of one store, creating it on first use.
// old reads the underlying store (it supplies FlushEntry.OldValue); flush
// must write the entry to the store and forward it. Calling Namespace again
// for an existing name returns it unchanged.
func (c *Cache) Namespace(name string, old func(key []byte) ([]byte, bool, error), flush func(FlushEntry) error) *NamedCache {
	if n, ok := c.ns[name]; ok {
		return n
	}
	n := &NamedCache{c: c, name: name, old: old, flush: flush, m: map[string]*cacheEntry{}}
	n.lru.init()
	n.dirty.which = 1
	n.dirty.init()
	c.ns[name] = n
	return n
}

// Flush flushes every namespace (on commit), in name order for determinism.
func (c *Cache) Flush() error {
	names := make([]string, 0, len(c.ns))
	for k := range c.ns {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if err := c.ns[k].Flush(); err != nil {
			return err
		}
	}
	return nil
}

// Remove drops the namespace called name and its entries without flushing
// (its store is closing; Close drops staged writes too). A later Namespace
// call with that name creates a fresh namespace with new callbacks, as a
// re-opened store needs.
func (c *Cache) Remove(name string) {
	if n, ok := c.ns[name]; ok {
		n.Clear()
		delete(c.ns, name)
	}
}

// SizeBytes is the accounted size of all cached entries.
func (c *Cache) SizeBytes() int64 { return c.size }

// NamedCache is one store's part of a Cache.
type NamedCache struct {
	c     *Cache
	name  string
	old   func(key []byte) ([]byte, bool, error)
	flush func(FlushEntry) error
	m     map[string]*cacheEntry
	lru   entryList // front = least recently used
	dirty entryList // front = least recently updated dirty entry
	// flushing guards against evicting from the namespace while its flush
	// callback runs.
	flushing bool
	// skipOld: the flush callback needs no old values (SetOldValues).
	skipOld bool
	// last is the entry Get or Put found last, or nil: an aggregation
	// reads a key and then writes it, and Put finds it here instead of
	// looking it up in m again.
	last *cacheEntry
	// batch is Flush's scratch list of the entries it flushes.
	batch []*cacheEntry
	// groups orders the keys within each group (see EnableRanges); nil
	// without.
	groups  map[string]*[]*cacheEntry // nil until the first Range
	groupOf func(key []byte) int
	// scratch is Range's snapshot of the entries it visits.
	scratch []cacheKV
	// keyPrefix is counted per entry on top of its key (CountKeyPrefix).
	keyPrefix int64
}

// SetOldValues says whether the flush callback needs FlushEntry.OldValue
// (default true). Without, Flush reads the underlying store only for
// deleted keys, to drop keys created and deleted between two flushes, and
// OldValue is nil for updates: Kafka Streams' CachingKeyValueStore reads
// the old value only with sendOldValues or for a delete, and on Pebble that
// read is most of what a flush costs.
func (n *NamedCache) SetOldValues(need bool) { n.skipOld = !need }

type cacheEntry struct {
	key     []byte
	value   []byte
	ts      int64
	ctx     any
	ctxSize int32 // the bytes the record context counts (see PutContext)
	isDirty bool
	// lk are the entry's links in the LRU list (0) and the dirty list (1).
	lk [2]links
}

type links struct{ prev, next *cacheEntry }

// entryList is an intrusive doubly linked list; which links it uses is
// fixed at init.
type entryList struct {
	root  cacheEntry
	which int // index into cacheEntry.lk
}

func (l *entryList) init() { l.links(&l.root).prev, l.links(&l.root).next = &l.root, &l.root }

func (l *entryList) links(e *cacheEntry) *links { return &e.lk[l.which] }

func (l *entryList) pushBack(e *cacheEntry) {
	last := l.links(&l.root).prev
	l.links(e).prev, l.links(e).next = last, &l.root
	l.links(last).next = e
	l.links(&l.root).prev = e
}

func (l *entryList) remove(e *cacheEntry) {
	lk := l.links(e)
	l.links(lk.prev).next = lk.next
	l.links(lk.next).prev = lk.prev
	lk.prev, lk.next = nil, nil
}

func (l *entryList) front() *cacheEntry {
	if f := l.links(&l.root).next; f != &l.root {
		return f
	}
	return nil
}

func (n *NamedCache) entrySize(e *cacheEntry) int64 {
	return int64(len(e.key)+len(e.value)+int(e.ctxSize)+cacheEntryOverhead) + n.keyPrefix
}

// CountKeyPrefix makes the namespace count n more bytes per key: Kafka
// Streams' caches of window and session stores prefix every key with its
// 8-byte segment id, which keys here do without.
func (n *NamedCache) CountKeyPrefix(bytes int) { n.keyPrefix = int64(bytes) }

// Get returns the cached value: ok false if the key is not cached (read the
// store), ok true with nil value if it is cached as deleted. The slice must
// not be modified; it stays valid (the cache never writes into it).
func (n *NamedCache) Get(key []byte) (value []byte, ok bool) {
	e := n.m[string(key)]
	if e == nil {
		return nil, false
	}
	n.last = e
	n.lru.remove(e)
	n.lru.pushBack(e)
	return e.value, true
}

// Put caches value (nil = delete) as the key's latest update with its record
// timestamp and context, then evicts if the budget is exceeded. Key and value
// are copied. The error is a flush callback's error from an eviction.
func (n *NamedCache) Put(key, value []byte, ts int64, ctx any) error {
	return n.PutContext(key, value, ts, ctx, 0)
}

// PutContext is Put with the size of the record context that Kafka
// Streams counts in a cache entry: the characters of the record's topic
// and its headers' keys and values.
func (n *NamedCache) PutContext(key, value []byte, ts int64, ctx any, ctxSize int) error {
	e := n.last
	if e == nil || !bytes.Equal(e.key, key) {
		e = n.m[string(key)]
	}
	if e == nil {
		// One allocation for the key and a new key's value.
		e = &cacheEntry{}
		e.key, value = copyKeyValue(key, value, value == nil)
		n.m[bytesString(e.key)] = e // the key never changes
		n.lru.pushBack(e)
		n.addToGroup(e)
	} else {
		n.c.size -= n.entrySize(e)
		n.lru.remove(e)
		n.lru.pushBack(e)
		if e.isDirty {
			n.dirty.remove(e)
		}
		if value != nil {
			value = append(make([]byte, 0, len(value)), value...)
		}
	}
	e.value, e.ts, e.ctx, e.ctxSize, e.isDirty = value, ts, ctx, int32(ctxSize), true
	n.last = e
	n.dirty.pushBack(e)
	n.c.size += n.entrySize(e)
	return n.maybeEvict()
}

func (n *NamedCache) maybeEvict() error {
	for n.c.size > n.c.max && !n.flushing {
		e := n.lru.front()
		if e == nil {
			// What is left belongs to other namespaces; they evict on their
			// own writes (Kafka does the same).
			return nil
		}
		dirty := e.isDirty
		n.drop(e)
		if dirty {
			if err := n.flushAll(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (n *NamedCache) drop(e *cacheEntry) {
	if n.last == e {
		n.last = nil
	}
	n.lru.remove(e)
	if e.isDirty {
		n.dirty.remove(e)
	}
	delete(n.m, string(e.key))
	n.removeFromGroup(e)
	n.c.size -= n.entrySize(e)
}

// Flush hands every dirty entry to the flush callback (see Cache) and marks
// it clean; clean entries stay cached for reads, deleted ones leave.
func (n *NamedCache) Flush() error { return n.flushAll(nil) }

// flushAll is Flush after evicting the dirty entry evicted (nil: none),
// which is flushed first, as Kafka's NamedCache flushes an eviction.
func (n *NamedCache) flushAll(evicted *cacheEntry) error {
	if n.flushing || evicted == nil && n.dirty.front() == nil {
		return nil
	}
	batch := n.batch[:0]
	if evicted != nil {
		evicted.isDirty = false
		batch = append(batch, evicted)
	}
	for e := n.dirty.front(); e != nil; e = n.dirty.front() {
		n.dirty.remove(e)
		e.isDirty = false
		batch = append(batch, e)
	}
	n.flushing = true
	defer func() {
		clear(batch)
		n.batch, n.flushing = batch[:0], false
	}()
	for i, e := range batch {
		var old []byte
		had := false
		if !n.skipOld || e.value == nil {
			var err error
			if old, had, err = n.old(e.key); err != nil {
				n.redirty(batch[i:])
				return err
			}
		}
		if !had {
			old = nil
		}
		if e.value == nil && !had {
			// Created and deleted within one flush cycle: nothing to write
			// or forward.
			continue
		}
		if err := n.flush(FlushEntry{Key: e.key, NewValue: e.value, OldValue: old, Timestamp: e.ts, Context: e.ctx}); err != nil {
			n.redirty(batch[i:])
			return err
		}
	}
	for _, e := range batch {
		if e.value == nil && !e.isDirty && n.m[string(e.key)] == e {
			n.drop(e)
		}
	}
	return nil
}

// redirty puts entries whose flush did not happen back on the dirty list.
func (n *NamedCache) redirty(rest []*cacheEntry) {
	for _, e := range rest {
		if n.m[string(e.key)] == e && !e.isDirty {
			e.isDirty = true
			n.dirty.pushBack(e)
		}
	}
}

// EnableRanges lets Range visit the namespace's keys in order within
// groups: group returns the length of a key's group prefix. A window
// store's cache groups by the user key, whose windows a fetch visits in
// time order; keys of a group differ only after the prefix. The order is
// built at the first Range and kept from then on, so a namespace that is
// only read by key (a time-window aggregation's) never pays for it.
func (n *NamedCache) EnableRanges(group func(key []byte) int) { n.groupOf = group }

// buildGroups orders the keys cached so far, for the first Range.
func (n *NamedCache) buildGroups() {
	n.groups = map[string]*[]*cacheEntry{}
	for _, e := range n.m {
		g := string(e.key[:n.groupOf(e.key)])
		es := n.groups[g]
		if es == nil {
			es = new([]*cacheEntry)
			n.groups[g] = es
		}
		*es = append(*es, e)
	}
	for _, es := range n.groups {
		slices.SortFunc(*es, func(a, b *cacheEntry) int { return bytes.Compare(a.key, b.key) })
	}
}

func (n *NamedCache) addToGroup(e *cacheEntry) {
	if n.groups == nil {
		return
	}
	g := string(e.key[:n.groupOf(e.key)])
	es := n.groups[g]
	if es == nil {
		es = new([]*cacheEntry)
		n.groups[g] = es
	}
	i, _ := slices.BinarySearchFunc(*es, e.key, func(x *cacheEntry, k []byte) int { return bytes.Compare(x.key, k) })
	*es = slices.Insert(*es, i, e)
}

func (n *NamedCache) removeFromGroup(e *cacheEntry) {
	if n.groups == nil {
		return
	}
	g := string(e.key[:n.groupOf(e.key)])
	es := n.groups[g]
	if es == nil {
		return
	}
	if i, ok := slices.BinarySearchFunc(*es, e.key, func(x *cacheEntry, k []byte) int { return bytes.Compare(x.key, k) }); ok {
		*es = slices.Delete(*es, i, i+1)
	}
	if len(*es) == 0 {
		delete(n.groups, g)
	}
}

type cacheKV struct{ k, v []byte }

// Range visits the cached entries of the group of lower (which upper
// shares) with keys in [lower, upper], ascending or, with reverse,
// descending; a nil value is a cached delete. Each visited entry becomes
// the most recently used, as Kafka's cache iterators make it. The entries
// are taken before fn is first called, so fn may write to the cache. It
// needs EnableRanges.
func (n *NamedCache) Range(lower, upper []byte, reverse bool, fn func(key, value []byte) error) error {
	if n.groups == nil {
		n.buildGroups()
	}
	es := n.groups[string(lower[:n.groupOf(lower)])]
	if es == nil {
		return nil
	}
	cmpKey := func(x *cacheEntry, k []byte) int { return bytes.Compare(x.key, k) }
	i, _ := slices.BinarySearchFunc(*es, lower, cmpKey)
	j, found := slices.BinarySearchFunc(*es, upper, cmpKey)
	if found {
		j++
	}
	snap := n.scratch[:0]
	n.scratch = nil // a Range inside fn takes its own
	defer func() { clear(snap); n.scratch = snap[:0] }()
	for _, e := range (*es)[i:max(i, j)] {
		n.lru.remove(e)
		n.lru.pushBack(e)
		snap = append(snap, cacheKV{e.key, e.value})
	}
	for k := range snap {
		if reverse {
			k = len(snap) - 1 - k
		}
		if err := fn(snap[k].k, snap[k].v); err != nil {
			return err
		}
	}
	return nil
}

// Clear drops every entry, dirty or clean, without flushing: call it when the
// store's staged writes are aborted, since clean entries may reflect writes
// that are being rolled back.
func (n *NamedCache) Clear() {
	for e := n.lru.front(); e != nil; e = n.lru.front() {
		n.drop(e)
	}
}

// Len is the number of cached keys.
func (n *NamedCache) Len() int { return len(n.m) }

// Dirty is the number of keys waiting for a flush.
func (n *NamedCache) Dirty() int {
	c := 0
	for e := n.dirty.front(); e != nil; e = n.dirty.links(e).next {
		if e == &n.dirty.root {
			break
		}
		c++
	}
	return c
}

// Each visits every cached entry, in no order and without touching the
// LRU order; a nil value is a cached delete. The entries are taken before
// fn is first called. Window stores' time-ordered reads use it, which are
// rare enough (emit-on-close emissions, interactive queries) to sort what
// they collect.
func (n *NamedCache) Each(fn func(key, value []byte) error) error {
	snap := make([]cacheKV, 0, len(n.m))
	for _, e := range n.m {
		snap = append(snap, cacheKV{e.key, e.value})
	}
	for _, e := range snap {
		if err := fn(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}
