package sgapp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// countApp counts records per key, so output shows whether state carried
// over: its values are split into characters first, so one input record
// can update one key several times (what a record cache coalesces).
func countApp() *App {
	return &App{
		ID: "count-test",
		Build: func(b *sgstream.Builder) {
			in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
			chars := sgstream.FlatMapValues(in, "chars", func(_ string, v string) []string { return strings.Split(v, "") })
			counts := sgstream.Count(sgstream.GroupByKey(chars, serdes.String, serdes.String), "count", "counts")
			sgstream.To(sgstream.ToStream(counts, "to-stream"), "sink", "out", sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
		},
		Topics: []TopicCodec{sgreplay.Topic("in", serdes.String, serdes.String), sgreplay.Topic("out", serdes.String, serdes.Int64)},
	}
}

// windowApp counts 10 ms windows per key, emitted when they close; the
// output key is the window's key.
func windowApp() *App {
	return &App{
		ID: "window-test",
		Build: func(b *sgstream.Builder) {
			in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
			w := sgstream.WindowedBy(sgstream.GroupByKey(in, serdes.String, serdes.String), "w", sgstream.TimeWindows{Size: 10 * time.Millisecond})
			c := sgstream.CountWindowed(w, "count", "counts", sgstream.EmitOnClose)
			unwindowed := sgstream.Map(sgstream.ToStream(c, "s"), "unwindow", func(k sgstream.Windowed[string], v int64) (string, int64) { return k.Key, v })
			sgstream.To(unwindowed, "sink", "out", sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
		},
		Topics: []TopicCodec{sgreplay.Topic("in", serdes.String, serdes.String), sgreplay.Topic("out", serdes.String, serdes.Int64)},
	}
}

func replayOK(t *testing.T, app *App, in string, o ReplayOptions) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := Replay(app, strings.NewReader(in), &out, &errOut, o); err != nil {
		t.Fatalf("%v (stderr %s)", err, errOut.String())
	}
	return out.String(), errOut.String()
}

func wantLines(t *testing.T, got string, want ...string) {
	t.Helper()
	w := ""
	for _, l := range want {
		w += l + "\n"
	}
	if got != w {
		t.Fatalf("output:\n%s\nwant:\n%s", got, w)
	}
}

const twoSequences = `{"sequence": 1}
{"topic": "in", "key": "a", "value": "x", "timestamp": 1}
{"topic": "in", "key": "a", "value": "y", "timestamp": 2}
{"sequence": 2}
{"topic": "in", "key": "a", "value": "z", "timestamp": 3}
`

// TestReplaySequencesOnPebbleStartFresh: with --state-dir each sequence
// has a directory of its own, so the count of sequence 2 starts at 1, and
// a second run over the same directory gives the same output.
func TestReplaySequencesOnPebbleStartFresh(t *testing.T) {
	dir := t.TempDir()
	for run := 0; run < 2; run++ {
		out, _ := replayOK(t, countApp(), twoSequences, ReplayOptions{Sequences: true, Strict: true, StateDir: dir})
		wantLines(t, out,
			`{"sequence":1}`,
			`{"topic":"out","key":"a","value":1,"timestamp":1}`,
			`{"topic":"out","key":"a","value":2,"timestamp":2}`,
			`{"sequence":2}`,
			`{"topic":"out","key":"a","value":1,"timestamp":3}`)
	}
	for _, seq := range []string{"seq-1", "seq-2"} {
		if _, err := os.Stat(filepath.Join(dir, seq)); err != nil {
			t.Errorf("no state directory for %s: %v", seq, err)
		}
	}
}

// TestReplayCacheMaxBytes: "xy" updates a's count twice in one record;
// without a cache both updates are output, with one only the last.
func TestReplayCacheMaxBytes(t *testing.T) {
	in := `{"topic": "in", "key": "a", "value": "xy", "timestamp": 1}` + "\n"
	out, _ := replayOK(t, countApp(), in, ReplayOptions{})
	wantLines(t, out,
		`{"topic":"out","key":"a","value":1,"timestamp":1}`,
		`{"topic":"out","key":"a","value":2,"timestamp":1}`)
	out, _ = replayOK(t, countApp(), in, ReplayOptions{CacheMaxBytes: 1 << 20})
	wantLines(t, out, `{"topic":"out","key":"a","value":2,"timestamp":1}`)
}

// TestReplayCacheAsTopologyTestDriver: two counts of one stream, "b"
// defined before "a", into one topic. The wanted lines are what
// TopologyTestDriver 4.4.0 outputs for the same topology: with its default
// config (a 10 MiB cache, flushed after the record, store by store in the
// order the topology defines them) and with statestore.cache.max.bytes=0.
func TestReplayCacheAsTopologyTestDriver(t *testing.T) {
	app := &App{
		ID: "flush-order",
		Build: func(b *sgstream.Builder) {
			in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
			chars := sgstream.FlatMapValues(in, "chars", func(_ string, v string) []string { return strings.Split(v, "") })
			for _, name := range []string{"b", "a"} {
				c := sgstream.Count(sgstream.GroupByKey(chars, serdes.String, serdes.String), name+"-count", name+"-store")
				m := sgstream.Map(sgstream.ToStream(c, name+"-s"), name+"-map", func(k string, v int64) (string, int64) { return name + ":" + k, v })
				sgstream.To(m, name+"-sink", "out", sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
			}
		},
		Topics: []TopicCodec{sgreplay.Topic("in", serdes.String, serdes.String), sgreplay.Topic("out", serdes.String, serdes.Int64)},
	}
	in := `{"topic": "in", "key": "k", "value": "xy", "timestamp": 1}` + "\n"
	out, _ := replayOK(t, app, in, ReplayOptions{CacheMaxBytes: 10 << 20})
	wantLines(t, out,
		`{"topic":"out","key":"b:k","value":2,"timestamp":1}`,
		`{"topic":"out","key":"a:k","value":2,"timestamp":1}`)
	out, _ = replayOK(t, app, in, ReplayOptions{})
	wantLines(t, out,
		`{"topic":"out","key":"b:k","value":1,"timestamp":1}`,
		`{"topic":"out","key":"a:k","value":1,"timestamp":1}`,
		`{"topic":"out","key":"b:k","value":2,"timestamp":1}`,
		`{"topic":"out","key":"a:k","value":2,"timestamp":1}`)
}

// TestReplayWindowEmitIntervalAndWallClock: with a 1 s throttle the
// closed window [0,10) is emitted only after the wall clock moved 1 s, as
// TopologyTestDriver 4.4.0 does with
// __emit.interval.ms.kstreams.windowed.aggregation__=1000 (and at once
// without it).
func TestReplayWindowEmitIntervalAndWallClock(t *testing.T) {
	in := `{"topic": "in", "key": "a", "value": "x", "timestamp": 1}
{"topic": "in", "key": "a", "value": "x", "timestamp": 10}
{"advance_wall_clock": 1000}
{"topic": "in", "key": "a", "value": "x", "timestamp": 11}
`
	out, _ := replayOK(t, windowApp(), in, ReplayOptions{Strict: true})
	wantLines(t, out, `{"topic":"out","key":"a","value":1,"timestamp":1}`)
	var o ReplayOptions
	o.Strict, o.WindowEmitInterval = true, time.Second
	out, _ = replayOK(t, windowApp(), strings.Replace(in, `{"advance_wall_clock": 1000}`, `{"advance_wall_clock": 999}`, 1), o)
	wantLines(t, out)
	out, _ = replayOK(t, windowApp(), in, o)
	wantLines(t, out, `{"topic":"out","key":"a","value":1,"timestamp":1}`)
}

// punctuateApp forwards, on each wall-clock punctuation, how many records
// it saw since the last one.
func punctuateApp() *App {
	return &App{
		ID: "punctuate-test",
		Build: func(b *sgstream.Builder) {
			in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
			p := sgstream.Process(in, "tick", func() sgstream.Processor[string, string, string, int64] { return &ticker{} }, nil)
			sgstream.To(p, "sink", "out", sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
		},
		Topics: []TopicCodec{sgreplay.Topic("in", serdes.String, serdes.String), sgreplay.Topic("out", serdes.String, serdes.Int64)},
	}
}

// ticker counts records and forwards the count every wall-clock second.
type ticker struct{ n int64 }

func (p *ticker) Init(ctx *sgstream.ProcessorContext[string, int64]) error {
	ctx.ScheduleWallClock(time.Second, func(ts int64) error {
		return ctx.Forward(sgstream.Record[string, int64]{Key: "seen", Value: p.n, Timestamp: ts})
	})
	return nil
}
func (p *ticker) Process(sgstream.Record[string, string]) error { p.n++; return nil }
func (p *ticker) Close() error                                  { return nil }

// TestReplayAdvanceWallClockPunctuates: an advance line fires the
// wall-clock punctuations that became due, and its output is printed.
func TestReplayAdvanceWallClockPunctuates(t *testing.T) {
	in := `{"topic": "in", "key": "a", "value": "x", "timestamp": 5}
{"advance_wall_clock": 999}
{"topic": "in", "key": "a", "value": "x", "timestamp": 6}
{"advance_wall_clock": 1}
`
	out, _ := replayOK(t, punctuateApp(), in, ReplayOptions{Strict: true})
	wantLines(t, out, `{"topic":"out","key":"seen","value":2,"timestamp":1000}`)
}

func TestReplayAdvanceWallClockMalformed(t *testing.T) {
	in := `{"topic": "in", "key": "a", "value": "x", "timestamp": 5}
{"advance_wall_clock": -5}
`
	var out, errOut bytes.Buffer
	err := Replay(punctuateApp(), strings.NewReader(in), &out, &errOut, ReplayOptions{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "line 2: advance_wall_clock -5 is negative") {
		t.Fatalf("err = %v, want line 2 named", err)
	}
	if err := Replay(punctuateApp(), strings.NewReader(in), &out, &errOut, ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "punctuate-test replay: line 2: advance_wall_clock -5 is negative: the wall clock only moves forward (skipped)\n" +
		"punctuate-test replay: 1 malformed input line skipped\n"
	if errOut.String() != want {
		t.Fatalf("stderr %q, want %q", errOut.String(), want)
	}
}

// TestReplayWallClockAsTopologyTestDriver: the wall clock starts at
// --wall-clock-start, and a wall-clock schedule counts from there even
// when the clock moves before the first record. The wanted lines are what
// TopologyTestDriver 4.4.0 outputs for the same steps (a processor
// scheduled every second, the driver made with that initialWallClockTime).
func TestReplayWallClockAsTopologyTestDriver(t *testing.T) {
	rec := `{"topic": "in", "key": "a", "value": "x", "timestamp": 5}` + "\n"
	adv := func(ms int) string { return fmt.Sprintf(`{"advance_wall_clock": %d}`, ms) + "\n" }
	for _, c := range []struct {
		start int64
		in    string
		want  string
	}{
		{0, adv(500) + rec + adv(600), `{"topic":"out","key":"seen","value":1,"timestamp":1100}`},
		{0, adv(1100) + rec + adv(1), `{"topic":"out","key":"seen","value":0,"timestamp":1100}`},
		{5000, rec + adv(999) + rec + adv(1), `{"topic":"out","key":"seen","value":2,"timestamp":6000}`},
	} {
		out, _ := replayOK(t, punctuateApp(), c.in, ReplayOptions{Strict: true, WallClockStart: c.start})
		wantLines(t, out, c.want)
	}
}

// TestReplayFlags: the command line reaches the options, under the names
// the README lists (run's --cache-bytes for the cache).
func TestReplayFlags(t *testing.T) {
	in := `{"topic": "in", "key": "a", "value": "x", "timestamp": 5}
{"advance_wall_clock": 1000}
`
	var out, errOut bytes.Buffer
	code := MainIO(punctuateApp(), []string{"replay", "--strict", "--wall-clock-start", "7000", "--cache-bytes", "1024",
		"--window-emit-interval", "2s", "--outer-join-emit-interval", "3s"}, strings.NewReader(in), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	wantLines(t, out.String(), `{"topic":"out","key":"seen","value":1,"timestamp":8000}`)

	// The cache flag coalesces as TestReplayCacheMaxBytes shows.
	out.Reset()
	code = MainIO(countApp(), []string{"replay", "--cache-bytes", "10485760"}, strings.NewReader(`{"topic": "in", "key": "a", "value": "xy", "timestamp": 1}`), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	wantLines(t, out.String(), `{"topic":"out","key":"a","value":2,"timestamp":1}`)
}

// TestReplaySummaryCountsMalformedLines: lines replay skipped are in the
// summary of their sequence, also of a sequence that had nothing else.
func TestReplaySummaryCountsMalformedLines(t *testing.T) {
	in := `{"sequence": 1}
{"topic": "in", "key": "a", "value": "x", "timestamp": 1}
not json
{"sequence": 2}
{"topic": "nope", "key": "a", "value": "x", "timestamp": 1}
{"topic": "in", "key": "a"}
{"sequence": 3}
{"topic": "in", "key": "a", "value": "x", "timestamp": 1}
`
	_, errOut := replayOK(t, countApp(), in, ReplayOptions{Sequences: true})
	var summaries []string
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !strings.HasSuffix(l, "(skipped)") {
			summaries = append(summaries, l)
		}
	}
	want := []string{"count-test replay: sequence 1: 1 malformed input line skipped", "count-test replay: sequence 2: 2 malformed input lines skipped"}
	if !slices.Equal(summaries, want) {
		t.Fatalf("summaries %q, want %q", summaries, want)
	}
}

// TestReplaySummary: records that did not make it through are counted by
// reason on stderr, per sequence, and stdout is only the output records.
func TestReplaySummary(t *testing.T) {
	app := windowApp()
	app.Topics = append(app.Topics, sgreplay.Topic("dlq", serdes.String, serdes.String))
	app.Deserialization, app.Processing, app.InvalidTime = sgstream.PolicyContinue, sgstream.PolicyContinue, sgstream.TimestampSkip
	in := `{"sequence": 1}
{"topic": "in", "key": "a", "value": "x", "timestamp": 100}
{"topic": "in", "key": "a", "value": "x", "timestamp": 1}
{"topic": "in", "key": "a", "value": "x", "timestamp": -1}
{"topic": "in", "key": null, "value": "x", "timestamp": 101}
{"sequence": 2}
{"topic": "in", "key": "a", "value": "x", "timestamp": 100}
`
	out, errOut := replayOK(t, app, in, ReplayOptions{Sequences: true, Strict: true})
	wantLines(t, out, `{"sequence":1}`, `{"sequence":2}`)
	want := "window-test replay: sequence 1: 1 bad record (1 invalid timestamp; 1 skipped); " +
		"2 records dropped (1 late for a closed window, 1 by an operator (null key or value, or a record it cannot use))\n"
	if errOut != want {
		t.Fatalf("stderr:\n%q\nwant\n%q", errOut, want)
	}
}
