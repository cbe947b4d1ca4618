package sgstream

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// windowedCounts are the windowed aggregations of the cache tests, each
// counting one stream by key and writing every update to "out" as
// key@start-end=count@timestamp.
var windowedCounts = []struct {
	name  string
	build func(b *Builder)
}{
	{"tumbling-grace", func(b *Builder) {
		w := TimeWindows{Size: 100 * time.Millisecond, Grace: 50 * time.Millisecond}
		countUpdatesOut(b, CountWindowed(WindowedBy(groupedIn(b), "w", w), "count", "store", EmitOnUpdate))
	}},
	{"hopping", func(b *Builder) {
		w := TimeWindows{Size: 100 * time.Millisecond, Advance: 40 * time.Millisecond}
		countUpdatesOut(b, CountWindowed(WindowedBy(groupedIn(b), "w", w), "count", "store", EmitOnUpdate))
	}},
	{"sliding", func(b *Builder) {
		w := SlidingWindows{TimeDifference: 50 * time.Millisecond, Grace: 30 * time.Millisecond}
		countUpdatesOut(b, CountWindowed(WindowedBySliding(groupedIn(b), "w", w), "count", "store", EmitOnUpdate))
	}},
	{"session", func(b *Builder) {
		// A retention well past gap + grace: with Kafka's (the default), a
		// session ending exactly at the close time has left the store but
		// not the cache, and a record merges with it only with the cache,
		// as in Kafka Streams (the conformance suite compares that case).
		w := SessionWindows{Gap: 30 * time.Millisecond, Grace: 20 * time.Millisecond, Retention: 200 * time.Millisecond}
		countUpdatesOut(b, CountSession(WindowedBySession(groupedIn(b), "w", w), "count", "store", EmitOnUpdate))
	}},
	{"tumbling-on-close", func(b *Builder) {
		w := TimeWindows{Size: 100 * time.Millisecond, Grace: 20 * time.Millisecond}
		countUpdatesOut(b, CountWindowed(WindowedBy(groupedIn(b), "w", w), "count", "store", EmitOnClose))
	}},
}

func groupedIn(b *Builder) GroupedStream[string, string] {
	return GroupByKey(Source(b, "src", strSrc("in")), serdes.String, serdes.String)
}

// countUpdatesOut writes a windowed count's updates to "out", the window in
// the key and tombstones as null.
func countUpdatesOut(b *Builder, tbl Table[Windowed[string], int64]) {
	tbl.to(nodeFunc[Windowed[string], tableChange[int64]](func(r Record[Windowed[string], tableChange[int64]]) error {
		v := []byte(fmt.Sprint(r.Value.New))
		if r.Value.NewNull {
			v = nil
		}
		return b.task.Send("out", 0, fmt.Appendf(nil, "%s@%d-%d", r.Key.Key, r.Key.Start, r.Key.End), v, r.Timestamp, r.Headers, nil)
	}))
}

// windowTask runs build as one task whose stores are in memory or, with
// pebble, on Pebble, with a record cache of cacheBytes (0: none).
func windowTask(t *testing.T, build func(*Builder), pebble bool, cacheBytes int64) (*task, *captured) {
	t.Helper()
	dc := engine.DriverConfig{}
	if pebble {
		dc.StateDir = t.TempDir()
	}
	tp, err := newTopology("app", build)
	if err != nil {
		t.Fatal(err)
	}
	stores, err := newTestDriver(tp, dc)
	if err != nil {
		t.Fatal(err)
	}
	return bareTask(t, build, engine.TaskConfig{CacheMaxBytes: cacheBytes, Stores: stores, Now: func() int64 { return 0 }, WindowEmitInterval: engine.NoEmitThrottle})
}

// windowInput is a random input of a few keys whose timestamps mostly
// advance, with late records and records of the same key and time.
func windowInput(seed uint64, n int) []RawRecord {
	r := rand.New(rand.NewPCG(seed, 3))
	var in []RawRecord
	ts := int64(1000)
	for range n {
		ts += int64(r.IntN(25))
		t := ts
		if r.IntN(6) == 0 {
			t -= int64(r.IntN(150)) // late, sometimes past the grace
		}
		in = append(in, RawRecord{Topic: "in", Key: []byte(fmt.Sprint("k", r.IntN(3))), Value: []byte("v"), Timestamp: t})
	}
	return in
}

