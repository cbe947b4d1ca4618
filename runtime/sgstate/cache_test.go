package sgstate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// cacheHarness wires a NamedCache to a memory KV store the way the graph
// does: flush writes to the store and records what would be forwarded.
type cacheHarness struct {
	store     KeyValueStore
	forwarded []string
}

func newCacheHarness(t *testing.T, c *Cache, name string) (*cacheHarness, *NamedCache) {
	h := &cacheHarness{store: NewMemoryKeyValue(name)}
	mustNoErr(t, h.store.Init(&StoreContext{}))
	nc := c.Namespace(name, h.store.Get, func(e FlushEntry) error {
		h.forwarded = append(h.forwarded, fmt.Sprintf("%s:%s<-%s@%d/%v", e.Key, nv(e.NewValue), nv(e.OldValue), e.Timestamp, e.Context))
		return h.store.Put(e.Key, e.NewValue)
	})
	return h, nc
}

func nv(b []byte) string {
	if b == nil {
		return "nil"
	}
	return string(b)
}

func (h *cacheHarness) take() string {
	s := strings.Join(h.forwarded, " ")
	h.forwarded = nil
	return s
}

func TestCacheCoalescesUntilFlush(t *testing.T) {
	c := NewCache(1 << 20)
	h, nc := newCacheHarness(t, c, "counts")
	mustNoErr(t, nc.Put([]byte("a"), []byte("1"), 10, "r1"))
	mustNoErr(t, nc.Put([]byte("b"), []byte("1"), 11, "r2"))
	mustNoErr(t, nc.Put([]byte("a"), []byte("2"), 12, "r3"))
	mustNoErr(t, nc.Put([]byte("x"), []byte("1"), 13, "r4"))
	mustNoErr(t, nc.Put([]byte("x"), nil, 14, "r5")) // created and deleted: skipped
	if h.take() != "" {
		t.Fatal("forwarded before flush")
	}
	if v, ok := nc.Get([]byte("a")); !ok || string(v) != "2" {
		t.Fatalf("cached read = %q %v", v, ok)
	}
	if v, ok := nc.Get([]byte("x")); !ok || v != nil {
		t.Fatalf("cached delete = %q %v", v, ok)
	}
	mustNoErr(t, c.Flush())
	// Latest value per key, in the order keys were last updated, with the
	// record context of the last update.
	if got := h.take(); got != "b:1<-nil@11/r2 a:2<-nil@12/r3" {
		t.Fatalf("first flush: %s", got)
	}
	// Next cycle: old values come from the store; a delete of an existing
	// key is forwarded.
	mustNoErr(t, nc.Put([]byte("a"), []byte("3"), 20, nil))
	mustNoErr(t, nc.Put([]byte("b"), nil, 21, nil))
	mustNoErr(t, nc.Flush())
	if got := h.take(); got != "a:3<-2@20/<nil> b:nil<-1@21/<nil>" {
		t.Fatalf("second flush: %s", got)
	}
	mustNoErr(t, nc.Flush())
	if got := h.take(); got != "" {
		t.Fatalf("empty flush forwarded %s", got)
	}
	// Deleted keys left the cache with the flush that wrote them (b) or
	// skipped them (x), as in Kafka's NamedCache.
	if nc.Dirty() != 0 || nc.Len() != 1 {
		t.Fatalf("dirty=%d len=%d", nc.Dirty(), nc.Len())
	}
}

