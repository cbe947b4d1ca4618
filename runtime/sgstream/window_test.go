package sgstream

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// in is one input record of a windowed test: key "" is a null key, value
// nil a null value.
type in struct {
	key string
	val *int64
	ts  int64
}

func v(x int64) *int64 { return &x }

func rec(key string, val int64, ts int64) in { return in{key: key, val: v(val), ts: ts} }

// nopCollector discards sink output; the windowed tests read the table
// directly.
type nopCollector struct{}

func (nopCollector) Send(string, int32, []byte, []byte, int64, []Header, []byte) error { return nil }

// windowRun builds source "events" (string keys, int64 values) →
// group_by_key → mk, and records every change the table forwards as
// "key [start,end] value @ts" ("null" for a tombstone).
type windowRun struct {
	t      *testing.T
	tp     *topology
	out    *[]string
	prov   engine.StoreProvider
	task   *task
	wall   int64
	offset int64
}

func newWindowRun[VA any](t *testing.T, mk func(g GroupedStream[string, int64]) Table[Windowed[string], VA]) *windowRun {
	t.Helper()
	return newWindowRunOn(t, &fakeProvider{}, mk)
}

// builtinProvider opens the built-in sgstate stores, in memory, or on
// Pebble under dir when dir is set (state survives restart()).
type builtinProvider struct{ dir string }

