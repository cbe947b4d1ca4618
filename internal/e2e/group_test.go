package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/serdes"
	"github.com/twmb/franz-go/pkg/kgo"
)

// countOrder is one order of the ordercounts example.
type countOrder struct {
	id, user string
	amount   float64
	ts       int64
}

// encode writes the order as the example's Order serde does: a msgpack
// map of field ids (see examples/ordercounts/streamgen_records.go).
func (o countOrder) encode() []byte {
	b := serdes.AppendMapHeader(nil, 3)
	b = append(b, 1)
	b = serdes.AppendString(b, o.id)
	b = append(b, 2)
	b = serdes.AppendString(b, o.user)
	b = append(b, 3)
	return serdes.AppendFloat64(b, o.amount)
}

func (o countOrder) line() line {
	return line{Topic: "orders", Key: o.id, Value: map[string]any{"id": o.id, "user_id": o.user, "amount": o.amount}, Timestamp: o.ts}
}

// countOrders makes n orders of users u0..u<users-1>, deterministically.
func countOrders(n, users int, seed rng) []countOrder {
	out := make([]countOrder, n)
	for i := range out {
		out[i] = countOrder{id: fmt.Sprintf("o%d", i), user: fmt.Sprintf("u%d", seed.intn(users)),
			amount: float64(1+seed.intn(10000)) / 100, ts: t0 + int64(i)}
	}
	return out
}

// orderCountsSetup recreates the ordercounts topics under a fresh
// application id and returns the binary and the id.
func orderCountsSetup(t *testing.T) (bin, appID string) {
	bin = buildExample(t, "ordercounts")
	appID = uniqueID("ordercounts")
	recreateTopics(t, declaredTopics(t, "ordercounts"), appID)
	return bin, appID
}

// replayFinalCounts runs replay over the orders and returns the last count
// per user, checking on the way that replay counts 1, 2, 3 … per user.
func replayFinalCounts(t *testing.T, bin string, orders []countOrder) map[string]int64 {
	t.Helper()
	lines := make([]line, len(orders))
	for i, o := range orders {
		lines[i] = o.line()
	}
	path := filepath.Join(t.TempDir(), "input.jsonl")
	if err := os.WriteFile(path, encodeLines(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	final := map[string]int64{}
	for _, r := range parseOutput(t, "replay", replay(t, bin, path, 4)) {
		var user string
		var n int64
		if _, err := fmt.Sscanf(string(r.Key)+" "+string(r.Value), "%q %d", &user, &n); err != nil {
			t.Fatalf("replay record %s: %v", r, err)
		}
		if n != final[user]+1 {
			t.Fatalf("replay counts %d after %d for %s", n, final[user], user)
		}
		final[user] = n
	}
	return final
}

// produceAtPace produces the orders at about perSecond records a second,
// calling at(i) before record i (to stop and start instances mid-run).
func produceAtPace(t *testing.T, orders []countOrder, perSecond int, at func(i int)) {
	t.Helper()
	start := time.Now()
	produceEach(t, newProducer(t), len(orders), 60*time.Second, func(i int) *kgo.Record {
		if at != nil {
			at(i)
		}
		if d := time.Duration(i) * time.Second / time.Duration(perSecond); time.Since(start) < d {
			time.Sleep(d - time.Since(start))
		}
		o := orders[i]
		return &kgo.Record{Topic: "orders", Partition: partitionOf(o.id, 4), Key: []byte(o.id), Value: o.encode(), Timestamp: time.UnixMilli(o.ts)}
	})
}

// topicWatcher follows a topic read_committed and counts its records.
type topicWatcher struct {
	topic string
	n     atomic.Int64
	done  chan struct{}
}

func watchCounts(t *testing.T) *topicWatcher { return watchTopic(t, "order-counts") }

func watchTopic(t *testing.T, topic string) *topicWatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &topicWatcher{topic: topic, done: make(chan struct{})}
	cl := kafkatest.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			w.n.Add(int64(fs.NumRecords()))
		}
	}()
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

// waitFor waits until n records were read and returns when that was seen.
func (w *topicWatcher) waitFor(t *testing.T, n int64, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for w.n.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d committed records after %s, want %d", w.topic, w.n.Load(), timeout, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Now()
}

