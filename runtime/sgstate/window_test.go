package sgstate

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type wop struct {
	key string
	ts  int64
	val string // "" with del deletes
	del bool
}

type wq struct {
	kind     string // fetch, back, all
	key      string
	from, to int64
	want     string
}

type windowCase struct {
	name     string
	opts     WindowOptions
	puts     []wop
	queries  []wq
	observed int64
}

var windowCases = []windowCase{
	{
		name: "fetch bounds inclusive",
		opts: WindowOptions{Retention: 100, SegmentInterval: 10},
		puts: []wop{{"a", 10, "x", false}, {"a", 20, "y", false}, {"a", 30, "z", false}, {"b", 20, "q", false}},
		queries: []wq{
			{"fetch", "a", 10, 30, "10=x 20=y 30=z"},
			{"fetch", "a", 11, 29, "20=y"},
			{"fetch", "a", 20, 20, "20=y"},
			{"fetch", "a", 31, 40, ""},
			{"fetch", "a", 30, 20, ""},
			{"fetch", "c", 0, 100, ""},
			{"fetch", "a", math.MinInt64, math.MaxInt64, "10=x 20=y 30=z"},
			{"back", "a", 10, 30, "30=z 20=y 10=x"},
			{"back", "a", 11, 30, "30=z 20=y"},
			{"all", "", 20, 30, "a@20=y b@20=q a@30=z"},
			{"all", "", math.MinInt64, math.MaxInt64, "a@10=x a@20=y b@20=q a@30=z"},
		},
		observed: 30,
	},
	{
		name: "retention: late put at the exact boundary is dropped, one later is kept",
		opts: WindowOptions{Retention: 10, SegmentInterval: 5},
		puts: []wop{{"a", 0, "v0", false}, {"a", 5, "v5", false}, {"a", 10, "v10", false}, {"a", 11, "v11", false},
			{"a", 1, "late", false}, {"a", 2, "ok", false}},
		queries: []wq{
			{"fetch", "a", 0, 100, "2=ok 5=v5 10=v10 11=v11"},
			{"fetch", "a", 1, 2, "2=ok"},
			{"back", "a", 0, 100, "11=v11 10=v10 5=v5 2=ok"},
			{"all", "", 0, 100, "a@2=ok a@5=v5 a@10=v10 a@11=v11"},
		},
		observed: 11,
	},
	{
		name: "retention: stored entries expire exactly at observed - retention",
		opts: WindowOptions{Retention: 10, SegmentInterval: 3},
		puts: []wop{{"a", 1, "x", false}, {"a", 2, "y", false}, {"b", 1, "x", false}, {"a", 11, "z", false}},
		queries: []wq{
			{"fetch", "a", 0, 20, "2=y 11=z"},
			{"fetch", "b", 0, 20, ""},
			{"all", "", 0, 20, "a@2=y a@11=z"},
		},
		observed: 11,
	},
	{
		name: "retention: whole segments dropped far behind",
		opts: WindowOptions{Retention: 10, SegmentInterval: 5},
		puts: []wop{{"a", 0, "0", false}, {"a", 7, "7", false}, {"b", 12, "12", false}, {"a", 50, "50", false}, {"a", 45, "45", false}},
		queries: []wq{
			{"fetch", "a", 0, 100, "45=45 50=50"},
			{"all", "", 0, 100, "a@45=45 a@50=50"},
		},
		observed: 50,
	},
	{
		name: "retain duplicates in insertion order",
		opts: WindowOptions{Retention: 100, RetainDuplicates: true},
		puts: []wop{{"a", 5, "1", false}, {"a", 5, "2", false}, {"b", 5, "x", false}, {"a", 3, "0", false},
			{"a", 5, "3", false}, {"a", 5, "", true}},
		queries: []wq{
			{"fetch", "a", 0, 10, "3=0 5=1 5=2 5=3"},
			{"back", "a", 0, 10, "5=3 5=2 5=1 3=0"},
			{"all", "", 0, 10, "a@3=0 a@5=1 a@5=2 a@5=3 b@5=x"},
		},
		observed: 5,
	},
	{
		name: "overwrite and delete without duplicates",
		opts: WindowOptions{Retention: 100},
		puts: []wop{{"a", 5, "1", false}, {"a", 5, "2", false}, {"b", 5, "x", false}, {"b", 5, "", true}},
		queries: []wq{
			{"fetch", "a", 0, 10, "5=2"},
			{"fetch", "b", 0, 10, ""},
			{"all", "", 0, 10, "a@5=2"},
		},
		observed: 5,
	},
	{
		name: "keys that prefix each other stay apart",
		opts: WindowOptions{Retention: 100},
		puts: []wop{{"ab", 1, "ab", false}, {"a\x00", 1, "a0", false}, {"a", 1, "a", false}, {"", 1, "empty", false},
			{"\x00", 1, "zero", false}, {"a", 2, "a2", false}},
		queries: []wq{
			{"fetch", "a", 0, 10, "1=a 2=a2"},
			{"fetch", "", 0, 10, "1=empty"},
			{"fetch", "a\x00", 0, 10, "1=a0"},
			{"all", "", 0, 10, "@1=empty \x00@1=zero a@1=a a\x00@1=a0 ab@1=ab a@2=a2"},
		},
		observed: 2,
	},
	{
		name: "fetch across segments",
		opts: WindowOptions{Retention: 100, SegmentInterval: 10},
		puts: []wop{{"a", 5, "5", false}, {"a", 15, "15", false}, {"a", 25, "25", false}, {"a", 95, "95", false}, {"b", 20, "b", false}},
		queries: []wq{
			{"fetch", "a", 10, 30, "15=15 25=25"},
			{"back", "a", 0, 100, "95=95 25=25 15=15 5=5"},
			{"all", "", 10, 20, "a@15=15 b@20=b"},
		},
		observed: 95,
	},
	{
		name:     "empty store",
		opts:     WindowOptions{Retention: 100},
		queries:  []wq{{"fetch", "a", math.MinInt64, math.MaxInt64, ""}, {"all", "", 0, 10, ""}},
		observed: math.MinInt64,
	},
}

