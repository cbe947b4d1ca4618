package sgstream

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode/utf16"

	"github.com/streamgen/streamgen/runtime/sgstate"
)

// Window and session stores behind the record cache: Kafka Streams'
// CachingWindowStore and CachingSessionStore. A put stays in the task's
// cache, dirty, until the cache flushes (at commit, or when the namespace
// evicts a dirty entry); the flush writes the latest value of each
// windowed key to the store and hands it to the flush listener, which the
// windowed aggregation sets to forward it (Kafka's TimestampedCacheFlushListener
// and SessionCacheFlushListener). So updates of one window between two
// flushes reach downstream as one record, as in Kafka Streams.
//
// Reads merge the cache with the store, the cache winning for a window
// both hold (a cached delete hides the store's window). As in Kafka, the
// store's retention applies to what the store holds, with the store's
// observed stream time, which a cached put does not advance until it is
// flushed; cached windows are shown whatever their age.
//
// Cache keys are the user key, then the window's time fields, 8 bytes each
// with the sign bit flipped so that they sort like the numbers: start and
// a 4-byte seqnum for a window (Kafka's window key layout), end and start
// for a session. The namespace groups them by user key, so a fetch visits
// one key's cached windows in time order.

// cachedStore is a store behind the record cache, as FlushCaches sees it.
type cachedStore interface {
	Name() string
	namespace() *sgstate.NamedCache
	position() int
}

// cachedBase is what the cached stores share: their namespace of the
// task's cache, their place in the flush order, and the capabilities they
// pass through to the store underneath.
type cachedBase struct {
	inner sgstate.Store
	t     *task
	rc    *recordCache
	ns    *sgstate.NamedCache
	order int // topological position of the store's first node
	// headers are those of the record whose updates the next puts of a
	// window or session store are (setHeaders), forwarded with them when
	// they are flushed.
	headers []Header
}

func (c *cachedBase) setHeaders(h []Header) { c.headers = h }

func (c *cachedBase) namespace() *sgstate.NamedCache { return c.ns }
func (c *cachedBase) position() int                  { return c.order }

func (c *cachedBase) Commit(checkpoint map[string]int64) error {
	return c.inner.(sgstate.Transactional).Commit(checkpoint)
}

// Abort drops the store's cached entries, dirty and clean, since clean
// ones may reflect writes being rolled back, then aborts the store.
func (c *cachedBase) Abort() error {
	c.ns.Clear()
	return c.inner.(sgstate.Transactional).Abort()
}

// UncommittedBytes is the store's below the cache: the cache has a bound
// of its own.
func (c *cachedBase) UncommittedBytes() int64 {
	if u, ok := c.inner.(sgstate.UncommittedSizer); ok {
		return u.UncommittedBytes()
	}
	return 0
}

func (c *cachedBase) Checkpoint() (map[string]int64, error) {
	return c.inner.(sgstate.Transactional).Checkpoint()
}

func (c *cachedBase) RestoreBatch(records []sgstate.ChangelogRecord) error {
	r, ok := c.inner.(sgstate.Restorer)
	if !ok {
		return fmt.Errorf("streamgen: store %q cannot restore", c.inner.Name())
	}
	return r.RestoreBatch(records)
}

func (c *cachedBase) Metadata(key string) ([]byte, bool, error) {
	m, ok := c.inner.(sgstate.MetadataStore)
	if !ok {
		return nil, false, nil
	}
	return m.Metadata(key)
}

func (c *cachedBase) SetMetadata(key string, value []byte) error {
	m, ok := c.inner.(sgstate.MetadataStore)
	if !ok {
		return fmt.Errorf("streamgen: store %q keeps no metadata", c.inner.Name())
	}
	return m.SetMetadata(key, value)
}

// close drops the store's namespace without flushing, as closing drops
// staged writes, forgets the cache once its last store is gone, and closes
// the store.
func (c *cachedBase) close(self cachedStore) error {
	c.rc.c.Remove(c.inner.Name())
	c.rc.stores = slices.DeleteFunc(c.rc.stores, func(s cachedStore) bool { return s == self })
	if len(c.rc.stores) == 0 && c.t.cache == c.rc {
		c.t.cache = nil
	}
	return c.inner.Close()
}

// namespaceOf gives a window or session store its namespace of the task's
// cache: cache keys are the user key and fields bytes of window fields, so
// a group (for ranges) is a user key; Kafka's cache keys of these stores
// start with the 8-byte segment id, which the namespace counts.
func (c *cachedBase) namespaceOf(store string, old func([]byte) ([]byte, bool, error), flush func(sgstate.FlushEntry) error, fields int) {
	c.ns = c.rc.c.Namespace(store, old, flush)
	c.ns.EnableRanges(func(ck []byte) int { return len(ck) - fields })
	c.ns.CountKeyPrefix(8)
}