func (p builtinProvider) OpenStore(t engine.Task, spec *StoreSpec) (sgstate.Store, error) {
	s, err := engine.NewBuiltinStore(spec, p.dir != "", nil)
	if err != nil {
		return nil, err
	}
	ctx := &sgstate.StoreContext{}
	if p.dir != "" {
		ctx.Dir = engine.StoreDir(p.dir, t.ID(), spec.Name)
		if err := os.MkdirAll(ctx.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	return s, s.Init(ctx)
}

func newWindowRunOn[VA any](t *testing.T, prov engine.StoreProvider, mk func(g GroupedStream[string, int64]) Table[Windowed[string], VA]) *windowRun {
	t.Helper()
	out := &[]string{}
	tp, err := newTopology("app", func(b *Builder) {
		s := Source(b, "source", SourceConfig[string, int64]{Topic: "events", Key: serdes.String, Value: serdes.Int64})
		tbl := mk(GroupedStream[string, int64]{Stream: s, Key: serdes.String, Value: serdes.Int64})
		tbl.to(nodeFunc[Windowed[string], tableChange[VA]](func(r Record[Windowed[string], tableChange[VA]]) error {
			val := "null"
			if !r.Value.NewNull {
				val = fmt.Sprint(r.Value.New)
			}
			*out = append(*out, fmt.Sprintf("%s [%d,%d] %s @%d", r.Key.Key, r.Key.Start, r.Key.End, val, r.Timestamp))
			return nil
		}))
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &windowRun{t: t, tp: tp, out: out, prov: prov}
	w.restart()
	t.Cleanup(func() { w.task.Close() })
	return w
}

// restart replaces the task by a new one on the same stores, as a process
// restart does.
func (w *windowRun) restart() {
	w.t.Helper()
	if w.task != nil {
		if err := w.task.Close(); err != nil {
			w.t.Fatal(err)
		}
	}
	task, err := w.tp.newTask(engine.TaskID{}, engine.TaskConfig{Collector: nopCollector{}, Stores: w.prov,
		// Every record sees a wall clock one emit interval later, so the
		// emit-on-close throttle never holds a scan back (the
		// TopologyTestDriver behaviour).
		Now: func() int64 { w.wall += engine.DefaultWindowEmitInterval.Milliseconds(); return w.wall }})
	if err != nil {
		w.t.Fatal(err)
	}
	if err := task.Init(); err != nil {
		w.t.Fatal(err)
	}
	w.task = task
}

func (w *windowRun) pipe(recs ...in) []string {
	w.t.Helper()
	for _, r := range recs {
		raw := &RawRecord{Topic: "events", Offset: w.offset, Timestamp: r.ts}
		w.offset++
		if r.key != "" {
			raw.Key = []byte(r.key)
		}
		if r.val != nil {
			raw.Value, _ = serdes.Int64.Append(nil, *r.val)
		}
		if err := w.task.Process(raw); err != nil {
			w.t.Fatal(err)
		}
		if err := w.task.Commit(nil); err != nil {
			w.t.Fatal(err)
		}
	}
	got := *w.out
	*w.out = nil
	return got
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output mismatch\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func (w *windowRun) dropped() int64 { return w.task.Stats().Dropped }

func sum(a, b int64) int64 { return a + b }

func appendAgg(_ string, v int64, agg string) string {
	if agg == "" {
		return strconv.FormatInt(v, 10)
	}
	return agg + "," + strconv.FormatInt(v, 10)
}

func mergeLists(_ string, a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "+" + b
}

func empty() string { return "" }

const sec = time.Second

func TestWindowStartsTumblingAndHopping(t *testing.T) {
	tumbling := TimeWindows{Size: 10 * time.Millisecond}
	hopping := TimeWindows{Size: 10 * time.Millisecond, Advance: 4 * time.Millisecond}
	for _, c := range []struct {
		w    TimeWindows
		ts   int64
		want []int64
	}{
		{tumbling, 0, []int64{0}},
		{tumbling, 9, []int64{0}},
		{tumbling, 10, []int64{10}},
		{tumbling, 25, []int64{20}},
		// Near 0 a hopping record falls into fewer windows: no negative starts.
		{hopping, 0, []int64{0}},
		{hopping, 3, []int64{0}},
		{hopping, 4, []int64{0, 4}},
		{hopping, 9, []int64{0, 4, 8}},
		{hopping, 10, []int64{4, 8}},
		{hopping, 13, []int64{4, 8, 12}},
	} {
		if got := c.w.WindowStarts(c.ts); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%+v.WindowStarts(%d) = %v, want %v", c.w, c.ts, got, c.want)
		}
	}
}

func TestWindowConfigValidationAndRetention(t *testing.T) {
	if err := (TimeWindows{Size: sec, Advance: 2 * sec}).Validate(); err == nil {
		t.Error("advance > size accepted")
	}
	if err := (TimeWindows{Size: 0}).Validate(); err == nil {
		t.Error("size 0 accepted")
	}
	if err := (TimeWindows{Size: 10 * sec, Grace: sec, Retention: 10 * sec}).Validate(); err == nil {
		t.Error("retention < size+grace accepted")
	}
	if err := (SessionWindows{Gap: 0}).Validate(); err == nil {
		t.Error("gap 0 accepted")
	}
	if err := (SlidingWindows{TimeDifference: 5 * sec, Grace: sec, Retention: 10 * sec}).Validate(); err == nil {
		t.Error("sliding retention < 2d+grace accepted")
	}
	if got := (TimeWindows{Size: 10 * sec, Grace: 2 * sec}).StoreRetention(); got != 12*sec {
		t.Errorf("time retention %v", got)
	}
	if got := (SlidingWindows{TimeDifference: 5 * sec, Grace: 2 * sec}).StoreRetention(); got != 12*sec {
		t.Errorf("sliding retention %v", got)
	}
	if got := (SessionWindows{Gap: 5 * sec, Grace: 2 * sec}).StoreRetention(); got != 7*sec {
		t.Errorf("session retention %v", got)
	}
}

func TestWindowTumblingCount(t *testing.T) {
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond}), "count", "store", EmitOnUpdate)
	})
	expect(t, w.pipe(rec("A", 1, 0), rec("A", 1, 9), rec("B", 1, 5), rec("A", 1, 10), rec("A", 1, 3)),
		"A [0,10] 1 @0",
		"A [0,10] 2 @9",
		"B [0,10] 1 @5",
		"A [10,20] 1 @10",
		// Grace 0, stream time 10: window [0,10] closed (end <= 10 - 0).
	)
	if w.dropped() != 1 {
		t.Errorf("dropped = %d, want 1", w.dropped())
	}
	// An out-of-order record in an open window keeps the max timestamp.
	expect(t, w.pipe(rec("A", 1, 15), rec("A", 1, 12)), "A [10,20] 2 @15", "A [10,20] 3 @15")
}