func TestCacheEvictionFlushesNamespace(t *testing.T) {
	// Room for exactly three 1-byte-key, 1-byte-value entries.
	c := NewCache(3 * (2 + cacheEntryOverhead))
	h, nc := newCacheHarness(t, c, "s1")
	h2, nc2 := newCacheHarness(t, c, "s2")
	mustNoErr(t, nc2.Put([]byte("z"), []byte("9"), 1, nil))
	mustNoErr(t, nc.Put([]byte("a"), []byte("1"), 2, nil))
	mustNoErr(t, nc.Put([]byte("b"), []byte("1"), 3, nil))
	if h.take() != "" || h2.take() != "" {
		t.Fatal("flushed within budget")
	}
	_, _ = nc.Get([]byte("a")) // a is now more recently used than b
	// Over budget: s1 evicts its LRU entry b, which is dirty, so all of s1
	// is flushed, b first (Kafka's order); s2 is untouched.
	mustNoErr(t, nc.Put([]byte("c"), []byte("1"), 4, nil))
	if got := h.take(); got != "b:1<-nil@3/<nil> a:1<-nil@2/<nil> c:1<-nil@4/<nil>" {
		t.Fatalf("eviction flush: %s", got)
	}
	if h2.take() != "" || nc2.Dirty() != 1 {
		t.Fatal("other namespace flushed")
	}
	if _, ok := nc.Get([]byte("b")); ok {
		t.Fatal("evicted entry still cached")
	}
	if _, ok := nc.Get([]byte("a")); !ok {
		t.Fatal("recently used entry evicted")
	}
	if c.SizeBytes() > 3*(2+cacheEntryOverhead) {
		t.Fatalf("size %d over budget", c.SizeBytes())
	}
	// Evicting a clean entry does not flush.
	mustNoErr(t, nc.Put([]byte("d"), []byte("1"), 5, nil))
	if got := h.take(); got != "" {
		t.Fatalf("clean eviction flushed: %s", got)
	}
}

func TestCacheZeroIsPassThrough(t *testing.T) {
	c := NewCache(0)
	h, nc := newCacheHarness(t, c, "s")
	mustNoErr(t, nc.Put([]byte("a"), []byte("1"), 1, nil))
	mustNoErr(t, nc.Put([]byte("a"), []byte("2"), 2, nil))
	mustNoErr(t, nc.Put([]byte("n"), nil, 3, nil))
	if got := h.take(); got != "a:1<-nil@1/<nil> a:2<-1@2/<nil>" {
		t.Fatalf("pass-through: %s", got)
	}
	if nc.Len() != 0 || c.SizeBytes() != 0 {
		t.Fatalf("len=%d size=%d", nc.Len(), c.SizeBytes())
	}
}

func TestCacheFlushErrorKeepsEntriesDirty(t *testing.T) {
	c := NewCache(1 << 20)
	fail := errors.New("boom")
	calls := 0
	nc := c.Namespace("s", func([]byte) ([]byte, bool, error) { return nil, false, nil }, func(FlushEntry) error {
		calls++
		if calls == 2 {
			return fail
		}
		return nil
	})
	for _, k := range []string{"a", "b", "c"} {
		mustNoErr(t, nc.Put([]byte(k), []byte("v"), 0, nil))
	}
	if err := nc.Flush(); err != fail {
		t.Fatalf("err = %v", err)
	}
	if nc.Dirty() != 2 {
		t.Fatalf("dirty after failed flush = %d, want 2", nc.Dirty())
	}
	mustNoErr(t, nc.Flush())
	if calls != 4 {
		t.Fatalf("calls = %d", calls)
	}
	nc.Clear()
	if nc.Len() != 0 || c.SizeBytes() != 0 {
		t.Fatal("clear left entries")
	}
}

func TestCacheRemoveDropsNamespace(t *testing.T) {
	c := NewCache(1 << 20)
	h, nc := newCacheHarness(t, c, "s")
	mustNoErr(t, nc.Put([]byte("a"), []byte("1"), 1, nil))
	c.Remove("s")
	if c.SizeBytes() != 0 {
		t.Fatalf("size after Remove = %d, want 0", c.SizeBytes())
	}
	mustNoErr(t, c.Flush())
	if got := h.take(); got != "" {
		t.Fatalf("removed namespace flushed: %s", got)
	}
	// The name is free again, with the new callbacks.
	h2, nc2 := newCacheHarness(t, c, "s")
	if nc2 == nc {
		t.Fatal("Namespace returned the removed namespace")
	}
	mustNoErr(t, nc2.Put([]byte("b"), []byte("2"), 2, nil))
	mustNoErr(t, c.Flush())
	if got := h2.take(); got != "b:2<-nil@2/<nil>" {
		t.Fatalf("new namespace flushed %q", got)
	}
	c.Remove("unknown") // no-op
}