// checkExactlyOnce reads order-counts read_committed and checks that every
// user's counts are exactly 1, 2, … final[user]: no duplicate, no gap, no
// record of a user replay does not know.
func checkExactlyOnce(t *testing.T, final map[string]int64) {
	t.Helper()
	recs := readCommitted(t, "order-counts")
	seqs := map[string][]int64{}
	for _, r := range recs {
		v, err := serdes.Int64.Decode(r.Value)
		if err != nil {
			t.Fatalf("order-counts %s[%d]@%d: %v", r.Key, r.Partition, r.Offset, err)
		}
		if want := partitionOf(string(r.Key), 4); r.Partition != want {
			t.Fatalf("count of %s in partition %d, want %d", r.Key, r.Partition, want)
		}
		seqs[string(r.Key)] = append(seqs[string(r.Key)], v)
	}
	var total int64
	var bad []string
	for user, n := range final {
		total += n
		s := seqs[user]
		ok := int64(len(s)) == n
		for i := 0; ok && i < len(s); i++ {
			ok = s[i] == int64(i+1)
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: want 1..%d, got %v", user, n, s))
		}
	}
	for user := range seqs {
		if _, ok := final[user]; !ok {
			bad = append(bad, fmt.Sprintf("%s: counted by run, unknown to replay", user))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("... %d more", len(bad)-10))
		}
		t.Fatalf("order-counts is not exactly once (%d records, want %d):\n%s", len(recs), total, strings.Join(bad, "\n"))
	}
	if int64(len(recs)) != total {
		t.Fatalf("order-counts has %d records, want %d", len(recs), total)
	}
}

// TestThreeInstancesExactlyOnce runs three processes of ordercounts in one
// group under exactly_once_v2, each with its own state directory, while
// 20 000 orders arrive at a steady pace; one instance is stopped (SIGTERM)
// a third of the way in and started again at two thirds, so tasks move
// away from it and back, restoring from its local checkpoint. Read
// committed, order-counts must then hold exactly 1..n for every user, n
// being replay's final count: nothing lost, nothing twice, in order.
//
// The record cache is off so every count is written: with it, counts
// coalesce between commits and the sequence would have gaps by design.
func TestThreeInstancesExactlyOnce(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	bin, appID := orderCountsSetup(t)
	orders := countOrders(20000, 300, 7)
	final := replayFinalCounts(t, bin, orders)
	watch := watchCounts(t)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	start := func(i int) *proc {
		return startProc(t, fmt.Sprintf("instance %d", i), bin, "run", "--brokers", strings.Join(brokers, ","),
			"--application-id", appID, "--state-dir", dirs[i], "--guarantee", "exactly_once_v2", "--cache-bytes", "0")
	}
	procs := []*proc{start(0), start(1), start(2)}
	for _, p := range procs {
		p.waitLog(60*time.Second, "RUNNING", isRunning)
	}
	began := time.Now()
	// The producer keeps its pace while instance 1 stops and starts.
	var stopped chan error
	produceAtPace(t, orders, 2000, func(i int) {
		switch i {
		case len(orders) / 3:
			p := procs[1]
			stopped = make(chan error, 1)
			go func() { stopped <- p.terminate(60 * time.Second) }()
			t.Logf("%.1fs: stopping instance 1 after %d orders", time.Since(began).Seconds(), i)
		case 2 * len(orders) / 3:
			if err := <-stopped; err != nil {
				t.Fatalf("instance 1 after SIGTERM: %v", err)
			}
			procs[1] = start(1)
			t.Logf("%.1fs: instance 1 restarted after %d orders", time.Since(began).Seconds(), i)
		}
	})
	t.Logf("%.1fs: %d orders produced", time.Since(began).Seconds(), len(orders))
	watch.waitFor(t, int64(len(orders)), 90*time.Second)
	t.Logf("%.1fs: every count committed", time.Since(began).Seconds())
	for _, p := range procs {
		p.stop(60 * time.Second)
	}
	// Every instance worked: each ran tasks at some point.
	for i, p := range procs {
		if len(p.logsWith("task running")) == 0 {
			t.Errorf("instance %d never ran a task", i)
		}
	}
	checkExactlyOnce(t, final)
}