func TestWindowGraceBoundary(t *testing.T) {
	// Accepted into [s,e) iff streamTime < e + grace.
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond, Grace: 5 * time.Millisecond}), "count", "store", EmitOnUpdate)
	})
	expect(t, w.pipe(rec("A", 1, 0), rec("A", 1, 14), rec("A", 1, 9)),
		"A [0,10] 1 @0", "A [10,20] 1 @14", "A [0,10] 2 @9") // 14 < 10+5: accepted
	expect(t, w.pipe(rec("A", 1, 15), rec("A", 1, 9)), "A [10,20] 2 @15") // 15 = 10+5: dropped
	if w.dropped() != 1 {
		t.Errorf("dropped = %d, want 1", w.dropped())
	}
}

func TestWindowHoppingDropsCountPerWindow(t *testing.T) {
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond, Advance: 5 * time.Millisecond}), "count", "store", EmitOnUpdate)
	})
	expect(t, w.pipe(rec("A", 1, 7)), "A [0,10] 1 @7", "A [5,15] 1 @7")
	// Stream time 20 closes [5,15] and [10,20); a record at 12 belongs to
	// [5,15] and [10,20] only: both skipped, two drops.
	expect(t, w.pipe(rec("A", 1, 20), rec("A", 1, 12)), "A [15,25] 1 @20", "A [20,30] 1 @20")
	if w.dropped() != 2 {
		t.Errorf("dropped = %d, want 2", w.dropped())
	}
	// A record at 16 with stream time 20: [10,20] closed (20 <= 20), [15,25] open.
	expect(t, w.pipe(rec("A", 1, 16)), "A [15,25] 2 @20")
	if w.dropped() != 3 {
		t.Errorf("dropped = %d, want 3", w.dropped())
	}
}

func TestWindowNullKeyAndValue(t *testing.T) {
	// Time windows aggregate null values (count counts them; reduce's first
	// null value is a null aggregate: a tombstone, nothing stored).
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond}), "count", "store", EmitOnUpdate)
	})
	expect(t, w.pipe(in{key: "A", ts: 1}, in{val: v(1), ts: 2}, rec("A", 1, 3)), "A [0,10] 1 @1", "A [0,10] 2 @3")
	if w.dropped() != 1 {
		t.Errorf("dropped = %d, want 1 (null key)", w.dropped())
	}
	r := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return ReduceWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond}), "reduce", "store", EmitOnUpdate, sum)
	})
	expect(t, r.pipe(in{key: "A", ts: 1}, rec("A", 4, 2), rec("A", 5, 3)), "A [0,10] null @1", "A [0,10] 4 @2", "A [0,10] 9 @3")
	// Sliding windows skip null values.
	s := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountWindowed(WindowedBySliding(g, "w", SlidingWindows{TimeDifference: 10 * time.Millisecond}), "count", "store", EmitOnUpdate)
	})
	expect(t, s.pipe(in{key: "A", ts: 20}))
	if s.dropped() != 1 {
		t.Errorf("sliding dropped = %d, want 1 (null value)", s.dropped())
	}
}

func TestWindowSlidingJavadocExample(t *testing.T) {
	// SlidingWindows javadoc, d = 5000: records at 8000, 9200, 12400 give
	// [3000,8000]{1}, [4200,9200]{1,2}, [7400,12400]{1,2,3},
	// [8001,13001]{2,3}, [9201,14201]{3}.
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], string] {
		return AggregateWindowed(WindowedBySliding(g, "w", SlidingWindows{TimeDifference: 5 * sec}), "agg", "store", EmitOnUpdate, empty, appendAgg, serdes.String)
	})
	expect(t, w.pipe(rec("A", 1, 8000)), "A [3000,8000] 1 @8000")
	expect(t, w.pipe(rec("A", 2, 9200)),
		"A [8001,13001] 2 @9200", // 1's right window, created for 2
		"A [4200,9200] 1,2 @9200")
	expect(t, w.pipe(rec("A", 3, 12400)),
		"A [8001,13001] 2,3 @12400",
		"A [9201,14201] 3 @12400",
		"A [7400,12400] 1,2,3 @12400")
}