// put caches value (nil: a delete) under the record context of the record
// being processed and the headers the operator set (see setHeaders).
func (c *cachedBase) put(ck, value []byte, headers []Header) error {
	return c.ns.PutContext(ck, value, c.t.contextTimestamp(), headers, c.t.contextSize(headers))
}

// contextSize is what Kafka Streams counts of a record context in a cache
// entry (ProcessorRecordContext.residentMemorySizeEstimate beyond its
// fixed fields): the characters of the record's topic, and of its
// headers' keys, and the bytes of their values.
func (t *task) contextSize(headers []Header) int {
	n := 0
	if r := t.Current(); r != nil {
		n += utf16Len(r.Topic)
	}
	for _, h := range headers {
		n += utf16Len(h.Key) + len(h.Value)
	}
	return n
}

// utf16Len is the length of s in UTF-16 code units, Java's String.length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// enterContext makes ts the record context's timestamp while a flushed
// entry is written to the store underneath, as Kafka's caching stores set
// the entry's record context: a store that stamps its changelog records
// with the context's timestamp (a session store) logs the update's, not
// the flushing record's. leaveContext restores what enterContext returns.
func (c *cachedBase) enterContext(ts int64) (prev int64, had bool) {
	prev, had = c.t.ctxTs, c.t.hasCtxTs
	c.t.ctxTs, c.t.hasCtxTs = ts, true
	return prev, had
}

func (c *cachedBase) leaveContext(prev int64, had bool) { c.t.ctxTs, c.t.hasCtxTs = prev, had }

// headersOf is the headers a flushed entry carries.
func headersOf(e sgstate.FlushEntry) []Header {
	h, _ := e.Context.([]Header)
	return h
}

func appendFlipped(dst []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(t)^(1<<63))
}