// Without old values a flush reads the store only for deletes: updates
// carry no old value, a key created and deleted between flushes is still
// skipped, and a delete of a stored key still gets its old value.
func TestCacheWithoutOldValues(t *testing.T) {
	c := NewCache(1 << 20)
	h, nc := newCacheHarness(t, c, "counts")
	mustNoErr(t, nc.Put([]byte("a"), []byte("1"), 10, nil))
	mustNoErr(t, nc.Put([]byte("b"), []byte("1"), 11, nil))
	mustNoErr(t, c.Flush())
	h.take()
	nc.SetOldValues(false)
	mustNoErr(t, nc.Put([]byte("a"), []byte("2"), 12, nil))
	mustNoErr(t, nc.Put([]byte("b"), nil, 13, nil))
	mustNoErr(t, nc.Put([]byte("x"), []byte("1"), 14, nil))
	mustNoErr(t, nc.Put([]byte("x"), nil, 15, nil))
	mustNoErr(t, c.Flush())
	if got := h.take(); got != "a:2<-nil@12/<nil> b:nil<-1@13/<nil>" {
		t.Fatalf("flushed %q", got)
	}
	nc.SetOldValues(true)
	mustNoErr(t, nc.Put([]byte("a"), []byte("3"), 16, nil))
	mustNoErr(t, c.Flush())
	if got := h.take(); got != "a:3<-2@16/<nil>" {
		t.Fatalf("flushed %q", got)
	}
}

// Range visits one group's cached keys in order within inclusive bounds,
// cached deletes included, forward and backward; it makes the visited
// entries the most recently used, so eviction passes them over; and fn
// may write to the cache while it runs.
func TestCacheRange(t *testing.T) {
	// Room for six entries of a 2-byte key and a 1-byte value.
	c := NewCache(6 * (3 + cacheEntryOverhead))
	h, nc := newCacheHarness(t, c, "w")
	nc.EnableRanges(func(k []byte) int { return 1 }) // group: the first byte
	for _, k := range []string{"a3", "b1", "a1", "a5", "a2"} {
		mustNoErr(t, nc.Put([]byte(k), []byte(k[1:]), 1, nil))
	}
	mustNoErr(t, nc.Put([]byte("a4"), nil, 2, nil))
	visit := func(lower, upper string, reverse bool) string {
		var out []string
		mustNoErr(t, nc.Range([]byte(lower), []byte(upper), reverse, func(k, v []byte) error {
			out = append(out, string(k)+"="+nv(v))
			return nil
		}))
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		lower, upper string
		reverse      bool
		want         string
	}{
		{"a2", "a4", false, "a2=2 a3=3 a4=nil"},
		{"a2", "a4", true, "a4=nil a3=3 a2=2"},
		{"a0", "a9", false, "a1=1 a2=2 a3=3 a4=nil a5=5"},
		{"a6", "a9", false, ""},
		{"b0", "b9", false, "b1=1"},
		{"c0", "c9", false, ""},
		{"a3", "a3", false, "a3=3"},
	} {
		if got := visit(c.lower, c.upper, c.reverse); got != c.want {
			t.Errorf("Range(%s, %s, reverse %v) = %q, want %q", c.lower, c.upper, c.reverse, got, c.want)
		}
	}
	mustNoErr(t, nc.Flush())
	h.take()
	// The LRU order is now b1 (least recent), then a1..a5 as visited last
	// by the range over a3 alone: a1 a2 a4 a5 a3. a4 left with the flush.
	visit("b1", "b1", false)
	mustNoErr(t, nc.Put([]byte("c1"), []byte("x"), 3, nil))
	mustNoErr(t, nc.Put([]byte("c2"), []byte("y"), 4, nil))
	if got := visit("a0", "a9", false); got != "a2=2 a3=3 a5=5" {
		t.Fatalf("after evictions: %q, want a1 evicted first", got)
	}
	// Writes from inside Range's callback.
	mustNoErr(t, nc.Range([]byte("a0"), []byte("a9"), false, func(k, v []byte) error {
		return nc.Put(append([]byte("a"), k[1]+1), v, 5, nil)
	}))
	if got := visit("a0", "a9", false); got != "a2=2 a3=2 a4=3 a5=5 a6=5" {
		t.Fatalf("after writes in Range: %q", got)
	}
}
