package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/serdes"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMeasure measures the generated binaries on the real broker and only
// logs: throughput of the orders and windows examples under
// exactly_once_v2, and restore time after kill -9 with and without the
// local state. It runs only with STREAMGEN_E2E_MEASURE=1 (it takes
// minutes); docs/benchmarks-runtime.md has its figures:
//
//	STREAMGEN_E2E_MEASURE=1 scripts/with-kafka.sh go test ./internal/e2e/ -run TestMeasure -v -timeout 30m
//
// STREAMGEN_E2E_RECORDS overrides the input size (default 200000).
func TestMeasure(t *testing.T) {
	if os.Getenv("STREAMGEN_E2E_MEASURE") != "1" {
		t.Skip("measurements run with STREAMGEN_E2E_MEASURE=1")
	}
	kafkatest.Brokers(t)
	n := 200000
	if v := os.Getenv("STREAMGEN_E2E_RECORDS"); v != "" {
		fmt.Sscan(v, &n)
	}
	t.Run("throughput/orders", func(t *testing.T) { measureThroughput(t, "orders", "orders", "processed-orders", n, fullOrders) })
	t.Run("throughput/windows", func(t *testing.T) { measureThroughput(t, "windows", "clicks", "tumbling-counts", n, clicks) })
	t.Run("restore/ordercounts", func(t *testing.T) { measureRestore(t, n) })
}

// fullOrders encodes n orders of the orders example (two items each), a
// thousand users, event time one second apart.
func fullOrders(n int, partitions int32) []*kgo.Record {
	var r rng = 21
	out := make([]*kgo.Record, n)
	for i := range out {
		id := fmt.Sprintf("o%d", i)
		b := serdes.AppendMapHeader(nil, 6)
		b = append(b, 1)
		b = serdes.AppendString(b, id)
		b = append(b, 2)
		b = serdes.AppendString(b, fmt.Sprintf("u%d", r.intn(1000)))
		b = append(b, 3)
		b = serdes.AppendFloat64(b, float64(r.intn(100000))/100)
		b = append(b, 4)
		ts := t0 + int64(i)*second
		b = serdes.AppendTimestamp(b, time.UnixMilli(ts))
		b = append(b, 5)
		b = serdes.AppendArrayHeader(b, 2)
		for j := 0; j < 2; j++ {
			b = serdes.AppendMapHeader(b, 4)
			b = append(b, 1)
			b = serdes.AppendString(b, fmt.Sprintf("S-%d", r.intn(500)))
			b = append(b, 2)
			b = serdes.AppendString(b, "filter papers")
			b = append(b, 3)
			b = serdes.AppendInt32(b, int32(1+r.intn(3)))
			b = append(b, 4)
			b = serdes.AppendFloat64(b, 3.5)
		}
		b = append(b, 7)
		b = serdes.AppendInt32(b, 1)
		out[i] = &kgo.Record{Topic: "orders", Partition: partitionOf(id, partitions), Key: []byte(id), Value: b, Timestamp: time.UnixMilli(ts)}
	}
	return out
}

// clicks makes n clicks on a thousand pages, 10 ms of event time apart.
func clicks(n int, partitions int32) []*kgo.Record {
	var r rng = 22
	out := make([]*kgo.Record, n)
	for i := range out {
		page := fmt.Sprintf("page-%d", r.intn(1000))
		out[i] = &kgo.Record{Topic: "clicks", Partition: partitionOf(page, partitions), Key: []byte(page),
			Value: []byte(fmt.Sprintf("user-%d", r.intn(5000))), Timestamp: time.UnixMilli(t0 + int64(i)*10)}
	}
	return out
}

func produceAll(t *testing.T, recs []*kgo.Record) {
	t.Helper()
	cl := newProducer(t, kgo.MaxBufferedRecords(100000))
	produceEach(t, cl, len(recs), 5*time.Minute, func(i int) *kgo.Record { return recs[i] })
}

