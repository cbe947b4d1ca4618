package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// env is one test's cluster and names: kfake, or the real broker with
// names unique to the test (deleted at the end).
type testEnv struct {
	brokers []string
	appID   string
	in, out string
}

// forBackends runs fn on kfake and on the real broker (kafkatest: skipped
// without one locally, a failure under CI=true).
func forBackends(t *testing.T, fn func(t *testing.T, ev testEnv)) {
	t.Run("kfake", func(t *testing.T) {
		fn(t, testEnv{brokers: newFake(t), appID: "app", in: "in", out: "out"})
	})
	t.Run("kafka", func(t *testing.T) {
		brokers := kafkatest.Brokers(t)
		ev := testEnv{brokers: brokers, appID: uniq("sgk"), in: uniq("sgk-in"), out: uniq("sgk-out")}
		t.Cleanup(func() { deleteTopicsWithPrefix(t, brokers, ev.appID, ev.in, ev.out) })
		fn(t, ev)
	})
}

func deleteTopicsWithPrefix(t testing.TB, brokers []string, prefix string, also ...string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tds, err := adm.ListTopics(ctx)
	if err != nil {
		return
	}
	del := append([]string(nil), also...)
	for _, name := range tds.Names() {
		if strings.HasPrefix(name, prefix+"-") {
			del = append(del, name)
		}
	}
	if _, err := adm.DeleteTopics(ctx, del...); err != nil {
		t.Logf("deleting topics: %v", err)
	}
}

func (ev testEnv) topology(t testing.TB, build func(in, out string) func(*sgstream.Builder)) *sgstream.Topology {
	tp, err := sgstream.NewTopology(ev.appID, build(ev.in, ev.out))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// (a) Exactly-once end to end: the committed output equals the test
// driver's, per key and in order, with caching off (every update).
func TestEOSEndToEnd(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		createTopic(t, ev.brokers, ev.in, 3)
		createTopic(t, ev.brokers, ev.out, 3)
		tp := ev.topology(t, countBuild)
		recs := inputRecords(ev.in, 600, 11)
		produce(t, ev.brokers, 3, recs[:300])
		r := startEngine(t, tp, Config{Brokers: ev.brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2,
			CommitInterval: 100 * time.Millisecond})
		waitFor(t, 60*time.Second, "first half processed", func() bool { return r.e.Processed() >= 300 })
		produce(t, ev.brokers, 3, recs[300:])
		waitFor(t, 60*time.Second, "all processed", func() bool { return r.e.Processed() >= 600 })
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		visible := readCommitted(t, ev.brokers, ev.out)
		got := byKey(visible, decodeCount)
		want := driverOutput(t, tp, 3, ev.out, recs, decodeCount)
		if d := diffOutputs(want, got); d != "" {
			t.Fatalf("output differs from the test driver (%d visible records, log end offsets sum %d, %d changelog visible):\n%s",
				len(visible), countUncommitted(t, ev.brokers, ev.out), len(readCommitted(t, ev.brokers, changelogTopic(ev.appID, "counts"))), dumpControl(t, ev.brokers, ev.out)+"\n"+d)
		}
	})
}

