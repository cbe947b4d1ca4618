package sgstream

import (
	"slices"
	"testing"
	"time"
)

// Stream-stream join tests. The scenarios and expected outputs follow Kafka
// Streams' documented behaviour and its KStreamKStream{,Left,Outer}JoinTest
// (TopologyTestDriver, emit interval 0); keys are strings here.

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// ssStores selects the join's window stores: "fake" (the test fake with
// Kafka's in-memory semantics), "memory" or "pebble" (the built-in ones).
var ssStores = "fake"

func ssJoin(t *testing.T, kind JoinKind, w JoinWindows) *jdrv {
	var opts []WindowStoreOpt
	var dopts []DriverOpt
	switch ssStores {
	case "fake":
		opts = append(opts, joinTestWindowStores())
	case "pebble":
		dopts = append(dopts, StateDir(t.TempDir()))
	}
	return newJDrv(t, func(b *Builder) {
		l := Source(b, "left", jvSrc("left"))
		r := Source(b, "right", jvSrc("right"))
		j := JoinStreams(l, r, "j", kind, w, joinStr, jvJoinSerdes, opts...)
		To(j, "sink", "out", jvSink())
	}, dopts...)
}

// TestJoinStreamsBuiltinStores runs the scenarios on the built-in window
// stores, in memory and on Pebble.
func TestJoinStreamsBuiltinStores(t *testing.T) {
	scenarios := map[string]func(*testing.T){
		"bounds":      TestJoinStreamsInnerBoundsInclusiveOnBothSides,
		"matchOrder":  TestJoinStreamsInnerJoinsEveryMatchInTimestampOrder,
		"asymmetric":  TestJoinStreamsAsymmetricWindow,
		"leftExpired": TestJoinStreamsLeftEmitsUnmatchedOnlyAfterWindowCloses,
		"leftRight":   TestJoinStreamsLeftNeverEmitsRightUnmatched,
		"duplicates":  TestJoinStreamsLeftDuplicatesAndGrace,
		"grace":       TestJoinStreamsLeftGraceBoundary,
		"zeroAfter":   TestJoinStreamsLeftZeroAfter,
		"outerAsym":   TestJoinStreamsOuterAsymmetricEmitsBothSidesInOrder,
		"outerOrder":  TestJoinStreamsOuterOrderRightBeforeLeftThenKey,
		"ordering":    TestJoinStreamsOrdering,
		"tooLate":     TestJoinStreamsTooLateRecordIsEmittedAtOnce,
		"retention":   TestJoinStreamsStoreRetentionExpiresOldRecords,
		"nulls":       TestJoinStreamsNullKeysAndValues,
		"sharedTime":  TestJoinStreamsOuterStoreAndStreamTimeShared,
		"zeroWindow":  TestJoinStreamsZeroWindowJoinsEqualTimestamps,
	}
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, mode := range []string{"memory", "pebble"} {
		t.Run(mode, func(t *testing.T) {
			ssStores = mode
			defer func() { ssStores = "fake" }()
			for _, n := range names {
				t.Run(n, scenarios[n])
			}
		})
	}
}

