package sgkafka

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
)

// Throughput and restore benchmarks. Run against the real broker:
//
//	bash scripts/with-kafka.sh go test ./runtime/sgkafka/ -run '^$' -bench . -benchtime 200000x
//
// b.N is the number of input records; records/s is reported.

func benchEnv(b *testing.B, real bool) testEnv {
	if !real {
		return testEnv{brokers: newFake(b), appID: "app", in: "in", out: "out"}
	}
	brokers := kafkatest.Brokers(b)
	ev := testEnv{brokers: brokers, appID: uniq("sgkb"), in: uniq("sgkb-in"), out: uniq("sgkb-out")}
	b.Cleanup(func() { deleteTopicsWithPrefix(b, brokers, ev.appID, ev.in, ev.out) })
	return ev
}

func benchProduce(b *testing.B, ev testEnv, partitions, n, keys int) {
	recs := inputRecords(ev.in, n, keys)
	for i := 0; i < len(recs); i += 50000 {
		produce(b, ev.brokers, partitions, recs[i:min(i+50000, len(recs))])
	}
}

// BenchmarkEOSCount measures an exactly-once count topology (4
// partitions, 10 000 keys, default 10 MiB record cache, 100 ms commits).
func BenchmarkEOSCount(b *testing.B) {
	for _, c := range []struct {
		name string
		real bool
	}{{"kafka", true}, {"kfake", false}} {
		b.Run(c.name, func(b *testing.B) {
			ev := benchEnv(b, c.real)
			createTopic(b, ev.brokers, ev.in, 4)
			createTopic(b, ev.brokers, ev.out, 4)
			tp := ev.topology(b, countBuild)
			n := max(b.N, 1000)
			benchProduce(b, ev, 4, n, 10000)
			b.ResetTimer()
			start := time.Now()
			r := startEngine(b, tp, Config{Brokers: ev.brokers, StateDir: b.TempDir(), Guarantee: ExactlyOnceV2,
				CacheMaxBytes: 10 << 20, Logger: nil})
			waitFor(b, 10*time.Minute, "all processed", func() bool { return r.e.Processed() >= int64(n) })
			if err := r.stop(b); err != nil {
				b.Fatal(err)
			}
			el := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(n)/el.Seconds(), "records/s")
			b.ReportMetric(float64(r.e.commits.Load()), "commits")
		})
	}
}

// BenchmarkRestore measures how long a restarted instance takes to become
// RUNNING with a count store of b.N changelog records (cache off): with its
// local checkpoint (clean stop), after an unclean stop between the Kafka
// commit and the local commit (only the last transaction's tail), and
// without local state (Kafka Streams' behaviour after an EOS crash: wipe
// and restore everything).
func BenchmarkRestore(b *testing.B) {
	for _, c := range []struct {
		name string
		real bool
	}{{"kafka", true}, {"kfake", false}} {
		b.Run(c.name, func(b *testing.B) {
			ev := benchEnv(b, c.real)
			createTopic(b, ev.brokers, ev.in, 4)
			createTopic(b, ev.brokers, ev.out, 4)
			tp := ev.topology(b, countBuild)
			n := max(b.N, 1000)
			benchProduce(b, ev, 4, n, n) // every record a new key: the changelog holds n records
			dir := b.TempDir()
			cfg := Config{Brokers: ev.brokers, StateDir: dir, Guarantee: ExactlyOnceV2}
			var eng atomic.Pointer[Engine]
			var crashed atomic.Int64
			cfg.hooks.afterTxnCommit = func(k int64) error {
				if e := eng.Load(); e != nil && e.Processed() >= int64(n) && k > 0 {
					crashed.Store(k)
					return errCrash
				}
				return nil
			}
			r := startEngine(b, tp, cfg)
			eng.Store(r.e)
			if err := r.wait(b, 10*time.Minute); !errors.Is(err, errCrash) {
				b.Fatalf("want the simulated crash, got %v", err)
			}
			b.ResetTimer()
			measure := func(name, stateDir string) {
				start := time.Now()
				r := startEngine(b, tp, Config{Brokers: ev.brokers, StateDir: stateDir, Guarantee: ExactlyOnceV2})
				waitFor(b, 10*time.Minute, "running", func() bool { return r.e.State() == Running })
				el := time.Since(start)
				restored := r.e.TotalRestored()
				if err := r.stop(b); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(el.Milliseconds()), name+"-running-ms")
				b.ReportMetric(float64(time.Duration(r.e.restoreNanos.Load()).Milliseconds()), name+"-restore-ms")
				b.ReportMetric(float64(restored), name+"-restored")
			}
			measure("unclean", dir)
			measure("checkpoint", dir)
			measure("nostate", b.TempDir())
			b.StopTimer()
		})
	}
}
