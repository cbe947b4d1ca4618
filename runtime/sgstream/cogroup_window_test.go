package sgstream

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// cogroupWindowDrv builds clicks and views (string keys and values),
// cogroups them with aggregators that append "c" and "v" to an aggregate
// starting at ">", windows them with mk and records every change of the
// result as "key[start,end]=value@ts" (value "null" for a tombstone).
func cogroupWindowDrv(t *testing.T, mk func(c *CogroupedStream[string, string]) Table[Windowed[string], string]) (*tdrv, *[]string) {
	t.Helper()
	out := &[]string{}
	d := newTDrv(t, func(b *Builder) {
		clicks := GroupByKey(Source(b, "clicks", strSrc("clicks")), serdes.String, serdes.String)
		views := GroupByKey(Source(b, "views", strSrc("views")), serdes.String, serdes.String)
		c := Cogroup(clicks, func(_ string, _ string, agg string) string { return agg + "c" })
		c = CogroupWith(c, views, func(_ string, _ string, agg string) string { return agg + "v" })
		mk(c).to(nodeFunc[Windowed[string], tableChange[string]](func(r Record[Windowed[string], tableChange[string]]) error {
			val := r.Value.New
			if r.Value.NewNull {
				val = "null"
			}
			*out = append(*out, fmt.Sprintf("%s[%d,%d]=%s@%d", r.Key.Key, r.Key.Start, r.Key.End, val, r.Timestamp))
			return nil
		}))
	})
	return d, out
}

func takeOut(out *[]string) []string {
	got := *out
	*out = nil
	return got
}

func wantChanges(t *testing.T, out *[]string, want ...string) {
	t.Helper()
	if got := takeOut(out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("changes:\n got %q\nwant %q", got, want)
	}
}

func initAgg() string { return ">" }

func TestCogroupTumblingFoldsBothInputsIntoOneWindow(t *testing.T) {
	d, out := cogroupWindowDrv(t, func(c *CogroupedStream[string, string]) Table[Windowed[string], string] {
		return CogroupWindowedAggregate(c, "cg", "cg-store", TimeWindows{Size: 10 * time.Millisecond}, initAgg, serdes.String)
	})
	d.pipeS("clicks", "a", "x", 1)
	d.pipeS("views", "a", "x", 5)
	d.pipeS("clicks", "b", "x", 7)
	d.pipeS("clicks", "a", "x", 3) // same window: value ts stays max(3, 5)
	d.pipeS("views", "a", "x", 12)
	wantChanges(t, out, "a[0,10]=>c@1", "a[0,10]=>cv@5", "b[0,10]=>c@7", "a[0,10]=>cvc@5", "a[10,20]=>v@12")
}

// The inputs share one store, and the store has its own observed stream
// time (the largest window start put) and retention (size + grace): a
// record its own input still accepts can find its window already expired
// in the store, because another input moved the store on. It then starts
// from init(), as in Kafka.
func TestCogroupTumblingSharedStoreExpiresWindowsOfALaggingInput(t *testing.T) {
	d, out := cogroupWindowDrv(t, func(c *CogroupedStream[string, string]) Table[Windowed[string], string] {
		return CogroupWindowedAggregate(c, "cg", "cg-store", TimeWindows{Size: 10 * time.Millisecond}, initAgg, serdes.String)
	})
	d.pipeS("clicks", "a", "x", 1)
	d.pipeS("views", "a", "x", 12) // the store holds windows starting after 10 - 10
	d.pipeS("clicks", "a", "x", 3) // clicks have seen 3 only: not late, but [0,10) is gone
	wantChanges(t, out, "a[0,10]=>c@1", "a[10,20]=>v@12", "a[0,10]=>c@3")
	if got := d.Tasks()[0].Stats().Dropped; got != 0 {
		t.Fatalf("dropped = %d, want 0", got)
	}
}