func TestJoinStreamsDeclaresKafkaStores(t *testing.T) {
	tp, err := newTopology("app", func(b *Builder) {
		l := Source(b, "left", jvSrc("left"))
		r := Source(b, "right", jvSrc("right"))
		To(JoinStreams(l, r, "j", LeftJoin, JoinWindows{Before: ms(100), After: ms(50), Grace: ms(10)}, joinStr, jvJoinSerdes), "sink", "out", jvSink())
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"j-this", "j-other"} {
		s := tp.Store(name)
		if s == nil || s.Kind != WindowStore || !s.RetainDuplicates || s.WindowSize != ms(150) || s.Retention != ms(160) || !s.Logged {
			t.Fatalf("store %s: %+v", name, s)
		}
	}
	if s := tp.Store("j-outer"); s == nil || s.Kind != KeyValueStore {
		t.Fatalf("outer store: %+v", s)
	}
	if subs := tp.SubTopologies(); len(subs) != 1 || len(subs[0].Topics) != 2 {
		t.Fatalf("both sides must run in one sub-topology: %+v", subs)
	}
	// An inner join has no outer store.
	tp, err = newTopology("app", func(b *Builder) {
		l := Source(b, "left", jvSrc("left"))
		r := Source(b, "right", jvSrc("right"))
		To(JoinStreams(l, r, "j", InnerJoin, JoinWindows{Before: ms(1), After: ms(1)}, joinStr, jvJoinSerdes), "sink", "out", jvSink())
	})
	if err != nil {
		t.Fatal(err)
	}
	if tp.Store("j-outer") != nil {
		t.Fatal("inner join declared an outer store")
	}
	// With a store name the stores have Kafka Streams' names for
	// StreamJoined.withStoreName, and so have their changelogs.
	for _, c := range []struct {
		kind               JoinKind
		this, other, outer string
	}{
		{InnerJoin, "s-this-join-store", "s-other-join-store", ""},
		{LeftJoin, "s-this-join-store", "s-outer-other-join-store", "s-left-shared-join-store"},
		{OuterJoin, "s-outer-this-join-store", "s-outer-other-join-store", "s-outer-shared-join-store"},
	} {
		sd := jvJoinSerdes
		sd.StoreName = "s"
		tp, err = newTopology("app", func(b *Builder) {
			l := Source(b, "left", jvSrc("left"))
			r := Source(b, "right", jvSrc("right"))
			To(JoinStreams(l, r, "j", c.kind, JoinWindows{Before: ms(1), After: ms(1)}, joinStr, sd), "sink", "out", jvSink())
		})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(tp.SubTopologies()[0].Stores))
		want := []string{c.this, c.other}
		if c.outer != "" {
			want = append(want, c.outer)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%v join stores %q, want %q", c.kind, got, want)
		}
	}
	// before + after < 0 is rejected, as JoinWindows does.
	_, err = newTopology("app", func(b *Builder) {
		l := Source(b, "left", jvSrc("left"))
		r := Source(b, "right", jvSrc("right"))
		To(JoinStreams(l, r, "j", InnerJoin, JoinWindows{Before: ms(-10), After: ms(5)}, joinStr, jvJoinSerdes), "sink", "out", jvSink())
	})
	if err == nil {
		t.Fatal("negative window accepted")
	}
}

func TestJoinStreamsInnerBoundsInclusiveOnBothSides(t *testing.T) {
	// The grace only keeps the stores' entries long enough for the test.
	d := ssJoin(t, InnerJoin, JoinWindows{Before: ms(100), After: ms(100), Grace: ms(1000)})
	for _, k := range []string{"a", "b", "c", "d"} {
		d.pipe("left", k, "L"+k, 1000)
	}
	d.expectOut()
	// Right records look for left ones in [ts - after, ts + before].
	d.pipe("right", "a", "r", 900) // left.ts - before: joins
	d.pipe("right", "b", "r", 899) // one below: no
	d.pipe("right", "c", "r", 1100)
	d.pipe("right", "d", "r", 1101)
	d.expectOut("a:La+r@1000", "c:Lc+r@1100")

	// Left records look for right ones in [ts - before, ts + after].
	d.pipe("right", "e", "r", 1000)
	d.pipe("right", "f", "r", 999)
	d.pipe("right", "g", "r", 1200)
	d.pipe("right", "h", "r", 1201)
	d.expectOut()
	for _, k := range []string{"e", "f", "g", "h"} {
		d.pipe("left", k, "L"+k, 1100)
	}
	d.expectOut("e:Le+r@1100", "g:Lg+r@1200")
}

func TestJoinStreamsInnerJoinsEveryMatchInTimestampOrder(t *testing.T) {
	d := ssJoin(t, InnerJoin, JoinWindows{Before: ms(100), After: ms(100)})
	d.pipe("right", "k", "r2", 20)
	d.pipe("right", "k", "r1", 10)
	d.pipe("right", "k", "r1b", 10) // a duplicate timestamp: insertion order
	d.pipe("left", "k", "A", 15)
	// Value order is (left, right) whichever side arrives; ts = max.
	d.expectOut("k:A+r1@15", "k:A+r1b@15", "k:A+r2@20")
	d.pipe("left", "k", "B", 5)
	d.expectOut("k:B+r1@10", "k:B+r1b@10", "k:B+r2@20")
	d.pipe("right", "k", "r3", 12)
	// Left matches come in timestamp order too: B (5) before A (15).
	d.expectOut("k:B+r3@12", "k:A+r3@15")
	// Inner joins never emit unmatched records.
	d.pipe("left", "x", "X", 1000)
	d.pipe("right", "y", "Y", 5000)
	d.expectOut()
}

