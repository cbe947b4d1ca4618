package sgstream

import (
	"strconv"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

func TestCountEmitsEveryUpdateAndSkipsNulls(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		c := Count(GroupByKey(s, serdes.String, serdes.String), "count", "counts")
		To(ToStream(c, "s"), "sink", "out", i64Sink())
	})
	d.pipeS("in", "a", "x", 1)
	d.pipeS("in", "b", "x", 2)
	d.pipeS("in", "a", "x", 3)
	d.pipeS("in", nullStr, "x", 4) // null key: dropped
	d.pipeS("in", "a", nullStr, 5) // null value: dropped
	d.pipeS("in", "a", "x", 4)     // value ts = max(4, 3)
	wantOut(t, d.outS("out", decI64), "a=1@1", "b=1@2", "a=2@3", "a=3@4")
	if got := d.Tasks()[0].Stats().Dropped; got != 2 {
		t.Fatalf("dropped = %d, want 2", got)
	}
}

func TestReduceStoresFirstValueAndKeepsMaxTimestamp(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		r := Reduce(GroupByKey(s, serdes.String, serdes.String), "reduce", "r-store", func(agg, v string) string { return agg + "+" + v })
		To(ToStream(r, "s"), "sink", "out", strSink())
	})
	d.pipeS("in", "a", "x", 10)
	d.pipeS("in", "a", "y", 3) // out of order: value ts stays 10
	d.pipeS("in", "a", "z", 12)
	wantOut(t, d.outS("out", nil), "a=x@10", "a=x+y@10", "a=x+y+z@12")
}

func TestAggregateInitializerAndMaxTimestamp(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		a := Aggregate(GroupByKey(s, serdes.String, serdes.String), "agg", "a-store",
			func() string { return "0" }, func(k, v, agg string) string { return agg + "," + k + v }, serdes.String)
		To(ToStream(a, "s"), "sink", "out", strSink())
	})
	d.pipeS("in", "a", "1", 5)
	d.pipeS("in", "b", "1", 1)
	d.pipeS("in", "a", "2", 2)
	wantOut(t, d.outS("out", nil), "a=0,a1@5", "b=0,b1@1", "a=0,a1,a2@5")
}

func TestGroupByRepartitionsByNewKey(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		g := GroupBy(s, "by-value", func(_ string, v string) string { return v }, serdes.String, serdes.String)
		To(ToStream(Count(g, "count", "counts"), "s"), "sink", "out", i64Sink())
	}, DefaultPartitions(2))
	d.pipeS("in", "a", "x", 1)
	d.pipeS("in", "b", "x", 2)
	d.pipeS("in", "c", "y", 3)
	wantOut(t, d.outS("out", decI64), "x=1@1", "x=2@2", "y=1@3")
	rep := d.Output("app-by-value-repartition")
	if len(rep) != 3 || string(rep[1].Key) != "x" || string(rep[1].Value) != "x" {
		t.Fatalf("repartition topic: %+v", rep)
	}
	// Every count of x ran in the task of x's partition.
	px := choosePartition([]byte("x"), 2)
	s, err := d.Store("counts", px)
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := NewKVStore(s, serdes.String, serdes.Int64)
	if n, ts, ok, err := kv.Get("x"); err != nil || !ok || n != 2 || ts != 2 {
		t.Fatalf("count of x on partition %d: %d@%d %v %v", px, n, ts, ok, err)
	}
}

func TestGroupByKeyRepartitionsOnlyWhenAsked(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		sel := SelectKey(s, "sel", func(_ string, v string) string { return v })
		To(ToStream(Count(GroupByKey(sel, serdes.String, serdes.String, RepartitionAs("rekeyed")), "count", "counts"), "s"), "sink", "out", i64Sink())
	})
	d.pipeS("in", "a", "x", 1)
	wantOut(t, d.outS("out", decI64), "x=1@1")
	if rep := d.Output("app-rekeyed-repartition"); len(rep) != 1 {
		t.Fatalf("repartition records = %d, want 1", len(rep))
	}
}

// userRegions is a table user → region, grouped by region.
func userRegions(b *Builder) (Table[string, string], GroupedTable[string, string]) {
	users := TableSource(b, "users", strSrc("users"), "users-store")
	g := GroupByTable(users, "by-region", func(user, region string) (string, string) { return region, user }, serdes.String, serdes.String)
	return users, g
}