// runWindowed processes in, committing after every commitEvery records,
// and returns what reached "out" and the store's changelog, per commit.
func runWindowed(t *testing.T, build func(*Builder), pebble bool, cacheBytes int64, in []RawRecord, commitEvery int) (out, changelog [][]string) {
	t.Helper()
	task, c := windowTask(t, build, pebble, cacheBytes)
	for i := range in {
		r := in[i]
		if err := task.Process(&r); err != nil {
			t.Fatal(err)
		}
		if (i+1)%commitEvery == 0 || i == len(in)-1 {
			if err := task.Commit(nil); err != nil {
				t.Fatal(err)
			}
			out = append(out, c.take("out", nil))
			changelog = append(changelog, c.take("app-store-changelog", func(b []byte) string { return fmt.Sprintf("%x", b) }))
		}
	}
	return out, changelog
}

// coalesce is what a record cache flushed after every input record makes
// of the updates each record caused without a cache: one record per
// window (key before "="), the last, in the order of the last updates,
// leaving out windows a record created and deleted again.
func coalesce(perRecord [][]string) []string {
	var out []string
	exists := map[string]bool{}
	for _, recs := range perRecord {
		last := map[string]int{}
		for i, r := range recs {
			k, _, _ := strings.Cut(r, "=")
			last[k] = i
		}
		for i, r := range recs {
			k, v, _ := strings.Cut(r, "=")
			if last[k] != i {
				continue
			}
			deleted := strings.HasPrefix(v, "null@") || v == "null"
			if deleted && !exists[k] {
				continue
			}
			exists[k] = !deleted
			out = append(out, r)
		}
	}
	return out
}

// With the record cache flushed after every record (TopologyTestDriver's
// commit after each input), a windowed aggregation forwards and logs what
// it does without a cache, except that the updates one record makes of one
// window (a session merged with itself, a sliding window updated twice)
// come out as one, in the order of their last updates: every read merged
// the cache with the store correctly. With commits further apart, the
// updates between two commits coalesce: every forward is one the uncached
// run made, in order, and every window ends with the same value. Memory
// and Pebble stores.
func TestWindowCacheMatchesUncached(t *testing.T) {
	for _, w := range windowedCounts {
		for _, pebble := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pebble=%v", w.name, pebble), func(t *testing.T) {
				in := windowInput(uint64(len(w.name)), 400)
				plainOut, plainLog := runWindowed(t, w.build, pebble, 0, in, 1)
				plain := slices.Concat(plainOut...)
				if len(plain) < 50 {
					t.Fatalf("only %d records out: the input tests nothing", len(plain))
				}
				eachOut, eachLog := runWindowed(t, w.build, pebble, 1<<20, in, 1)
				if d := firstDiff(slices.Concat(eachOut...), coalesce(plainOut)); d != "" {
					t.Fatalf("flushed after every record, against no cache: %s", d)
				}
				if d := firstDiff(slices.Concat(eachLog...), coalesce(plainLog)); d != "" {
					t.Fatalf("changelog flushed after every record, against no cache: %s", d)
				}
				coalescedOut, _ := runWindowed(t, w.build, pebble, 1<<20, in, 25)
				coalesced := slices.Concat(coalescedOut...)
				if w.name == "tumbling-on-close" {
					if d := firstDiff(coalesced, plain); d != "" {
						t.Errorf("emit on close with the cache, against none: %s", d)
					}
				} else if len(coalesced) >= len(coalesce(plainOut)) {
					t.Errorf("commits every 25 records forwarded %d records, without cache %d: nothing coalesced", len(coalesced), len(plain))
				}
				checkCoalesced(t, plain, coalesced)
			})
		}
	}
}

// firstDiff describes where got first differs from want, "" if nowhere.
func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			lo := max(i-3, 0)
			return fmt.Sprintf("record %d: got %v, want %v", i, got[lo:min(i+3, len(got))], want[lo:min(i+3, len(want))])
		}
	}
	return ""
}