// (b) An aborted transaction leaves no visible output, no committed
// changelog and no change in local state; a restart then produces exactly
// the expected output.
func TestAbortedTransactionLeavesNoTrace(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		createTopic(t, ev.brokers, ev.in, 2)
		createTopic(t, ev.brokers, ev.out, 2)
		tp := ev.topology(t, countBuild)
		recs := inputRecords(ev.in, 100, 5)
		produce(t, ev.brokers, 2, recs)
		dir := t.TempDir()
		cfg := Config{Brokers: ev.brokers, StateDir: dir, Guarantee: ExactlyOnceV2, CommitInterval: 50 * time.Millisecond}
		var failed atomic.Int64
		cfg.hooks.beforeTxnCommit = func() error {
			failed.Add(1)
			return errors.New("injected failure after produce, before commit")
		}
		r := startEngine(t, tp, cfg)
		waitFor(t, 60*time.Second, "records processed and aborted twice", func() bool {
			return r.e.Processed() >= 200 && failed.Load() >= 3
		})
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		if out := readCommitted(t, ev.brokers, ev.out); len(out) != 0 {
			t.Fatalf("aborted transactions left %d visible output records", len(out))
		}
		if cl := readCommitted(t, ev.brokers, changelogTopic(ev.appID, "counts")); len(cl) != 0 {
			t.Fatalf("aborted transactions left %d visible changelog records", len(cl))
		}
		if n := countUncommitted(t, ev.brokers, ev.out); n == 0 {
			t.Fatal("no records were produced before the aborts; the test proves nothing")
		}
		for p := int32(0); p < 2; p++ {
			st := sgstate.NewPebbleKeyValue("counts", nil)
			if err := st.Init(&sgstate.StoreContext{Dir: engine.StoreDir(dir, engine.TaskID{Sub: 0, Partition: p}, "counts")}); err != nil {
				t.Fatal(err)
			}
			// The checkpoint may have moved past the aborted records
			// (restoring after an abort skips them); the data must not.
			n, _ := st.ApproximateNumEntries()
			st.Close()
			if n != 0 {
				t.Fatalf("task 0_%d: local state changed by aborted transactions: %d keys", p, n)
			}
		}
		r2 := startEngine(t, tp, Config{Brokers: ev.brokers, StateDir: dir, Guarantee: ExactlyOnceV2, CommitInterval: 50 * time.Millisecond})
		waitFor(t, 60*time.Second, "reprocessed", func() bool { return r2.e.Processed() >= 100 })
		if err := r2.stop(t); err != nil {
			t.Fatal(err)
		}
		expectDriverOutput(t, ev, tp, 2, recs, decodeCount, "output after restart")
	})
}

// countUncommitted counts every record of topic, aborted ones included.
func countUncommitted(t testing.TB, brokers []string, topic string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, brokers))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ends.Each(func(o kadm.ListedOffset) { n += int(o.Offset) })
	return n
}

// (c) After an unclean stop between the Kafka commit and the local
// commit, a restart restores exactly the changelog records of that last
// transaction (past the local checkpoint), not the whole changelog, and
// the output stays exactly once.
func TestRestartRestoresOnlyPastCheckpoint(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		createTopic(t, ev.brokers, ev.in, 2)
		createTopic(t, ev.brokers, ev.out, 2)
		tp := ev.topology(t, countBuild)
		recs := inputRecords(ev.in, 400, 13)
		produce(t, ev.brokers, 2, recs[:200])
		dir := t.TempDir()
		cfg := Config{Brokers: ev.brokers, StateDir: dir, Guarantee: ExactlyOnceV2, CommitInterval: 50 * time.Millisecond}
		var lost atomic.Int64
		var eng atomic.Pointer[Engine]
		cfg.hooks.afterTxnCommit = func(n int64) error {
			if e := eng.Load(); e != nil && e.Processed() >= 300 && n > 0 {
				lost.Store(n)
				return errCrash
			}
			return nil
		}
		r := startEngine(t, tp, cfg)
		eng.Store(r.e)
		waitFor(t, 60*time.Second, "first batch processed", func() bool { return r.e.Processed() >= 200 })
		c0 := r.e.commits.Load()
		waitFor(t, 60*time.Second, "first batch committed", func() bool { return r.e.commits.Load() >= c0+2 })
		produce(t, ev.brokers, 2, recs[200:300])
		if err := r.wait(t, 60*time.Second); !errors.Is(err, errCrash) {
			t.Fatalf("engine ended with %v, want the simulated crash", err)
		}
		if lost.Load() == 0 {
			t.Fatal("crash hook never fired")
		}
		produce(t, ev.brokers, 2, recs[300:])
		r2 := startEngine(t, tp, Config{Brokers: ev.brokers, StateDir: dir, Guarantee: ExactlyOnceV2, CommitInterval: 50 * time.Millisecond})
		awaitDriverOutput(t, ev, tp, 2, recs, decodeCount)
		if err := r2.stop(t); err != nil {
			t.Fatal(err)
		}
		total := len(readCommitted(t, ev.brokers, changelogTopic(ev.appID, "counts")))
		if got := r2.e.TotalRestored(); got != lost.Load() {
			t.Fatalf("restored %d changelog records, want %d (the last transaction's); changelog has %d", got, lost.Load(), total)
		}
		if lost.Load() > 100 {
			t.Fatalf("the crashed transaction held %d of %d changelog records; want a tail", lost.Load(), total)
		}
		expectDriverOutput(t, ev, tp, 2, recs, decodeCount, "output")
	})
}

