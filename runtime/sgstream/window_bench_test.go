package sgstream_test

import (
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// The two windowed scenarios of the broker benchmark (bench/scenarios),
// in process: streamcountwindowed (hopping windows of 1 s advancing by
// 500 ms, count) and streamprocesswithwindowstore (a processor that
// fetches the key's last second from a window store of 1 s windows kept
// 3 s, then puts the record), on the harness's input: 10 000 keys drawn
// without a pattern, 100-byte values, event time 1 ms apart. The
// windows' retention is far shorter than the input, so most of what the
// stores hold expires while the benchmark runs, as it does in the
// broker benchmark.
//
//	go test -run '^$' -bench '^BenchmarkInprocWindowScenarios' -benchmem ./runtime/sgstream/

// benchScenarioStep is the harness's event-time step between records.
const benchScenarioStep = 1

func scenarioInput(i int, raw *sgstream.RawRecord) {
	*raw = sgstream.RawRecord{Topic: "in", Key: benchKeyBytes[scatter(i, len(benchKeyBytes))], Value: benchValue, Timestamp: benchT0 + int64(i)*benchScenarioStep}
}

// buildScenarioCountWindowed is streamcountwindowed: the count's table has
// no consumer, as in the scenario.
func buildScenarioCountWindowed(b *sgstream.Builder) {
	g := sgstream.GroupByKey(source(b, "in"), serdes.String, serdes.String)
	sgstream.CountWindowed(sgstream.WindowedBy(g, "windowed", sgstream.TimeWindows{Size: time.Second, Advance: 500 * time.Millisecond}),
		"count", "windowed-counts", sgstream.EmitOnUpdate)
}

// buildScenarioWindowStore is streamprocesswithwindowstore.
func buildScenarioWindowStore(b *sgstream.Builder) {
	s := source(b, "in")
	sgstream.AddStateStore(b, sgstream.StoreSpec{Name: "ws", Kind: sgstream.WindowStore, Logged: true, OwnLayout: true,
		Retention: 3 * time.Second, WindowSize: time.Second})
	sgstream.ProcessValues(s, "process", func() sgstream.Processor[string, string, string, string] { return &benchWindowProcessor{} }, []string{"ws"})
}

// benchWindowProcessor is the scenario's processor: fetch the key's
// windows of the last second, then put the record at its timestamp.
type benchWindowProcessor struct {
	store sgstate.WindowStore
	seen  int
}

func (p *benchWindowProcessor) Init(ctx *sgstream.ProcessorContext[string, string]) error {
	s, err := ctx.StateStore("ws")
	if err != nil {
		return err
	}
	p.store = s.(sgstate.WindowStore)
	return nil
}

func (p *benchWindowProcessor) Process(r sgstream.Record[string, string]) error {
	k := []byte(r.Key)
	if err := p.store.Fetch(k, r.Timestamp-1000, r.Timestamp, func(int64, []byte) error {
		p.seen++
		return nil
	}); err != nil {
		return err
	}
	return p.store.Put(k, r.Timestamp, []byte(r.Value))
}

func (p *benchWindowProcessor) Close() error { return nil }

func BenchmarkInprocWindowScenarios(b *testing.B) {
	for _, st := range []struct {
		name       string
		persistent bool
	}{{"memory", false}, {"pebble", true}} {
		b.Run("streamcountwindowed/"+st.name, func(b *testing.B) {
			runTask(b, buildScenarioCountWindowed, st.persistent, scenarioInput)
		})
		b.Run("streamprocesswithwindowstore/"+st.name, func(b *testing.B) {
			runTask(b, buildScenarioWindowStore, st.persistent, scenarioInput)
		})
	}
}