// checkCoalesced: every record of coalesced is one of plain's, in plain's
// order, and both end with the same value per window, or coalesced never
// showed a window plain ended by deleting.
func checkCoalesced(t *testing.T, plain, coalesced []string) {
	t.Helper()
	i := 0
	for _, r := range coalesced {
		for i < len(plain) && plain[i] != r {
			i++
		}
		if i == len(plain) {
			t.Fatalf("coalesced record %s is not an uncached record in order", r)
		}
	}
	last := func(recs []string) map[string]string {
		m := map[string]string{}
		for _, r := range recs {
			k, v, _ := strings.Cut(r, "=")
			m[k] = v
		}
		return m
	}
	pl, cl := last(plain), last(coalesced)
	for k, v := range pl {
		if _, ok := cl[k]; !ok && strings.HasPrefix(v, "null@") {
			continue // created and deleted between two flushes
		}
		if cl[k] != v {
			t.Errorf("window %s ends at %s with the cache, %s without", k, cl[k], v)
		}
	}
}

// Updates of one window between two commits reach downstream and the
// changelog as one record, at the commit, with the timestamp of the
// window's aggregate and the headers of its last update; windows in the
// order of their last update. An abort drops what the cache held.
func TestWindowCacheCoalescesUntilCommit(t *testing.T) {
	build := windowedCounts[0].build // tumbling windows of 100 ms
	for _, pebble := range []bool{false, true} {
		t.Run(fmt.Sprint("pebble=", pebble), func(t *testing.T) {
			task, c := windowTask(t, build, pebble, 1<<20)
			proc := func(key string, ts int64, h string) {
				t.Helper()
				r := RawRecord{Topic: "in", Key: []byte(key), Value: []byte("v"), Timestamp: ts, Headers: []Header{{Key: "h", Value: []byte(h)}}}
				if err := task.Process(&r); err != nil {
					t.Fatal(err)
				}
			}
			proc("a", 1010, "1")
			proc("b", 1020, "2")
			proc("a", 1030, "3")
			proc("a", 1105, "4") // the next window
			proc("b", 1040, "5")
			if got := c.take("out", nil); len(got) != 0 {
				t.Fatalf("forwarded before the commit: %q", got)
			}
			if got := c.take("app-store-changelog", nil); len(got) != 0 {
				t.Fatalf("logged before the commit: %q", got)
			}
			if err := task.Commit(nil); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range c.recs {
				if r.Topic == "out" {
					out = append(out, fmt.Sprintf("%s=%s@%d/%s", r.Key, r.Value, r.Timestamp, r.Headers[0].Value))
				}
			}
			wantOut(t, out, "a@1000-1100=2@1030/3", "a@1100-1200=1@1105/4", "b@1000-1100=2@1040/5")
			if got := c.take("app-store-changelog", nil); len(got) != 3 {
				t.Fatalf("changelog after the commit: %q", got)
			}
			c.take("out", nil)
			proc("a", 1110, "6")
			if err := task.Abort(); err != nil {
				t.Fatal(err)
			}
			c.take("app-store-changelog", nil)
			proc("a", 1120, "7")
			if err := task.Commit(nil); err != nil {
				t.Fatal(err)
			}
			wantOut(t, c.take("out", nil), "a@1100-1200=2@1120")
		})
	}
}

