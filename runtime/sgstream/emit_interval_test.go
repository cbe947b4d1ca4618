package sgstream

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// recCollector keeps what a task sends to topic "out" as "key:value@ts".
type recCollector struct{ out []string }

func (c *recCollector) Send(topic string, _ int32, key, value []byte, ts int64, _ []Header, _ []byte) error {
	if topic == "out" {
		c.out = append(c.out, fmt.Sprintf("%s:%s@%d", key, value, ts))
	}
	return nil
}

// throttleRun is a bare task (no TestDriver) whose wall clock moves by step
// per processed record, so the emit throttles of TaskConfig decide what is
// emitted.
type throttleRun struct {
	t    *testing.T
	task *Task
	col  *recCollector
	wall int64
	off  int64
}

func newThrottleRun(t *testing.T, build func(b *Builder), cfg TaskConfig, step time.Duration) *throttleRun {
	t.Helper()
	tp, err := NewTopology("app", build)
	if err != nil {
		t.Fatal(err)
	}
	r := &throttleRun{t: t, col: &recCollector{}}
	cfg.Collector, cfg.Stores = r.col, builtinProvider{}
	cfg.Now = func() int64 { return r.wall }
	r.task, err = tp.NewTask(TaskID{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.task.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.task.Close() })
	r.wall = -step.Milliseconds()
	return r
}

func (r *throttleRun) pipe(step time.Duration, topic, key string, value []byte, ts int64) {
	r.t.Helper()
	r.wall += step.Milliseconds()
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
	if !slices.Equal(r.col.out, want) {
		r.t.Fatalf("output:\n got  %q\n want %q", r.col.out, want)
	}
	r.col.out = nil
}

func TestEmitIntervalResolution(t *testing.T) {
	for _, c := range []struct {
		set, def time.Duration
		want     int64
	}{
		{0, time.Second, 1000},
		{NoEmitThrottle, time.Second, 0},
		{-time.Hour, time.Second, 0},
		{250 * time.Millisecond, time.Second, 250},
	} {
		if got := emitInterval(c.set, c.def); got != c.want {
			t.Errorf("emitInterval(%v, %v) = %d, want %d", c.set, c.def, got, c.want)
		}
	}
}

// TestWindowEmitIntervalFromTaskConfig: the wall clock advances 500 ms per
// record; the window closes with the second record.
func TestWindowEmitIntervalFromTaskConfig(t *testing.T) {
	build := func(b *Builder) {
		s := Source(b, "source", SourceConfig[string, int64]{Topic: "events", Key: serdes.String, Value: serdes.Int64})
		g := GroupedStream[string, int64]{Stream: s, Key: serdes.String, Value: serdes.Int64}
		tbl := CountWindowed(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond}), "count", "store", EmitOnClose)
		tbl.To(NodeFunc[Windowed[string], Change[int64]](func(r Record[Windowed[string], Change[int64]]) error {
			return b.task.Send("out", 0, []byte(r.Key.Key), []byte(fmt.Sprint(r.Value.New)), r.Timestamp, nil, nil)
		}))
	}
	for _, c := range []struct {
		name     string
		interval time.Duration
		emits    bool
	}{
		{"default 1000ms holds the scan back", 0, false},
		{"500ms lets it run", 500 * time.Millisecond, true},
		{"NoEmitThrottle lets it run", NoEmitThrottle, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newThrottleRun(t, build, TaskConfig{WindowEmitInterval: c.interval}, 0)
			v, _ := serdes.Int64.Append(nil, 1)
			r.pipe(500*time.Millisecond, "events", "A", v, 1)
			r.pipe(500*time.Millisecond, "events", "A", v, 10)
			if c.emits {
				r.expect("A:1@1")
			} else {
				r.expect()
			}
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
	for _, c := range []struct {
		name     string
		interval time.Duration
		emits    bool
	}{
		{"default 1000ms", 0, false},
		{"NoEmitThrottle", NoEmitThrottle, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newThrottleRun(t, build, TaskConfig{OuterJoinEmitInterval: c.interval}, 0)
			r.pipe(0, "left", "a", []byte("A"), 0)
			r.expect()
			r.pipe(0, "left", "b", []byte("B"), 100) // A's window closed at 10
			if c.emits {
				r.expect("a:A+null@0")
			} else {
				r.expect()
			}
		})
	}
}