func TestWindowSlidingOutOfOrder(t *testing.T) {
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], string] {
		return AggregateWindowed(WindowedBySliding(g, "w", SlidingWindows{TimeDifference: 5 * sec, Grace: 10 * sec}), "agg", "store", EmitOnUpdate, empty, appendAgg, serdes.String)
	})
	w.pipe(rec("A", 1, 8000), rec("A", 3, 12400))
	// 2@9200 arrives late: existing windows containing it are updated in
	// descending start order, then its left window (seeded from the window
	// that ends before it), then its right window as a copy of the window
	// holding the later records.
	expect(t, w.pipe(rec("A", 2, 9200)),
		"A [8001,13001] 3,2 @12400",
		"A [7400,12400] 1,3,2 @12400",
		"A [4200,9200] 1,2 @9200",
		"A [9201,14201] 3 @12400")
}

func TestWindowSlidingEarlyRecords(t *testing.T) {
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], string] {
		return AggregateWindowed(WindowedBySliding(g, "w", SlidingWindows{TimeDifference: 5 * sec}), "agg", "store", EmitOnUpdate, empty, appendAgg, serdes.String)
	})
	// Records before d share the window [0, d].
	expect(t, w.pipe(rec("A", 1, 1000)), "A [0,5000] 1 @1000")
	expect(t, w.pipe(rec("A", 2, 3000)),
		"A [1001,6001] 2 @3000", // 1's right window
		"A [0,5000] 1,2 @3000")
	expect(t, w.pipe(rec("A", 3, 2000)),
		"A [1001,6001] 2,3 @3000",
		"A [2001,7001] 2 @3000", // 3's right window: a copy of [1001,6001] before 3
		"A [0,5000] 1,2,3 @3000")
	expect(t, w.pipe(rec("A", 4, 6000)),
		"A [2001,7001] 2,4 @6000",
		"A [1001,6001] 2,3,4 @6000",
		"A [3001,8001] 4 @6000", // 2's right window
		"A [1000,6000] 1,2,3,4 @6000")
}

func TestWindowSessionMerge(t *testing.T) {
	w := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], string] {
		return AggregateSession(WindowedBySession(g, "w", SessionWindows{Gap: 5 * time.Millisecond, Grace: 100 * time.Millisecond}), "agg", "store", EmitOnUpdate, empty, appendAgg, mergeLists, serdes.String)
	})
	// Gap inclusive: 0 and 5 merge; the old session is deleted first with
	// its own end as timestamp.
	expect(t, w.pipe(rec("A", 1, 0), rec("A", 2, 5)),
		"A [0,0] 1 @0",
		"A [0,0] null @0",
		"A [0,5] 1,2 @5")
	// 11 is gap+1 after 5: a new session.
	expect(t, w.pipe(rec("A", 3, 11)), "A [11,11] 3 @11")
	// 8 bridges [0,5] and [11,11]: both are deleted, then the merged one.
	expect(t, w.pipe(rec("A", 4, 8)),
		"A [0,5] null @5",
		"A [11,11] null @11",
		"A [0,11] 1,2+3,4 @11")
	// A record inside a session replaces it (delete, then the new value).
	expect(t, w.pipe(rec("A", 5, 3)), "A [0,11] null @11", "A [0,11] 1,2+3,4,5 @11")
	// A duplicate timestamp of a single-record session does not delete it.
	expect(t, w.pipe(rec("B", 1, 50), rec("B", 2, 50)), "B [50,50] 1 @50", "B [50,50] 1,2 @50")
}