// (d) Two instances in one group share the partitions and together
// produce exactly the expected output; one stops mid-run and the other
// takes over its tasks (restoring their state from the changelog).
func TestTwoInstancesShareAndTakeOver(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		createTopic(t, ev.brokers, ev.in, 4)
		createTopic(t, ev.brokers, ev.out, 4)
		tp := ev.topology(t, countBuild)
		recs := inputRecords(ev.in, 800, 17)
		cfg := func() Config {
			return Config{Brokers: ev.brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2, CommitInterval: 50 * time.Millisecond}
		}
		a := startEngine(t, tp, cfg())
		produce(t, ev.brokers, 4, recs[:200])
		waitFor(t, 60*time.Second, "a processed the first batch", func() bool { return a.e.Processed() >= 200 })
		b := startEngine(t, tp, cfg())
		waitFor(t, 60*time.Second, "b got tasks", func() bool { return b.e.State() == Running && countTasks(b.e) > 0 })
		produce(t, ev.brokers, 4, recs[200:500])
		waitFor(t, 60*time.Second, "both processed", func() bool { return a.e.Processed()+b.e.Processed() >= 500 })
		if countTasks(a.e) == 0 || countTasks(b.e) == 0 {
			t.Fatalf("tasks not shared: a has %d, b has %d", countTasks(a.e), countTasks(b.e))
		}
		if err := a.stop(t); err != nil {
			t.Fatal(err)
		}
		produce(t, ev.brokers, 4, recs[500:])
		waitFor(t, 60*time.Second, "b took over", func() bool { return countTasks(b.e) == 4 })
		waitFor(t, 60*time.Second, "all processed", func() bool {
			return len(readCommitted(t, ev.brokers, ev.out)) >= 800
		})
		if err := b.stop(t); err != nil {
			t.Fatal(err)
		}
		if b.e.TotalRestored() == 0 {
			t.Error("b took over tasks without restoring their state")
		}
		expectDriverOutput(t, ev, tp, 4, recs, decodeCount, "output")
	})
}

func countTasks(e *Engine) int {
	e.mu.Lock()
	ws := append([]*worker(nil), e.workers...)
	e.mu.Unlock()
	n := 0
	for _, w := range ws {
		n += int(w.taskCount.Load())
	}
	return n
}

// dumpControl describes every batch's control markers of topic (read
// uncommitted), for diagnosing visibility failures.
func dumpControl(t testing.TB, brokers []string, topic string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := newClient(t, brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.KeepControlRecords(), kgo.FetchMaxWait(100*time.Millisecond))
	var b strings.Builder
	total := countUncommitted(t, brokers, topic)
	seen := 0
	for seen < total && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			if r.Attrs.IsControl() {
				kind := "commit"
				if len(r.Key) >= 4 && r.Key[3] == 0 {
					kind = "abort"
				}
				fmt.Fprintf(&b, "p%d@%d %s pid=%d epoch=%d; ", r.Partition, r.Offset, kind, r.ProducerID, r.ProducerEpoch)
			} else if r.Offset == 0 || seen%100 == 0 {
				fmt.Fprintf(&b, "p%d@%d data pid=%d epoch=%d; ", r.Partition, r.Offset, r.ProducerID, r.ProducerEpoch)
			}
		})
	}
	return b.String()
}