func TestCountTableMovesRowsAndReachesZero(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		_, g := userRegions(b)
		To(ToStream(CountTable(g, "count", "region-counts"), "s"), "sink", "out", i64Sink())
	})
	d.pipeS("users", "u1", "eu", 1)
	d.pipeS("users", "u2", "eu", 2)
	d.pipeS("users", "u1", "us", 3) // moves: subtract from eu, add to us
	d.pipeS("users", "u2", "us", 4) // eu reaches 0, not a tombstone
	d.pipeS("users", "u2", "us", 5) // same group: one record, subtract and add, one update
	d.pipeS("users", "u1", nullStr, 6)
	wantOut(t, d.outS("out", decI64),
		"eu=1@1", "eu=2@2",
		"eu=1@3", "us=1@3",
		"eu=0@4", "us=2@4",
		"us=2@5",
		"us=1@6")
}

func TestGroupByTableRepartitionRecords(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		_, g := userRegions(b)
		CountTable(g, "count", "region-counts")
	})
	d.pipeS("users", "u1", "eu", 1)
	d.pipeS("users", "u1", "us", 2)
	d.pipeS("users", "u1", "us", 3)
	var got []string
	cs := tableChangeSerde[string]{Inner: serdes.String}
	for _, r := range d.Output("app-by-region-repartition") {
		c, err := cs.Decode(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(r.Key)+":"+fmtChange(c)+"@"+strconv.FormatInt(r.Timestamp, 10))
	}
	wantOut(t, got, "eu:(u1,null)@1", "eu:(null,u1)@2", "us:(u1,null)@2", "us:(u1,u1)@3")
}

func fmtChange(c tableChange[string]) string {
	n, o := c.New, c.Old
	if c.NewNull {
		n = "null"
	}
	if c.OldNull {
		o = "null"
	}
	return "(" + n + "," + o + ")"
}

func TestChangeSerdeRoundTrip(t *testing.T) {
	cs := tableChangeSerde[string]{Inner: serdes.String}
	for _, c := range []tableChange[string]{
		{New: "n", OldNull: true}, {Old: "o", NewNull: true}, {New: "", Old: "old"}, {New: "new", Old: ""},
	} {
		b, err := cs.Append(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cs.Decode(b)
		if err != nil || got != c {
			t.Fatalf("%+v: round trip gave %+v, %v", c, got, err)
		}
	}
	if _, err := cs.Append(nil, tableChange[string]{NewNull: true, OldNull: true}); err == nil {
		t.Fatal("change with neither half encoded")
	}
}

func TestAggregateAndReduceTableAdderSubtractor(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		users := TableSource(b, "scores", strSrc("scores"), "scores-store")
		g := GroupByTable(users, "by-team", func(user, v string) (string, int64) {
			n, _ := strconv.ParseInt(v[2:], 10, 64)
			return v[:1], n
		}, serdes.String, serdes.Int64)
		sum := AggregateTable(g, "sum", "sums", func() int64 { return 0 },
			func(_ string, v, agg int64) int64 { return agg + v },
			func(_ string, v, agg int64) int64 { return agg - v }, serdes.Int64)
		To(ToStream(sum, "s"), "sink", "out", i64Sink())
		red := ReduceTable(g, "red", "reds", func(agg, v int64) int64 { return agg + v }, func(agg, v int64) int64 { return agg - v })
		To(ToStream(red, "s2"), "sink2", "out2", i64Sink())
	})
	d.pipeS("scores", "u1", "a:5", 1)
	d.pipeS("scores", "u2", "a:7", 2)
	d.pipeS("scores", "u1", "b:5", 3)
	d.pipeS("scores", "u2", nullStr, 4)
	want := []string{"a=5@1", "a=12@2", "a=7@3", "b=5@3", "a=0@4"}
	wantOut(t, d.outS("out", decI64), want...)
	wantOut(t, d.outS("out2", decI64), want...)
}

func TestCogroupFoldsSeveralStreamsIntoOneStore(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		clicks := GroupByKey(Source(b, "clicks", strSrc("clicks")), serdes.String, serdes.String)
		views := GroupByKey(Source(b, "views", strSrc("views")), serdes.String, serdes.String)
		c := Cogroup(clicks, func(_ string, _ string, agg string) string { return agg + "c" })
		c = CogroupWith(c, views, func(_ string, _ string, agg string) string { return agg + "v" })
		tb := CogroupAggregate(c, "cg", "cg-store", func() string { return ">" }, serdes.String)
		To(ToStream(tb, "s"), "sink", "out", strSink())
	})
	d.pipeS("clicks", "a", "1", 1)
	d.pipeS("views", "a", "1", 5)
	d.pipeS("clicks", "a", "1", 3)
	d.pipeS("views", "b", nullStr, 6) // null value: dropped
	wantOut(t, d.outS("out", nil), "a=>c@1", "a=>cv@5", "a=>cvc@5")
}
