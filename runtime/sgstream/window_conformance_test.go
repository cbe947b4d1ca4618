package sgstream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// TestWindowConformance replays random sequences through the windowed
// aggregations and compares every output record (key, window, value,
// timestamp, order) with what Kafka Streams' TopologyTestDriver produced
// for the same input. testdata/windowconf/<scenario>.out.jsonl was written
// by conformance/java (run.sh run conformance/scenarios <scenario> IN OUT);
// the scenarios are the windowed ones of conformance/java's Scenarios.java,
// whose user functions sum, empty, append and mergeLists have twins here.
func TestWindowConformance(t *testing.T) {
	ms := time.Millisecond
	tumbling := func(grace time.Duration) TimeWindows { return TimeWindows{Size: 10000 * ms, Grace: grace} }
	hopping := func(grace time.Duration) TimeWindows {
		return TimeWindows{Size: 10000 * ms, Advance: 4000 * ms, Grace: grace}
	}
	sliding := func(grace time.Duration) SlidingWindows {
		return SlidingWindows{TimeDifference: 5000 * ms, Grace: grace}
	}
	session := func(grace time.Duration) SessionWindows { return SessionWindows{Gap: 5000 * ms, Grace: grace} }

	type mk = func(t *testing.T) *windowRun
	// Every scenario runs on the fake stores and on the built-in in-memory
	// stores.
	var prov func() engine.StoreProvider
	newWindowRun := func(t *testing.T, mk func(g GroupedStream[string, int64]) Table[Windowed[string], int64]) *windowRun {
		return newWindowRunOn(t, prov(), mk)
	}
	newWindowRunS := func(t *testing.T, mk func(g GroupedStream[string, int64]) Table[Windowed[string], string]) *windowRun {
		return newWindowRunOn(t, prov(), mk)
	}
	count := func(w func(g GroupedStream[string, int64]) TimeWindowedStream[string, int64], emit EmitStrategy) mk {
		return func(t *testing.T) *windowRun {
			return newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
				return CountWindowed(w(g), "agg", "agg-store", emit)
			})
		}
	}
	reduce := func(w func(g GroupedStream[string, int64]) TimeWindowedStream[string, int64], emit EmitStrategy) mk {
		return func(t *testing.T) *windowRun {
			return newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
				return ReduceWindowed(w(g), "agg", "agg-store", emit, sum)
			})
		}
	}
	aggregate := func(w func(g GroupedStream[string, int64]) TimeWindowedStream[string, int64], emit EmitStrategy) mk {
		return func(t *testing.T) *windowRun {
			return newWindowRunS(t, func(g GroupedStream[string, int64]) Table[Windowed[string], string] {
				return AggregateWindowed(w(g), "agg", "agg-store", emit, empty, appendAgg, serdes.String)
			})
		}
	}
	byTime := func(tw TimeWindows) func(g GroupedStream[string, int64]) TimeWindowedStream[string, int64] {
		return func(g GroupedStream[string, int64]) TimeWindowedStream[string, int64] { return WindowedBy(g, "w", tw) }
	}
	bySliding := func(sw SlidingWindows) func(g GroupedStream[string, int64]) TimeWindowedStream[string, int64] {
		return func(g GroupedStream[string, int64]) TimeWindowedStream[string, int64] {
			return WindowedBySliding(g, "w", sw)
		}
	}
	sessionRun := func(sw SessionWindows, op string, emit EmitStrategy) mk {
		return func(t *testing.T) *windowRun {
			switch op {
			case "count":
				return newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
					return CountSession(WindowedBySession(g, "w", sw), "agg", "agg-store", emit)
				})
			case "reduce":
				return newWindowRun(t, func(g GroupedStream[string, int64]) Table[Windowed[string], int64] {
					return ReduceSession(WindowedBySession(g, "w", sw), "agg", "agg-store", emit, sum)
				})
			}
			return newWindowRunS(t, func(g GroupedStream[string, int64]) Table[Windowed[string], string] {
				return AggregateSession(WindowedBySession(g, "w", sw), "agg", "agg-store", emit, empty, appendAgg, mergeLists, serdes.String)
			})
		}
	}
	scenarios := map[string]mk{
		"tumbling-count":                count(byTime(tumbling(0)), EmitOnUpdate),
		"tumbling-reduce":               reduce(byTime(tumbling(0)), EmitOnUpdate),
		"tumbling-aggregate":            aggregate(byTime(tumbling(0)), EmitOnUpdate),
		"tumbling-count-final":          count(byTime(tumbling(0)), EmitOnClose),
		"tumbling-reduce-final-grace":   reduce(byTime(tumbling(3000*ms)), EmitOnClose),
		"tumbling-count-grace":          count(byTime(tumbling(5000*ms)), EmitOnUpdate),
		"hopping-count":                 count(byTime(hopping(0)), EmitOnUpdate),
		"hopping-reduce-final":          reduce(byTime(hopping(0)), EmitOnClose),
		"hopping-aggregate-grace":       aggregate(byTime(hopping(4000*ms)), EmitOnUpdate),
		"sliding-count":                 count(bySliding(sliding(0)), EmitOnUpdate),
		"sliding-reduce":                reduce(bySliding(sliding(0)), EmitOnUpdate),
		"sliding-aggregate":             aggregate(bySliding(sliding(0)), EmitOnUpdate),
		"sliding-count-final":           count(bySliding(sliding(0)), EmitOnClose),
		"sliding-aggregate-grace":       aggregate(bySliding(sliding(3000*ms)), EmitOnUpdate),
		"session-count":                 sessionRun(session(0), "count", EmitOnUpdate),
		"session-reduce":                sessionRun(session(0), "reduce", EmitOnUpdate),
		"session-aggregate":             sessionRun(session(0), "aggregate", EmitOnUpdate),
		"session-count-final":           sessionRun(session(0), "count", EmitOnClose),
		"session-aggregate-final-grace": sessionRun(session(3000*ms), "aggregate", EmitOnClose),
	}
	for _, stores := range []string{"fake", "builtin"} {
		for name, run := range scenarios {
			t.Run(stores+"/"+name, func(t *testing.T) {
				prov = func() engine.StoreProvider { return &fakeProvider{} }
				if stores == "builtin" {
					prov = func() engine.StoreProvider { return builtinProvider{} }
				}
				runConformance(t, name, run)
			})
		}
	}
}