func TestCogroupHoppingUpdatesEveryWindowOfARecord(t *testing.T) {
	d, out := cogroupWindowDrv(t, func(c *CogroupedStream[string, string]) Table[Windowed[string], string] {
		return CogroupWindowedAggregate(c, "cg", "cg-store", TimeWindows{Size: 10 * time.Millisecond, Advance: 5 * time.Millisecond}, initAgg, serdes.String)
	})
	d.pipeS("clicks", "a", "x", 7)
	d.pipeS("views", "a", "x", 8)
	wantChanges(t, out, "a[0,10]=>c@7", "a[5,15]=>c@7", "a[0,10]=>cv@8", "a[5,15]=>cv@8")
}

// Each input has its own KStreamWindowAggregate and so its own observed
// stream time (Kafka's CogroupedStreamAggregateBuilder): a record is late
// only against the records of its own input.
func TestCogroupTumblingLatenessIsPerInput(t *testing.T) {
	d, out := cogroupWindowDrv(t, func(c *CogroupedStream[string, string]) Table[Windowed[string], string] {
		return CogroupWindowedAggregate(c, "cg", "cg-store", TimeWindows{Size: 10 * time.Millisecond, Grace: 2 * time.Millisecond}, initAgg, serdes.String)
	})
	d.pipeS("clicks", "a", "x", 1)
	d.pipeS("clicks", "a", "x", 12) // clicks close [0,10) at 12 - 2 >= 10
	d.pipeS("views", "a", "x", 3)   // views have seen only 3: accepted
	d.pipeS("clicks", "a", "x", 4)  // late for clicks: dropped
	d.pipeS("views", "a", "x", 11)  // views: 11 - 2 < 10, [0,10) still open for them
	d.pipeS("views", "a", "x", 5)
	d.pipeS("views", "a", "x", 13) // views: close time 11 > 10
	d.pipeS("views", "a", "x", 6)  // late for views: dropped
	wantChanges(t, out, "a[0,10]=>c@1", "a[10,20]=>c@12", "a[0,10]=>cv@3",
		"a[10,20]=>cv@12", "a[0,10]=>cvv@5", "a[10,20]=>cvv@13")
	if got := d.Tasks()[0].Stats().Dropped; got != 2 {
		t.Fatalf("dropped = %d, want 2", got)
	}
}

func TestCogroupSlidingSharesWindowsAcrossInputs(t *testing.T) {
	d, out := cogroupWindowDrv(t, func(c *CogroupedStream[string, string]) Table[Windowed[string], string] {
		return CogroupSlidingAggregate(c, "cg", "cg-store", SlidingWindows{TimeDifference: 10 * time.Millisecond}, initAgg, serdes.String)
	})
	d.pipeS("clicks", "a", "x", 5)  // early: the combined window [0,10]
	d.pipeS("views", "a", "x", 20)  // its own left window
	d.pipeS("clicks", "a", "x", 15) // updates [10,20], creates [6,16], [5,15] and [16,26]
	wantChanges(t, out, "a[0,10]=>c@5", "a[10,20]=>v@20",
		"a[10,20]=>vc@20", "a[6,16]=>c@15", "a[5,15]=>cc@15", "a[16,26]=>v@20")
}

func sessionCogroup(w SessionWindows) func(c *CogroupedStream[string, string]) Table[Windowed[string], string] {
	return func(c *CogroupedStream[string, string]) Table[Windowed[string], string] {
		merger := func(_ string, a, b string) string { return a + strings.TrimPrefix(b, ">") }
		return CogroupSessionAggregate(c, "cg", "cg-store", w, initAgg, merger, serdes.String)
	}
}

func TestCogroupSessionMergesSessionsOfBothInputs(t *testing.T) {
	d, out := cogroupWindowDrv(t, sessionCogroup(SessionWindows{Gap: 5 * time.Millisecond, Grace: 10 * time.Millisecond}))
	d.pipeS("clicks", "a", "x", 0)
	d.pipeS("views", "a", "x", 10)
	d.pipeS("clicks", "a", "x", 5) // bridges [0,0] and [10,10]: merger(merger(init, c), v) + c
	d.pipeS("views", "a", "x", 16) // gap 6: a new session
	wantChanges(t, out, "a[0,0]=>c@0", "a[10,10]=>v@10",
		"a[0,0]=null@0", "a[10,10]=null@10", "a[0,10]=>cvc@10",
		"a[16,16]=>v@16")
}