// produceEach produces the n records next returns without waiting for
// each, then flushes within timeout; the first failure fails t.
func produceEach(t *testing.T, cl *kgo.Client, n int, timeout time.Duration, next func(i int) *kgo.Record) {
	t.Helper()
	var failed atomic.Value
	for i := 0; i < n; i++ {
		cl.Produce(context.Background(), next(i), func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, err)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("producing: %v", err)
	}
}

// measureThroughput produces n input records first, then runs the example
// under exactly_once_v2 and times how long until the output topic that
// gets one record per input (processed-orders, tumbling-counts) shows all n
// committed: from the engine's move to RUNNING (the rate) and from the
// process start (what a user waits).
func measureThroughput(t *testing.T, example, input, output string, n int, gen func(int, int32) []*kgo.Record) {
	brokers := kafkatest.Brokers(t)
	bin := buildExample(t, example)
	topics := declaredTopics(t, example)
	appID := uniqueID(example)
	recreateTopics(t, topics, appID)
	produceAll(t, gen(n, topics[input]))
	watch := watchTopic(t, output)
	started := time.Now()
	p := startProc(t, example, bin, "run", "--brokers", strings.Join(brokers, ","), "--application-id", appID,
		"--state-dir", t.TempDir(), "--guarantee", "exactly_once_v2")
	done := watch.waitFor(t, int64(n), 30*time.Minute)
	running := p.waitLog(time.Second, "RUNNING", isRunning)
	p.stop(time.Minute)
	busy := done.Sub(running.Time)
	t.Logf("MEASURE throughput %s: %d records, exactly_once_v2, %d partitions: %.0f records/s (%.1f s from RUNNING until %s had all %d committed; %.1f s from process start)",
		example, n, topics[input], float64(n)/busy.Seconds(), busy.Seconds(), output, n, done.Sub(started).Seconds())
}

// measureRestore builds an ordercounts state of n keys (every order a new
// user, so the changelog holds n records), kills the instance with SIGKILL
// and restarts it on its state directory (restores the tail past its
// checkpoint), then stops it cleanly and starts it on an empty state
// directory (restores everything). Restore time is the engine's "restored"
// log; time to RUNNING is counted from the assignment, so the group's
// session timeout after kill -9 (45 s) is not in it.
func measureRestore(t *testing.T, n int) {
	brokers := kafkatest.Brokers(t)
	bin, appID := orderCountsSetup(t)
	orders := make([]countOrder, n)
	for i := range orders {
		orders[i] = countOrder{id: fmt.Sprintf("o%d", i), user: fmt.Sprintf("u%d", i), amount: 1, ts: t0 + int64(i)}
	}
	recs := make([]*kgo.Record, n)
	for i, o := range orders {
		recs[i] = &kgo.Record{Topic: "orders", Partition: partitionOf(o.id, 4), Key: []byte(o.id), Value: o.encode(), Timestamp: time.UnixMilli(o.ts)}
	}
	produceAll(t, recs)
	watch := watchCounts(t)
	dir := t.TempDir()
	run := func(name, stateDir string) *proc {
		return startProc(t, name, bin, "run", "--brokers", strings.Join(brokers, ","), "--application-id", appID,
			"--state-dir", stateDir, "--guarantee", "exactly_once_v2")
	}
	first := run("first", dir)
	watch.waitFor(t, int64(n), 30*time.Minute)
	first.kill9()
	report := func(what string, p *proc) {
		running := p.waitLog(5*time.Minute, "RUNNING", isRunning)
		assigned := p.waitLog(time.Second, "assignment", func(l logLine) bool { return l.Msg == "partitions assigned" })
		var records int64
		var took []string
		for _, l := range p.logsWith("restored") {
			records += l.int("records")
			took = append(took, l.str("took"))
		}
		t.Logf("MEASURE restore %s: %d of %d changelog records restored (took %v); RUNNING %.2f s after the assignment",
			what, records, n, took, running.Time.Sub(assigned.Time).Seconds())
	}
	second := run("after kill -9", dir)
	report("after kill -9, local checkpoint", second)
	second.stop(time.Minute)
	third := run("no state", t.TempDir())
	report("without local state", third)
	third.stop(time.Minute)
}