func runConformance(t *testing.T, name string, run func(t *testing.T) *windowRun) {
	ins := readReplay(t, filepath.Join("testdata", "windowconf", name+".in.jsonl"))
	outs := readReplay(t, filepath.Join("testdata", "windowconf", name+".out.jsonl"))
	if len(ins) != len(outs) {
		t.Fatalf("%d input sequences, %d output sequences", len(ins), len(outs))
	}
	for i, seq := range ins {
		w := run(t)
		var got []string
		for _, r := range seq {
			got = append(got, w.pipe(r.in(t))...)
		}
		var want []string
		for _, r := range outs[i] {
			want = append(want, r.out(t))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("sequence %d: output mismatch\ninput:\n  %s\n got:\n  %s\nwant:\n  %s", i,
				strings.Join(seqLines(seq), "\n  "), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

type replayRec struct {
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Timestamp int64           `json:"timestamp"`
}

func (r replayRec) in(t *testing.T) in {
	var x in
	x.ts = r.Timestamp
	if string(r.Key) != "null" && len(r.Key) > 0 {
		if err := json.Unmarshal(r.Key, &x.key); err != nil {
			t.Fatal(err)
		}
	}
	if string(r.Value) != "null" && len(r.Value) > 0 {
		var n int64
		if err := json.Unmarshal(r.Value, &n); err != nil {
			t.Fatal(err)
		}
		x.val = &n
	}
	return x
}

func (r replayRec) out(t *testing.T) string {
	var k struct {
		Key   string `json:"key"`
		Start int64  `json:"start"`
		End   int64  `json:"end"`
	}
	if err := json.Unmarshal(r.Key, &k); err != nil {
		t.Fatal(err)
	}
	val := "null"
	if string(r.Value) != "null" {
		var x any
		if err := json.Unmarshal(r.Value, &x); err != nil {
			t.Fatal(err)
		}
		val = fmt.Sprint(x)
	}
	return fmt.Sprintf("%s [%d,%d] %s @%d", k.Key, k.Start, k.End, val, r.Timestamp)
}

func seqLines(seq []replayRec) []string {
	var out []string
	for _, r := range seq {
		out = append(out, fmt.Sprintf("%s=%s@%d", r.Key, r.Value, r.Timestamp))
	}
	return out
}

// readReplay reads a replay file (conformance/internal/replay's format)
// into its sequences.
func readReplay(t *testing.T, path string) [][]replayRec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var seqs [][]replayRec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var m struct {
			Sequence *int `json:"sequence"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		if m.Sequence != nil {
			seqs = append(seqs, nil)
			continue
		}
		var r replayRec
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		seqs[len(seqs)-1] = append(seqs[len(seqs)-1], r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return seqs
}