func runWindowQuery(t *testing.T, s WindowStore, q wq) string {
	t.Helper()
	var out []string
	var err error
	switch q.kind {
	case "fetch", "back":
		f := s.Fetch
		if q.kind == "back" {
			f = s.BackwardFetch
		}
		err = f([]byte(q.key), q.from, q.to, func(ts int64, v []byte) error {
			out = append(out, fmt.Sprintf("%d=%s", ts, v))
			return nil
		})
	case "all":
		err = s.FetchAll(q.from, q.to, func(k []byte, ts int64, v []byte) error {
			out = append(out, fmt.Sprintf("%s@%d=%s", k, ts, v))
			return nil
		})
	}
	mustNoErr(t, err)
	return strings.Join(out, " ")
}

// storeModes says how the writes reach the state the queries see; every case
// must answer identically in all of them.
var storeModes = []string{"staged", "committed", "reopened", "restored"}

func TestWindowStore(t *testing.T) {
	eachMode(t, windowCases, func(c windowCase) string { return c.name }, func(t *testing.T, v variant, mode string, c windowCase) {
		open := func() WindowStore { return v.window("w", c.opts) }
		put := func(s WindowStore, i int) {
			p := c.puts[i]
			var val []byte
			if !p.del {
				val = []byte(p.val)
			}
			mustNoErr(t, s.Put([]byte(p.key), p.ts, val))
		}
		restore := func(s WindowStore, recs []ChangelogRecord) {
			// Replay in two batches to cross a batch boundary.
			half := len(recs) / 2
			mustNoErr(t, s.(Restorer).RestoreBatch(recs[:half]))
			mustNoErr(t, s.(Restorer).RestoreBatch(recs[half:]))
			mustNoErr(t, s.(Transactional).Commit(map[string]int64{"w-changelog/0": int64(len(recs))}))
		}
		s := storeInMode(t, mode, open, len(c.puts), put, restore)
		defer s.Close()
		for _, q := range c.queries {
			if got := runWindowQuery(t, s, q); got != q.want {
				t.Errorf("%s %q [%d,%d] = %q, want %q", q.kind, q.key, q.from, q.to, got, q.want)
			}
		}
		if got := s.ObservedStreamTime(); got != c.observed {
			t.Errorf("observed stream time = %d, want %d", got, c.observed)
		}
		checkGetMatchesFetch(t, s, c.puts)
	})
}

func TestWindowChangelogFormat(t *testing.T) {
	log := &recLog{}
	s := NewMemoryWindow("w", WindowOptions{Retention: 100, RetainDuplicates: true})
	mustNoErr(t, s.Init(&StoreContext{Changelog: log, RecordTimestamp: func() int64 { return 42 }}))
	mustNoErr(t, s.Put([]byte("k"), 7, []byte("v")))
	mustNoErr(t, s.Put([]byte("k"), 7, []byte("w")))
	want := []string{"6b000000000000000700000001=v@42", "6b000000000000000700000002=w@42"}
	for i, r := range log.recs {
		if got := fmt.Sprintf("%x=%s@%d", r.Key, r.Value, r.Timestamp); got != want[i] {
			t.Errorf("record %d = %s, want %s", i, got, want[i])
		}
	}
}

func TestWindowAbortRollsBackStreamTime(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		s := v.window("w", WindowOptions{Retention: 10, SegmentInterval: 5})
		initStore(t, s, filepath.Join(t.TempDir(), "w"), nil)
		defer s.Close()
		mustNoErr(t, s.Put([]byte("a"), 3, []byte("x")))
		mustNoErr(t, s.(Transactional).Commit(nil))
		// A staged put far ahead expires a@3 and drops its segment...
		mustNoErr(t, s.Put([]byte("a"), 100, []byte("y")))
		if got := runWindowQuery(t, s, wq{kind: "fetch", key: "a", from: 0, to: 200}); got != "100=y" {
			t.Fatalf("staged = %q", got)
		}
		// ...and the abort brings both back.
		mustNoErr(t, s.(Transactional).Abort())
		if got := runWindowQuery(t, s, wq{kind: "fetch", key: "a", from: 0, to: 200}); got != "3=x" {
			t.Fatalf("after abort = %q", got)
		}
		if s.ObservedStreamTime() != 3 {
			t.Fatalf("observed = %d", s.ObservedStreamTime())
		}
	})
}

