package sgstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// recountTopology counts per key into a cached store, then re-groups every
// count under one key (a repartition topic, so a second sub-topology) and
// counts again.
func recountTopology(b *Builder) {
	s := Source(b, "src", strSrc("in"))
	c := Count(GroupByKey(s, serdes.String, serdes.String), "count", "counts")
	g := GroupBy(ToStream(c, "s"), "rekey", func(string, int64) string { return "all" }, serdes.String, serdes.Int64)
	To(ToStream(Count(g, "recount", "totals"), "s2"), "sink", "out", i64Sink())
}

// TestDriverCacheFlushIsProcessedInThePipe: with a record cache, the first
// count reaches the repartition topic only when the commit flushes it.
// TopologyTestDriver processes what a commit sends to an internal topic
// before pipeInput returns, so the second count's output is there at once.
func TestDriverCacheFlushIsProcessedInThePipe(t *testing.T) {
	d := newTDrv(t, recountTopology, CacheMaxBytes(1<<20))
	d.pipeS("in", "a", "x", 1)
	wantOut(t, d.outS("out", decI64), "all=1@1")
	d.pipeS("in", "b", "x", 2)
	wantOut(t, d.outS("out", decI64), "all=2@2")
}

// TestDriverTasksOfAPartitionShareTheCache: TopologyTestDriver's one task
// holds the stores of every sub-topology behind one ThreadCache, so the
// budget is shared; the driver's tasks of one partition share one too.
func TestDriverTasksOfAPartitionShareTheCache(t *testing.T) {
	d := newTDrv(t, recountTopology, CacheMaxBytes(1<<20))
	d.pipeS("in", "a", "x", 1)
	if len(d.order) != 2 {
		t.Fatalf("%d tasks, want 2", len(d.order))
	}
	first, second := d.tasks[d.order[0]], d.tasks[d.order[1]]
	if first.cache == nil || second.cache == nil || first.cache.c != second.cache.c {
		t.Fatalf("tasks of partition 0 do not share one record cache: %p, %p", first.cache, second.cache)
	}
}

// windowOnCloseTopology counts 10 ms windows, emitted when they close.
func windowOnCloseTopology(b *Builder) {
	s := Source(b, "source", strSrc("events"))
	g := GroupByKey(s, serdes.String, serdes.String)
	tbl := CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond}), "count", "store", EmitOnClose)
	tbl.to(nodeFunc[Windowed[string], tableChange[int64]](func(r Record[Windowed[string], tableChange[int64]]) error {
		return b.task.Send("out", 0, []byte(r.Key.Key), []byte(fmt.Sprint(r.Value.New)), r.Timestamp, nil, nil)
	}))
}

// TestDriverWindowEmitInterval: by default the driver scans for closed
// windows after every record, as TopologyTestDriver; with an interval, the
// scan waits for the wall clock to move that far.
func TestDriverWindowEmitInterval(t *testing.T) {
	d := newTDrv(t, windowOnCloseTopology)
	d.pipeS("events", "A", "x", 1)
	d.pipeS("events", "A", "x", 10)
	wantOut(t, d.outS("out", nil), "A=1@1")

	d = newTDrv(t, windowOnCloseTopology, EmitIntervals(time.Second, 0))
	d.pipeS("events", "A", "x", 1)
	d.pipeS("events", "A", "x", 10)
	wantOut(t, d.outS("out", nil))
	if err := d.AdvanceWallClock(time.Second); err != nil {
		t.Fatal(err)
	}
	d.pipeS("events", "A", "x", 11)
	wantOut(t, d.outS("out", nil), "A=1@1")
}

// TestDriverOuterJoinEmitInterval: an unmatched left record is emitted
// once its window closed, at once by default, and with an interval only
// after the wall clock moved.
func TestDriverOuterJoinEmitInterval(t *testing.T) {
	build := func(b *Builder) {
		l := Source(b, "left", jvSrc("left"))
		r := Source(b, "right", jvSrc("right"))
		To(JoinStreams(l, r, "j", LeftJoin, JoinWindows{Before: ms(10), After: ms(10)}, joinStr, jvJoinSerdes), "sink", "out", jvSink())
	}
	d := newTDrv(t, build)
	d.pipeS("left", "a", "A", 0)
	d.pipeS("left", "b", "B", 100)
	wantOut(t, d.outS("out", nil), "a=A+null@0")

	d = newTDrv(t, build, EmitIntervals(0, time.Second))
	d.pipeS("left", "a", "A", 0)
	d.pipeS("left", "b", "B", 100)
	wantOut(t, d.outS("out", nil))
	if err := d.AdvanceWallClock(time.Second); err != nil {
		t.Fatal(err)
	}
	d.pipeS("left", "c", "C", 101)
	wantOut(t, d.outS("out", nil), "a=A+null@0")
}

// partitionTicker forwards, every wall-clock second, the partition of its
// task and how many records it saw since the task was created.
type partitionTicker struct{ n int64 }

func (p *partitionTicker) Init(ctx *ProcessorContext[string, int64]) error {
	ctx.ScheduleWallClock(time.Second, func(ts int64) error {
		return ctx.Forward(Record[string, int64]{Key: fmt.Sprint("p", ctx.TaskID().Partition), Value: p.n, Timestamp: ts})
	})
	return nil
}
func (p *partitionTicker) Process(Record[string, string]) error { p.n++; return nil }
func (p *partitionTicker) Close() error                         { return nil }

// TestDriverWallClockCountsFromTheStart: TopologyTestDriver initializes
// its task when it is made, so a wall-clock schedule counts from the
// initial wall clock whether or not a record came first. Here the clock
// moves 1.1 s before any record and both partitions' tasks punctuate, in
// partition order, at 1100 (TopologyTestDriver 4.4.0 prints the same for
// one partition); the driver used to create a task on its first record,
// so nothing fired.
func TestDriverWallClockCountsFromTheStart(t *testing.T) {
	build := func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		p := Process(s, "tick", func() Processor[string, string, string, int64] { return &partitionTicker{} }, nil)
		To(p, "sink", "out", i64Sink())
	}
	d := newTDrv(t, build, DefaultPartitions(2))
	if err := d.AdvanceWallClock(1100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wantOut(t, d.outS("out", decI64), "p0=0@1100", "p1=0@1100")
	d.pipeS("in", "a", "x", 5)
	if err := d.AdvanceWallClock(900 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wantOut(t, d.outS("out", decI64), "p0=1@2000", "p1=0@2000")
}
