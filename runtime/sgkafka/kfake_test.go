package sgkafka

import (
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// TestKfakeCountAndWindowedMatchDriver runs a count and a windowed count
// exactly-once on kfake with two partitions (and with a store memory
// budget) and compares the committed
// output with the test driver's over the same input.
func TestKfakeCountAndWindowedMatchDriver(t *testing.T) {
	for _, c := range []struct {
		name   string
		build  func(in, out string) func(*sgstream.Builder)
		decode func(k, v []byte) (string, string)
		guar   Guarantee
		work   int
		mem    int64 // StoreMemoryBytes
	}{
		{"count-eos", countBuild, decodeCount, ExactlyOnceV2, 1, 0},
		{"count-alos", countBuild, decodeCount, AtLeastOnce, 1, 0},
		{"windowed-eos", windowedBuild, decodeWindowedCount, ExactlyOnceV2, 1, 0},
		{"count-eos-3-workers", countBuild, decodeCount, ExactlyOnceV2, 3, 0},
		// The smallest budget, shared by the stores of 4 tasks.
		{"windowed-eos-budget", windowedBuild, decodeWindowedCount, ExactlyOnceV2, 1, 32 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			brokers := newFake(t)
			createTopic(t, brokers, "in", 4)
			createTopic(t, brokers, "out", 4)
			tp, err := sgstream.NewTopology("app", c.build("in", "out"))
			if err != nil {
				t.Fatal(err)
			}
			recs := inputRecords("in", 300, 7)
			produce(t, brokers, 4, recs)
			r := startEngine(t, tp, Config{Brokers: brokers, StateDir: t.TempDir(), Guarantee: c.guar,
				CommitInterval: 50 * time.Millisecond, IdleExit: 300 * time.Millisecond, Workers: c.work, StoreMemoryBytes: c.mem})
			if err := r.wait(t, 60*time.Second); err != nil {
				t.Fatal(err)
			}
			got := byKey(readCommitted(t, brokers, "out"), c.decode)
			want := driverOutput(t, tp, 4, "out", recs, c.decode)
			if d := diffOutputs(want, got); d != "" {
				t.Fatalf("output differs from the test driver:\n%s", d)
			}
		})
	}
}