// TestWindowSegmentsPhysicallyDropped checks that expiry frees storage, not
// only hides entries: after advancing far, only the live segments remain,
// in memory and (for Pebble) in the engine.
func TestWindowSegmentsPhysicallyDropped(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		s := v.window("w", WindowOptions{Retention: 10, SegmentInterval: 5})
		initStore(t, s, filepath.Join(t.TempDir(), "w"), nil)
		defer s.Close()
		for ts := int64(0); ts < 100; ts++ {
			mustNoErr(t, s.Put([]byte("k"), ts, []byte("v")))
			if ts%10 == 0 {
				mustNoErr(t, s.(Transactional).Commit(nil))
			}
		}
		mustNoErr(t, s.(Transactional).Commit(nil))
		// observed 99, live from 90: segments 18 and 19, 10 entries.
		ws := s.(*windowStore)
		if segs, n := bandEntries(ws.mem); n != 10 || !slices.Equal(segs, []int64{18, 19}) {
			t.Errorf("in memory: %d entries in segments %v, want 10 in [18 19]", n, segs)
		}
		var raw int
		mustNoErr(t, ws.eng.scan(nil, nil, false, func(_, _ []byte) error { raw++; return nil }))
		if want := map[bool]int{false: 0, true: 10}[v.persistent]; raw != want {
			t.Errorf("entries in the engine = %d, want %d", raw, want)
		}
	})
}

// bandEntries returns the segments held in memory and their entries.
func bandEntries(b *bands) (segs []int64, n int) {
	for sg, bd := range b.m {
		segs = append(segs, sg)
		n += bd.n
	}
	slices.Sort(segs)
	return segs, n
}

// checkGetMatchesFetch: WindowGetter.Get answers what a one-window
// BackwardFetch answers (its first entry), for every key and time the puts
// used and their neighbours, expired ones included.
func checkGetMatchesFetch(t *testing.T, s WindowStore, puts []wop) {
	t.Helper()
	g, ok := s.(WindowGetter)
	if !ok {
		t.Fatalf("%T does not implement WindowGetter", s)
	}
	for _, p := range puts {
		for _, ts := range []int64{p.ts - 1, p.ts, p.ts + 1} {
			var want []byte
			wantFound := false
			err := s.BackwardFetch([]byte(p.key), ts, ts, func(_ int64, v []byte) error {
				if !wantFound {
					want, wantFound = append([]byte(nil), v...), true
				}
				return nil
			})
			mustNoErr(t, err)
			got, found, err := g.Get([]byte(p.key), ts)
			mustNoErr(t, err)
			if found != wantFound || string(got) != string(want) {
				t.Errorf("Get(%q, %d) = %q, %v; BackwardFetch gives %q, %v", p.key, ts, got, found, want, wantFound)
			}
		}
	}
}

// TestExpiryStagesOneRange: segments that expire one after another between
// two commits stage one range deletion, not one each (they all start at
// the store's first key), and what they delete stays deleted.
func TestExpiryStagesOneRange(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		s := v.window("w", WindowOptions{Retention: 10, SegmentInterval: 5})
		initStore(t, s, filepath.Join(t.TempDir(), "w"), nil)
		defer s.Close()
		mustNoErr(t, s.Put([]byte("old"), 0, []byte("v")))
		mustNoErr(t, s.(Transactional).Commit(nil))
		for ts := int64(1); ts < 100; ts++ {
			mustNoErr(t, s.Put([]byte("k"), ts, []byte("v")))
		}
		if v.persistent {
			pe, ok := s.(*windowStore).eng.(*pebbleEngine)
			if !ok {
				t.Fatalf("engine %T, want the Pebble engine", s.(*windowStore).eng)
			}
			if len(pe.ranges) != 1 {
				t.Errorf("staged range deletions = %d, want 1", len(pe.ranges))
			}
		}
		mustNoErr(t, s.(Transactional).Commit(nil))
		if got := runWindowQuery(t, s, wq{kind: "fetch", key: "old", from: 0, to: 100}); got != "" {
			t.Errorf("expired window still fetched: %q", got)
		}
		if got := runWindowQuery(t, s, wq{kind: "fetch", key: "k", from: 0, to: 100}); !strings.HasPrefix(got, "90=v") {
			t.Errorf("live windows = %q, want from 90 on", got)
		}
	})
}

func TestAddRangeDropsCoveredRanges(t *testing.T) {
	r := func(s, e string) [2][]byte { return [2][]byte{[]byte(s), []byte(e)} }
	var got [][2][]byte
	for _, x := range [][2][]byte{r("a", "c"), r("a", "b"), r("a", "e"), r("f", "g"), r("b", "d"), r("e", "h")} {
		got = addRange(got, x[0], x[1])
	}
	want := [][2][]byte{r("a", "e"), r("e", "h")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ranges = %q, want %q", got, want)
	}
}