func readFlipped(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// posEntry is a cached window or session at its position in a read's
// order, with its value (nil: a cached delete).
type posEntry[P any] struct {
	pos   P
	value []byte
}

// mergeCached visits what store pushes, in the read's order, merged with
// cached, the cache's entries in the same order (cmp orders positions as
// the read goes): a cached entry hides the store's at its position, and a
// cached delete shows nothing there (Kafka's merged cache/store iterators).
func mergeCached[P any](cached []posEntry[P], cmp func(a, b P) int, store func(fn func(p P, v []byte) error) error, fn func(p P, v []byte) error) error {
	i := 0
	// emit visits the cached entries before p, all of them when p is nil.
	emit := func(p *P) error {
		for ; i < len(cached) && (p == nil || cmp(cached[i].pos, *p) < 0); i++ {
			if cached[i].value != nil {
				if err := fn(cached[i].pos, cached[i].value); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := store(func(p P, v []byte) error {
		if err := emit(&p); err != nil {
			return err
		}
		if i < len(cached) && cmp(cached[i].pos, p) == 0 {
			e := cached[i]
			i++
			if e.value == nil {
				return nil
			}
			return fn(e.pos, e.value)
		}
		return fn(p, v)
	})
	if err != nil {
		return err
	}
	return emit(nil)
}

// reversed returns cmp for a read in descending order.
func reversed[P any](cmp func(a, b P) int) func(a, b P) int {
	return func(a, b P) int { return cmp(b, a) }
}

// cachedWindow is a window store behind the record cache.
type cachedWindow struct {
	sgstate.WindowStore
	cachedBase
	// listener gets each flushed window: its key, start, new and old
	// value (nil: none) and the timestamp and headers of its last update.
	listener func(key []byte, start int64, newRaw, oldRaw []byte, ts int64, headers []Header) error
	kbuf     []byte
	entries  []posEntry[int64]
}

var _ sgstate.StateStore = (*cachedWindow)(nil)

func newCachedWindow(ws sgstate.WindowStore, base cachedBase) *cachedWindow {
	c := &cachedWindow{WindowStore: ws, cachedBase: base}
	c.inner = ws
	c.namespaceOf(ws.Name(), c.old, c.flushEntry, 12)
	return c
}

// windowKey is the cache key of key's window starting at start.
func windowKey(dst, key []byte, start int64) []byte {
	return binary.BigEndian.AppendUint32(appendFlipped(append(dst, key...), start), 0)
}

func parseWindowKey(ck []byte) (key []byte, start int64) {
	n := len(ck) - 12
	return ck[:n], readFlipped(ck[n:])
}

func (c *cachedWindow) Put(key []byte, start int64, value []byte) error {
	c.kbuf = windowKey(c.kbuf[:0], key, start)
	return c.put(c.kbuf, value, c.headers)
}

// old reads the store's value of a cached window for the flush.
func (c *cachedWindow) old(ck []byte) ([]byte, bool, error) {
	key, start := parseWindowKey(ck)
	return getWindow(c.WindowStore, key, start)
}

func (c *cachedWindow) flushEntry(e sgstate.FlushEntry) error {
	key, start := parseWindowKey(e.Key)
	prev, had := c.enterContext(e.Timestamp)
	err := c.WindowStore.Put(key, start, e.NewValue)
	c.leaveContext(prev, had)
	if err != nil || c.listener == nil {
		return err
	}
	return c.listener(key, start, e.NewValue, e.OldValue, e.Timestamp, headersOf(e))
}

// Get implements sgstate.WindowGetter: the cached window, else the
// store's.
func (c *cachedWindow) Get(key []byte, start int64) ([]byte, bool, error) {
	v, ok, err := c.View(key, start)
	if ok {
		v = bytes.Clone(v)
	}
	return v, ok, err
}

// View implements sgstate.WindowViewer: Get without the copy of a cached
// value (the cache never writes into its values).
func (c *cachedWindow) View(key []byte, start int64) ([]byte, bool, error) {
	c.kbuf = windowKey(c.kbuf[:0], key, start)
	if v, ok := c.ns.Get(c.kbuf); ok {
		return v, v != nil, nil
	}
	return viewWindow(c.WindowStore, key, start)
}

func (c *cachedWindow) Fetch(key []byte, from, to int64, fn func(start int64, value []byte) error) error {
	return c.fetch(key, from, to, false, fn)
}

func (c *cachedWindow) BackwardFetch(key []byte, from, to int64, fn func(start int64, value []byte) error) error {
	return c.fetch(key, from, to, true, fn)
}

func (c *cachedWindow) fetch(key []byte, from, to int64, reverse bool, fn func(int64, []byte) error) error {
	if from > to {
		return nil
	}
	lower := windowKey(nil, key, from)
	upper := windowKey(nil, key, to)
	cached := c.entries[:0]
	c.entries = nil // a fetch inside fn takes its own
	err := c.ns.Range(lower, upper, reverse, func(ck, v []byte) error {
		_, start := parseWindowKey(ck)
		cached = append(cached, posEntry[int64]{start, v})
		return nil
	})
	if err != nil {
		return err
	}
	order := cmp.Compare[int64]
	store := c.WindowStore.Fetch
	if reverse {
		order, store = reversed(order), c.WindowStore.BackwardFetch
	}
	err = mergeCached(cached, order, func(fn func(int64, []byte) error) error { return store(key, from, to, fn) }, fn)
	clear(cached)
	c.entries = cached[:0]
	return err
}

// windowPos is a window's position in FetchAll's order.
type windowPos struct {
	start int64
	key   []byte
}

func compareWindowPos(a, b windowPos) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return bytes.Compare(a.key, b.key)
}

func (c *cachedWindow) FetchAll(from, to int64, fn func(key []byte, start int64, value []byte) error) error {
	return mergeAllCached(c.ns,
		func(ck []byte) (windowPos, bool) {
			key, start := parseWindowKey(ck)
			return windowPos{start, key}, start >= from && start <= to
		},
		compareWindowPos,
		func(fn func(windowPos, []byte) error) error {
			return c.WindowStore.FetchAll(from, to, func(key []byte, start int64, v []byte) error { return fn(windowPos{start, key}, v) })
		},
		func(p windowPos, v []byte) error { return fn(p.key, p.start, v) })
}

// mergeAllCached is mergeCached for the time-ordered reads over every key
// (FetchAll, FetchEndedBetween): pick places each cached entry in the
// read's order, or leaves it out; the entries picked are sorted first.
// These reads are rare (emit-on-close emissions, interactive queries), so
// they go over the whole namespace rather than keep it in time order.
func mergeAllCached[P any](ns *sgstate.NamedCache, pick func(ck []byte) (P, bool), cmp func(a, b P) int, store func(fn func(P, []byte) error) error, fn func(P, []byte) error) error {
	var cached []posEntry[P]
	err := ns.Each(func(ck, v []byte) error {
		if p, ok := pick(ck); ok {
			cached = append(cached, posEntry[P]{p, v})
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(cached, func(a, b posEntry[P]) int { return cmp(a.pos, b.pos) })
	return mergeCached(cached, cmp, store, fn)
}

func (c *cachedWindow) Close() error { return c.close(c) }

// cachedSession is a session store behind the record cache.
type cachedSession struct {
	sgstate.SessionStore
	cachedBase
	listener func(key []byte, start, end int64, newRaw, oldRaw []byte, headers []Header) error
	kbuf     []byte
}

var _ sgstate.StateStore = (*cachedSession)(nil)

func newCachedSession(ss sgstate.SessionStore, base cachedBase) *cachedSession {
	c := &cachedSession{SessionStore: ss, cachedBase: base}
	c.inner = ss
	c.namespaceOf(ss.Name(), c.old, c.flushEntry, 16)
	return c
}

// sessionKey is the cache key of key's session [start, end]: Kafka's
// session key order, by end, then start.
func sessionKey(dst, key []byte, start, end int64) []byte {
	return appendFlipped(appendFlipped(append(dst, key...), end), start)
}

func parseSessionKey(ck []byte) (key []byte, start, end int64) {
	n := len(ck) - 16
	return ck[:n], readFlipped(ck[n+8:]), readFlipped(ck[n:])
}

func (c *cachedSession) Put(key []byte, start, end int64, value []byte) error {
	c.kbuf = sessionKey(c.kbuf[:0], key, start, end)
	return c.put(c.kbuf, value, c.headers)
}

func (c *cachedSession) Remove(key []byte, start, end int64) error {
	return c.Put(key, start, end, nil)
}

// old reads the store's value of a cached session for the flush.
func (c *cachedSession) old(ck []byte) (v []byte, found bool, err error) {
	key, start, end := parseSessionKey(ck)
	err = c.SessionStore.FindSessions(key, end, start, func(s, e int64, b []byte) error {
		if s == start && e == end {
			v, found = bytes.Clone(b), true
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	return v, found, err
}

func (c *cachedSession) flushEntry(e sgstate.FlushEntry) error {
	key, start, end := parseSessionKey(e.Key)
	prev, had := c.enterContext(e.Timestamp)
	err := c.SessionStore.Put(key, start, end, e.NewValue)
	c.leaveContext(prev, had)
	if err != nil || c.listener == nil {
		return err
	}
	return c.listener(key, start, end, e.NewValue, e.OldValue, headersOf(e))
}

// sessionPos is a session's position in FindSessions' order (by end,
// then start) or, with the key, FetchEndedBetween's (by end, key, start).
type sessionPos struct {
	end, start int64
	key        []byte
}

func compareSessionPos(a, b sessionPos) int {
	if c := cmp.Compare(a.end, b.end); c != 0 {
		return c
	}
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.start, b.start)
}

func (c *cachedSession) FindSessions(key []byte, earliestEnd, latestStart int64, fn func(start, end int64, value []byte) error) error {
	var cached []posEntry[sessionPos]
	err := c.ns.Range(sessionKey(nil, key, math.MinInt64, earliestEnd), sessionKey(nil, key, math.MaxInt64, math.MaxInt64), false,
		func(ck, v []byte) error {
			if _, start, end := parseSessionKey(ck); start <= latestStart {
				cached = append(cached, posEntry[sessionPos]{sessionPos{end: end, start: start}, v})
			}
			return nil
		})
	if err != nil {
		return err
	}
	return mergeCached(cached, compareSessionPos,
		func(fn func(sessionPos, []byte) error) error {
			return c.SessionStore.FindSessions(key, earliestEnd, latestStart, func(start, end int64, v []byte) error {
				return fn(sessionPos{end: end, start: start}, v)
			})
		},
		func(p sessionPos, v []byte) error { return fn(p.start, p.end, v) })
}

func (c *cachedSession) FetchEndedBetween(endFrom, endTo int64, fn func(key []byte, start, end int64, value []byte) error) error {
	return mergeAllCached(c.ns,
		func(ck []byte) (sessionPos, bool) {
			key, start, end := parseSessionKey(ck)
			return sessionPos{end, start, key}, end >= endFrom && end <= endTo
		},
		compareSessionPos,
		func(fn func(sessionPos, []byte) error) error {
			return c.SessionStore.FetchEndedBetween(endFrom, endTo, func(key []byte, start, end int64, v []byte) error {
				return fn(sessionPos{end, start, key}, v)
			})
		},
		func(p sessionPos, v []byte) error { return fn(p.key, p.start, p.end, v) })
}

func (c *cachedSession) Close() error { return c.close(c) }