func TestJoinStreamsAsymmetricWindow(t *testing.T) {
	// KStreamKStreamLeftJoinTest.shouldNotEmitLeftJoinResultForAsymmetricWindow:
	// before 0, after 100.
	d := ssJoin(t, LeftJoin, JoinWindows{Before: 0, After: ms(100)})
	d.pipe("left", "0", "A0", 0)
	d.pipe("left", "1", "A1", 1)
	d.expectOut()
	d.pipe("right", "0", "a0", 100)
	d.expectOut("0:A0+a0@100")
	d.pipe("right", "1", "a1", 102)
	d.expectOut("1:A1+null@1")

	// A right record before the left one is outside a before-0 window.
	d2 := ssJoin(t, InnerJoin, JoinWindows{Before: 0, After: ms(100)})
	d2.pipe("right", "k", "early", 49)
	d2.pipe("right", "k", "same", 50)
	d2.pipe("left", "k", "A", 50)
	d2.pipe("right", "k", "late", 150)
	d2.pipe("right", "k", "toolate", 151)
	d2.expectOut("k:A+same@50", "k:A+late@150")
}

// TestJoinStreamsOrdering: a left or outer join emits the unmatched left
// record whose window a newer record closed before the join result that
// newer record makes (KStreamKStreamLeftJoinTest.testOrdering and
// KStreamKStreamOuterJoinTest.testOrdering).
func TestJoinStreamsOrdering(t *testing.T) {
	for _, c := range []struct {
		name  string
		kind  JoinKind
		right string
	}{
		{"left", LeftJoin, "a1"},
		{"outer", OuterJoin, "11"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := ssJoin(t, c.kind, JoinWindows{Before: ms(100), After: ms(100)})
			d.pipe("left", "0", "A0", 0)
			d.pipe("left", "1", "A1", 100)
			d.expectOut()
			d.pipe("right", "1", c.right, 110)
			d.expectOut("0:A0+null@0", "1:A1+"+c.right+"@110")
		})
	}
}

func TestJoinStreamsLeftEmitsUnmatchedOnlyAfterWindowCloses(t *testing.T) {
	// KStreamKStreamLeftJoinTest.testLeftExpiredNonJoinedRecordsAreEmitted*.
	for _, trigger := range []string{"left", "right"} {
		t.Run(trigger, func(t *testing.T) {
			d := ssJoin(t, LeftJoin, JoinWindows{Before: ms(100), After: ms(100)})
			d.pipe("left", "0", "A0", 1)
			d.pipe("left", "1", "A1", 2)
			d.pipe("left", "0", "A0-0", 3)
			d.expectOut()
			d.pipe("right", "1", "a1", 3)
			d.expectOut("1:A1+a1@3")
			// Stream time 103 = 3 + after: A0-0's window is still open.
			d.pipe(trigger, "9", "x", 103)
			d.expectOut("0:A0+null@1")
			d.pipe("right", "8", "y", 401)
			// A1 found a match, so it is never emitted with null; a left
			// trigger x is itself unmatched by now.
			if trigger == "left" {
				d.expectOut("0:A0-0+null@3", "9:x+null@103")
			} else {
				d.expectOut("0:A0-0+null@3")
			}
		})
	}
}

func TestJoinStreamsLeftNeverEmitsRightUnmatched(t *testing.T) {
	// KStreamKStreamLeftJoinTest.testRightNonJoinedRecordsAreNeverEmitted*.
	d := ssJoin(t, LeftJoin, JoinWindows{Before: ms(100), After: ms(100)})
	d.pipe("right", "0", "A0", 1)
	d.pipe("right", "1", "A1", 2)
	d.pipe("right", "0", "A0-0", 3)
	d.pipe("left", "1", "a1", 3)
	d.expectOut("1:a1+A1@3")
	d.pipe("left", "2", "dummy", 401)
	d.pipe("right", "2", "dummy", 402)
	d.expectOut("2:dummy+dummy@402")
}

func TestJoinStreamsLeftDuplicatesAndGrace(t *testing.T) {
	// KStreamKStreamLeftJoinTest.testLeftJoinDuplicates.
	d := ssJoin(t, LeftJoin, JoinWindows{Before: ms(100), After: ms(100), Grace: ms(10)})
	d.pipe("left", "0", "A0", 0)
	d.pipe("left", "0", "A0-0", 0)
	d.pipe("right", "1", "a0", 111)
	d.pipe("right", "2", "dummy", 500)
	d.expectOut("0:A0+null@0", "0:A0-0+null@0")
	d.pipe("left", "2", "A2", 1000)
	d.pipe("left", "2", "A2-0", 1000)
	d.pipe("right", "2", "a2", 1001)
	d.expectOut("2:A2+a2@1001", "2:A2-0+a2@1001")
	d.pipe("right", "3", "a3", 315)
	d.expectOut()
}

