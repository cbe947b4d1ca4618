package sgstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// throttleRun is a bare task (no testDriver) whose wall clock the test sets
// per record, so the emit throttles of engine.TaskConfig decide what is emitted.
type throttleRun struct {
	t    *testing.T
	task *task
	col  *captured
	wall int64
	off  int64
}

func newThrottleRun(t *testing.T, build func(b *Builder), cfg engine.TaskConfig) *throttleRun {
	t.Helper()
	r := &throttleRun{t: t}
	cfg.Now = func() int64 { return r.wall }
	r.task, r.col = bareTask(t, build, cfg)
	return r
}

// pipe processes one record at wall-clock time wall (ms) and commits.
func (r *throttleRun) pipe(wall int64, topic, key string, value []byte, ts int64) {
	r.t.Helper()
	r.wall = wall
	r.off++
	if err := r.task.Process(&RawRecord{Topic: topic, Key: []byte(key), Value: value, Timestamp: ts, Offset: r.off}); err != nil {
		r.t.Fatal(err)
	}
	if err := r.task.Commit(nil); err != nil {
		r.t.Fatal(err)
	}
}

func (r *throttleRun) expect(want ...string) {
	r.t.Helper()
	wantOut(r.t, r.col.take("out", nil), want...)
}

// throttleCase is one emit throttle setting and the output it lets through.
type throttleCase struct {
	name     string
	interval time.Duration
	want     []string
}

func TestEmitIntervalResolution(t *testing.T) {
	for _, c := range []struct {
		set, def time.Duration
		want     int64
	}{
		{0, time.Second, 1000},
		{engine.NoEmitThrottle, time.Second, 0},
		{-time.Hour, time.Second, 0},
		{250 * time.Millisecond, time.Second, 250},
	} {
		if got := emitInterval(c.set, c.def); got != c.want {
			t.Errorf("emitInterval(%v, %v) = %d, want %d", c.set, c.def, got, c.want)
		}
	}
}

// TestWindowEmitIntervalFromTaskConfig: the second record, 500 ms of wall
// clock after the first, closes the window.
func TestWindowEmitIntervalFromTaskConfig(t *testing.T) {
	build := func(b *Builder) {
		s := Source(b, "source", SourceConfig[string, int64]{Topic: "events", Key: serdes.String, Value: serdes.Int64})
		g := GroupedStream[string, int64]{Stream: s, Key: serdes.String, Value: serdes.Int64}
		tbl := CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond}), "count", "store", EmitOnClose)
		tbl.to(nodeFunc[Windowed[string], tableChange[int64]](func(r Record[Windowed[string], tableChange[int64]]) error {
			return b.task.Send("out", 0, []byte(r.Key.Key), []byte(fmt.Sprint(r.Value.New)), r.Timestamp, nil, nil)
		}))
	}
	for _, c := range []throttleCase{
		{"default 1000ms holds the scan back", 0, nil},
		{"500ms lets it run", 500 * time.Millisecond, []string{"A=1@1"}},
		{"engine.NoEmitThrottle lets it run", engine.NoEmitThrottle, []string{"A=1@1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newThrottleRun(t, build, engine.TaskConfig{WindowEmitInterval: c.interval})
			v, _ := serdes.Int64.Append(nil, 1)
			r.pipe(0, "events", "A", v, 1)
			r.pipe(500, "events", "A", v, 10)
			r.expect(c.want...)
		})
	}
}

// TestOuterJoinEmitIntervalFromTaskConfig: the wall clock stands still, so
// any throttle above 0 holds the second emission pass back.
func TestOuterJoinEmitIntervalFromTaskConfig(t *testing.T) {
	build := func(b *Builder) {
		l := Source(b, "left", jvSrc("left"))
		r := Source(b, "right", jvSrc("right"))
		j := JoinStreams(l, r, "j", LeftJoin, JoinWindows{Before: ms(10), After: ms(10)}, joinStr, jvJoinSerdes)
		To(j, "sink", "out", jvSink())
	}
	for _, c := range []throttleCase{
		{"default 1000ms", 0, nil},
		{"engine.NoEmitThrottle", engine.NoEmitThrottle, []string{"a=A+null@0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newThrottleRun(t, build, engine.TaskConfig{OuterJoinEmitInterval: c.interval})
			r.pipe(0, "left", "a", []byte("A"), 0)
			r.expect()
			r.pipe(0, "left", "b", []byte("B"), 100) // A's window closed at 10
			r.expect(c.want...)
		})
	}
}