func TestWindowSessionLateness(t *testing.T) {
	// Gap 10, grace 0: at stream time 11 a record at 0 ([0,0]) is dropped
	// (0 < 11 - 0 - 10).
	mk := func(grace time.Duration) func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
			return CountSession(WindowedBySession(g, "w", SessionWindows{Gap: 10 * time.Millisecond, Grace: grace}), "count", "store", EmitOnUpdate)
		}
	}
	w := newWindowRun(t, mk(0))
	expect(t, w.pipe(rec("A", 1, 11), rec("B", 1, 0)), "A [11,11] 1 @11")
	if w.dropped() != 1 {
		t.Errorf("dropped = %d, want 1", w.dropped())
	}
	w = newWindowRun(t, mk(time.Millisecond))
	expect(t, w.pipe(rec("A", 1, 11), rec("B", 1, 0)), "A [11,11] 1 @11", "B [0,0] 1 @0")
	expect(t, w.pipe(rec("A", 1, 12), rec("C", 1, 0)), "A [11,11] null @11", "A [11,12] 2 @12")
	if w.dropped() != 1 {
		t.Errorf("dropped = %d, want 1", w.dropped())
	}
}

func TestWindowSessionCountAndReduce(t *testing.T) {
	c := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountSession(WindowedBySession(g, "w", SessionWindows{Gap: 5 * time.Millisecond}), "count", "store", EmitOnUpdate)
	})
	expect(t, c.pipe(rec("A", 1, 0), rec("A", 1, 20), rec("A", 1, 10)),
		"A [0,0] 1 @0", "A [20,20] 1 @20")
	r := newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return ReduceSession(WindowedBySession(g, "w", SessionWindows{Gap: 5 * time.Millisecond, Grace: 20 * time.Millisecond}), "reduce", "store", EmitOnUpdate, sum)
	})
	expect(t, r.pipe(rec("A", 1, 0), rec("A", 10, 10), rec("A", 100, 5)),
		"A [0,0] 1 @0",
		"A [10,10] 10 @10",
		"A [0,0] null @0",
		"A [10,10] null @10",
		"A [0,10] 111 @10")
}

func TestWindowEmitOnCloseTumbling(t *testing.T) {
	mk := func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond, Grace: 2 * time.Millisecond}), "count", "store", EmitOnClose)
	}
	w := newWindowRun(t, mk)
	expect(t, w.pipe(rec("B", 1, 1), rec("A", 1, 3), rec("A", 1, 11), rec("A", 1, 8)))
	// Close time 12 - 2 = 10 closes [0,10): emitted once, keys in byte order,
	// with the window's max timestamp.
	expect(t, w.pipe(rec("A", 1, 12)), "A [0,10] 2 @8", "B [0,10] 1 @1")
	expect(t, w.pipe(rec("A", 1, 13), rec("A", 1, 21)))
	expect(t, w.pipe(rec("C", 1, 22)), "A [10,20] 3 @13")
	// A restarted task does not emit [0,10] or [10,20] again.
	w.restart()
	expect(t, w.pipe(rec("A", 1, 23), rec("A", 1, 32)), "A [20,30] 2 @23", "C [20,30] 1 @22")
}

func TestWindowEmitOnCloseRestartPebble(t *testing.T) {
	// The same scenario as TestWindowEmitOnCloseTumbling on the built-in
	// Pebble stores: the task is closed and a new one opens the same state
	// directory.
	dir := t.TempDir()
	w := newWindowRunOn(t, builtinProvider{dir: dir}, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
		return CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond, Grace: 2 * time.Millisecond}), "count", "store", EmitOnClose)
	})
	expect(t, w.pipe(rec("B", 1, 1), rec("A", 1, 3), rec("A", 1, 11), rec("A", 1, 8)))
	expect(t, w.pipe(rec("A", 1, 12)), "A [0,10] 2 @8", "B [0,10] 1 @1")
	expect(t, w.pipe(rec("A", 1, 13), rec("A", 1, 21)))
	expect(t, w.pipe(rec("C", 1, 22)), "A [10,20] 3 @13")
	w.restart()
	expect(t, w.pipe(rec("A", 1, 23), rec("A", 1, 32)), "A [20,30] 2 @23", "C [20,30] 1 @22")
}