func TestJoinStreamsLeftGraceBoundary(t *testing.T) {
	// KStreamKStreamLeftJoinTest.testGracePeriod, and the exact boundary:
	// a left record at T is emitted once stream time > T + after + grace.
	d := ssJoin(t, LeftJoin, JoinWindows{Before: ms(100), After: ms(100), Grace: ms(10)})
	d.pipe("left", "0", "A0", 0)
	d.pipe("left", "1", "A1", 0)
	for _, k := range []string{"0", "1", "2", "3"} {
		d.pipe("right", k, "a"+k, 101)
	}
	d.expectOut()
	d.pipe("right", "9", "x", 110) // 0 + 100 + 10: not yet
	d.expectOut()
	d.pipe("right", "9", "y", 111)
	d.expectOut("0:A0+null@0", "1:A1+null@0")
}

func TestJoinStreamsLeftZeroAfter(t *testing.T) {
	// KStreamKStreamLeftJoinTest.testLeftJoinedRecordsWithZeroAfterAreEmitted
	// (before 100, after 0): a record's window closes as soon as stream
	// time passes it, yet a later in-window right record still joins.
	d := ssJoin(t, LeftJoin, JoinWindows{Before: ms(100), After: 0})
	keys := []string{"0", "1", "2", "3"}
	for i, k := range keys {
		d.pipe("left", k, "A"+k, 1000+int64(i))
	}
	d.expectOut("0:A0+null@1000", "1:A1+null@1001", "2:A2+null@1002")
	for _, k := range keys {
		d.pipe("right", k, "a"+k, 999)
	}
	d.expectOut("0:A0+a0@1000", "1:A1+a1@1001", "2:A2+a2@1002", "3:A3+a3@1003")
	for _, k := range keys {
		d.pipe("right", k, "c"+k, 1001)
	}
	d.expectOut("1:A1+c1@1001", "2:A2+c2@1002", "3:A3+c3@1003")
	for _, k := range keys {
		d.pipe("right", k, "f"+k, 1100)
	}
	d.expectOut()
}

func TestJoinStreamsOuterAsymmetricEmitsBothSidesInOrder(t *testing.T) {
	// KStreamKStreamOuterJoinTest.testEmitAllNonJoinedResultsForAsymmetricWindow:
	// before 5, after 20. Left records wait for stream time > T + 20, right
	// ones for > T + 5, and a pass runs only when minTime + X + grace <
	// stream time with X of the triggering side.
	d := ssJoin(t, OuterJoin, JoinWindows{Before: ms(5), After: ms(20)})
	d.pipe("left", "0", "A0", 29)
	d.pipe("left", "1", "A1", 30)
	d.pipe("right", "2", "12", 31)
	d.pipe("right", "3", "13", 36)
	d.expectOut()
	d.pipe("right", "4", "14", 37)
	d.expectOut("2:null+12@31")
	d.pipe("right", "5", "15", 50)
	d.expectOut("0:A0+null@29", "3:null+13@36", "4:null+14@37")
}

func TestJoinStreamsOuterOrderRightBeforeLeftThenKey(t *testing.T) {
	d := ssJoin(t, OuterJoin, JoinWindows{Before: ms(10), After: ms(10)})
	d.pipe("left", "b", "B", 10)
	d.pipe("right", "c", "yc", 10)
	d.pipe("left", "a", "A", 10)
	d.pipe("right", "a", "ya", 10) // joins A
	d.pipe("right", "d", "yd", 10)
	d.pipe("left", "e", "E", 5)
	d.expectOut("a:A+ya@10")
	d.pipe("left", "z", "Z", 100)
	// Stored order: (5, left, e), (10, right, c), (10, right, d),
	// (10, left, b); Z itself waits.
	d.expectOut("e:E+null@5", "c:null+yc@10", "d:null+yd@10", "b:B+null@10")
	d.pipe("right", "z", "yz", 100)
	d.expectOut("z:Z+yz@100")
}