// A cache too small for the task's windows evicts: the least recently
// used window, when dirty, is flushed first, then the store's other dirty
// windows in the order of their last update (Kafka's NamedCache).
func TestWindowCacheEvictionOrder(t *testing.T) {
	// A cache of three and a half windows, counted as Kafka Streams counts
	// them: the key (1 byte), Kafka's segment prefix (8) and window (12),
	// the 16-byte ValueAndTimestamp of a count, the topic of the record
	// ("in") and 45 bytes of fixed fields.
	const entry = 1 + 8 + 12 + 16 + 2 + 45
	task, c := windowTask(t, windowedCounts[0].build, false, 3*entry+entry/2)
	proc := func(key string, ts int64) {
		t.Helper()
		if err := task.Process(&RawRecord{Topic: "in", Key: []byte(key), Value: []byte("v"), Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	proc("a", 1010)
	proc("b", 1020)
	proc("c", 1030)
	proc("a", 1040) // a is now the most recently used, b the least
	if got := c.take("out", nil); len(got) != 0 {
		t.Fatalf("forwarded within the budget: %q", got)
	}
	proc("d", 1050) // evicts b: b first, then c, a, d by last update
	wantOut(t, c.take("out", nil), "b@1000-1100=1@1020", "c@1000-1100=1@1030", "a@1000-1100=2@1040", "d@1000-1100=1@1050")
}

// Reads through the cache merge it with the store: a cached window hides
// the store's, a cached delete hides it altogether, forward and backward,
// for one key and for all (FetchAll).
func TestWindowCacheMergedFetch(t *testing.T) {
	for _, pebble := range []bool{false, true} {
		t.Run(fmt.Sprint("pebble=", pebble), func(t *testing.T) {
			task, _ := windowTask(t, windowedCounts[0].build, pebble, 1<<20)
			cw := task.stores["store"].(*cachedWindow)
			cw.listener = nil // the values here are no counts
			put := func(key string, start int64, v string) {
				t.Helper()
				var b []byte
				if v != "" {
					b = []byte(v)
				}
				if err := cw.Put([]byte(key), start, b); err != nil {
					t.Fatal(err)
				}
			}
			put("a", 100, "s100")
			put("a", 200, "s200")
			put("a", 300, "s300")
			put("b", 200, "b200")
			if err := task.Commit(nil); err != nil { // into the store
				t.Fatal(err)
			}
			put("a", 200, "c200") // hides the store's
			put("a", 300, "")     // hides it altogether
			put("a", 250, "c250")
			put("b", 100, "c-b100")
			var got []string
			visit := func(start int64, v []byte) error { got = append(got, fmt.Sprint(start, "=", string(v))); return nil }
			take := func() string { s := strings.Join(got, " "); got = nil; return s }
			if err := cw.Fetch([]byte("a"), 0, 1000, visit); err != nil {
				t.Fatal(err)
			}
			if s := take(); s != "100=s100 200=c200 250=c250" {
				t.Errorf("Fetch = %s", s)
			}
			if err := cw.BackwardFetch([]byte("a"), 150, 1000, visit); err != nil {
				t.Fatal(err)
			}
			if s := take(); s != "250=c250 200=c200" {
				t.Errorf("BackwardFetch = %s", s)
			}
			if err := cw.FetchAll(0, 1000, func(k []byte, start int64, v []byte) error {
				got = append(got, fmt.Sprint(string(k), "@", start, "=", string(v)))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if s := take(); s != "a@100=s100 b@100=c-b100 a@200=c200 b@200=b200 a@250=c250" {
				t.Errorf("FetchAll = %s", s)
			}
			for _, c := range []struct {
				start int64
				want  string
				found bool
			}{{100, "s100", true}, {200, "c200", true}, {300, "", false}, {250, "c250", true}} {
				v, found, err := cw.Get([]byte("a"), c.start)
				if err != nil || found != c.found || string(v) != c.want {
					t.Errorf("Get(a, %d) = %q %v %v, want %q %v", c.start, v, found, err, c.want, c.found)
				}
			}
		})
	}
}

// A session store behind the cache logs a flushed session with the
// timestamp of the update that made it, not of the record whose commit
// flushed it, and a session merged away before it was ever flushed
// reaches neither downstream nor the changelog.
func TestSessionCacheFlushContext(t *testing.T) {
	task, c := windowTask(t, windowedCounts[3].build, false, 1<<20) // gap 30 ms
	proc := func(key string, ts int64) {
		t.Helper()
		if err := task.Process(&RawRecord{Topic: "in", Key: []byte(key), Value: []byte("v"), Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	proc("a", 1000)
	proc("a", 1020) // merges [1000,1000] away, within the flush cycle
	proc("b", 1500)
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantOut(t, c.take("out", nil), "a@1000-1020=2@1020", "b@1500-1500=1@1500")
	var logged []string
	for _, r := range c.recs {
		logged = append(logged, fmt.Sprintf("%x@%d", r.Key, r.Timestamp))
	}
	a := fmt.Sprintf("%x", sessionChangelogKey("a", 1000, 1020))
	b := fmt.Sprintf("%x", sessionChangelogKey("b", 1500, 1500))
	wantOut(t, logged, a+"@1020", b+"@1500")
}

// sessionChangelogKey is Kafka's session changelog key: key, end, start.
func sessionChangelogKey(key string, start, end int64) []byte {
	b := []byte(key)
	b = appendFlipped(b, end)
	b = appendFlipped(b, start)
	for _, i := range []int{len(key), len(key) + 8} {
		b[i] ^= 0x80 // big-endian, not flipped
	}
	return b
}