func TestCogroupSessionLatenessIsPerInput(t *testing.T) {
	// A long retention keeps the store from hiding old sessions, so only
	// the processors' own stream times decide.
	d, out := cogroupWindowDrv(t, sessionCogroup(SessionWindows{Gap: 5 * time.Millisecond, Retention: time.Hour}))
	d.pipeS("clicks", "a", "x", 100)
	d.pipeS("views", "a", "x", 0)  // views have seen only 0: accepted
	d.pipeS("clicks", "a", "x", 1) // clicks: [0,1] ends before 100 - 5
	d.pipeS("views", "a", "x", 2)  // views: merges into [0,2]
	wantChanges(t, out, "a[100,100]=>c@100", "a[0,0]=>v@0", "a[0,0]=null@0", "a[0,2]=>vv@2")
	if got := d.Tasks()[0].Stats().Dropped; got != 1 {
		t.Fatalf("dropped = %d, want 1", got)
	}
}

// With the default retention (gap + grace) the shared store hides the
// sessions that ended before its own stream time minus the retention, so
// a lagging input neither merges with them nor sees them again.
func TestCogroupSessionSharedStoreHidesExpiredSessions(t *testing.T) {
	d, out := cogroupWindowDrv(t, sessionCogroup(SessionWindows{Gap: 5 * time.Millisecond}))
	d.pipeS("clicks", "a", "x", 100)
	d.pipeS("views", "a", "x", 0) // accepted by views, expired in the store
	d.pipeS("views", "a", "x", 2) // [0,0] is not found: a session of its own
	wantChanges(t, out, "a[100,100]=>c@100", "a[0,0]=>v@0", "a[2,2]=>v@2")
}

func TestCogroupWindowedStoreAndNodes(t *testing.T) {
	tp, err := newTopology("app", func(b *Builder) {
		clicks := GroupByKey(Source(b, "clicks", strSrc("clicks")), serdes.String, serdes.String)
		views := GroupByKey(Source(b, "views", strSrc("views")), serdes.String, serdes.String)
		c := Cogroup(clicks, func(_ string, _ string, agg string) string { return agg + "c" })
		c = CogroupWith(c, views, func(_ string, _ string, agg string) string { return agg + "v" })
		CogroupWindowedAggregate(c, "cg", "cg-store", TimeWindows{Size: time.Hour, Grace: time.Minute}, initAgg, serdes.String, WindowStoreInMemory())
	})
	if err != nil {
		t.Fatal(err)
	}
	st := tp.stores["cg-store"]
	if st == nil || st.Kind != WindowStore || st.Retention != time.Hour+time.Minute || st.WindowSize != time.Hour || !st.InMemory {
		t.Fatalf("store = %+v", st)
	}
	var got []string
	for _, n := range tp.nodes {
		if strings.HasPrefix(n.Name, "cg") {
			got = append(got, fmt.Sprintf("%s:%s:%v", n.Name, n.Op, n.Stores))
		}
	}
	want := "cg-cogroup-agg-0:cogroup_window_aggregate:[cg-store] cg-cogroup-agg-1:cogroup_window_aggregate:[cg-store] cg:cogroup_merge:[]"
	if strings.Join(got, " ") != want {
		t.Fatalf("nodes = %q, want %q", got, want)
	}
	if len(tp.subs) != 1 {
		t.Fatalf("%d sub-topologies, want 1 (the shared store joins both inputs)", len(tp.subs))
	}
}

func TestCogroupSessionNeedsAMerger(t *testing.T) {
	_, err := newTopology("app", func(b *Builder) {
		clicks := GroupByKey(Source(b, "clicks", strSrc("clicks")), serdes.String, serdes.String)
		c := Cogroup(clicks, func(_ string, _ string, agg string) string { return agg + "c" })
		CogroupSessionAggregate(c, "cg", "cg-store", SessionWindows{Gap: time.Second}, initAgg, nil, serdes.String)
	})
	if err == nil || !strings.Contains(err.Error(), "need a merger") {
		t.Fatalf("err = %v, want a missing-merger error", err)
	}
}