func TestJoinStreamsTooLateRecordIsEmittedAtOnce(t *testing.T) {
	// A record whose window already closed (ts + after < stream time)
	// cannot match later, so it skips the outer store.
	d := ssJoin(t, LeftJoin, JoinWindows{Before: ms(100), After: ms(100)})
	d.pipe("left", "x", "X", 500)
	d.pipe("left", "k", "A", 399) // 399 + 100 < 500
	d.expectOut("k:A+null@399")
	d.pipe("left", "k", "B", 400) // 400 + 100 = 500: still stored
	d.expectOut()
	d.pipe("right", "k", "b", 450)
	// A is still in the left window store; only its null result was early.
	d.expectOut("k:A+b@450", "k:B+b@450")
}

func TestJoinStreamsStoreRetentionExpiresOldRecords(t *testing.T) {
	// Join stores keep before + after + grace = 200ms behind their own
	// observed stream time; older entries are invisible to fetches.
	d := ssJoin(t, InnerJoin, JoinWindows{Before: ms(100), After: ms(100)})
	d.pipe("left", "k", "A", 100)
	d.pipe("left", "other", "X", 301) // left store observed 301: A (100 <= 101) expired
	d.pipe("right", "k", "b", 150)    // in A's window, but A is gone
	d.expectOut()
	d.pipe("left", "k", "C", 150)
	d.expectOut("k:C+b@150")
}

func TestJoinStreamsNullKeysAndValues(t *testing.T) {
	d := ssJoin(t, LeftJoin, JoinWindows{Before: ms(10), After: ms(10)})
	// A left record with a null key cannot match: a left join emits it at
	// once with a null right side (and a null key).
	d.pipe("left", jNull, "A", 5)
	d.expectOut("null:A+null@5")
	// Null values are skipped; so are right null keys in a left join.
	d.pipe("left", "k", jNull, 6)
	d.pipe("right", jNull, "r", 6)
	d.pipe("right", "k", jNull, 6)
	d.expectOut()
	if got := d.dropped(); got != 3 {
		t.Fatalf("dropped %d records, want 3", got)
	}

	o := ssJoin(t, OuterJoin, JoinWindows{Before: ms(10), After: ms(10)})
	o.pipe("right", jNull, "r", 5)
	o.expectOut("null:null+r@5")

	in := ssJoin(t, InnerJoin, JoinWindows{Before: ms(10), After: ms(10)})
	in.pipe("left", jNull, "A", 5)
	in.pipe("right", jNull, "r", 5)
	in.expectOut()
}

func TestJoinStreamsOuterStoreAndStreamTimeShared(t *testing.T) {
	// The stream time that closes windows is shared by both sides: a right
	// record advances it for stored left records and vice versa, and a
	// record with a smaller timestamp than stream time never starts a pass.
	d := ssJoin(t, OuterJoin, JoinWindows{Before: ms(10), After: ms(10)})
	d.pipe("left", "a", "A", 100)
	d.pipe("right", "b", "B", 200)
	d.expectOut("a:A+null@100")
	d.pipe("left", "c", "C", 150) // late: 160 < 200, emitted at once
	d.expectOut("c:C+null@150")
	d.pipe("left", "d", "D", 205) // 205 > 200 + 10? no: nothing yet
	d.expectOut()
	d.pipe("left", "e", "E", 211)
	d.expectOut("b:null+B@200")
}

// TestJoinStreamsZeroWindowJoinsEqualTimestamps: before = after = grace = 0
// is a valid window in which only records with equal timestamps join. It
// used to fail at task start, because the join stores got retention 0.
func TestJoinStreamsZeroWindowJoinsEqualTimestamps(t *testing.T) {
	for _, kind := range []JoinKind{InnerJoin, LeftJoin} {
		t.Run(kind.String(), func(t *testing.T) {
			d := ssJoin(t, kind, JoinWindows{})
			d.pipe("left", "k", "A", 5)
			d.pipe("right", "k", "a", 5)
			d.expectOut("k:A+a@5")
			d.pipe("right", "other", "x", 5) // equal time, other key
			// Stream time 6 closes A's window; A found a match, so even a
			// left join never emits it with null.
			d.pipe("right", "k", "b", 6)
			d.pipe("left", "k", "B", 7) // b is at 6: no match
			d.expectOut()
			d.pipe("left", "k", "C", 8)
			d.pipe("right", "k", "c", 8)
			want := []string{"k:C+c@8"}
			if kind == LeftJoin {
				// B's window closed at stream time 8, before C joined.
				want = []string{"k:B+null@7", "k:C+c@8"}
			}
			d.expectOut(want...)
		})
	}
}
