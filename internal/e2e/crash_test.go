package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// restoreSpan is one store restoration the engine logged ("restoring
// store"): the changelog partition and the offsets it replayed.
type restoreSpan struct {
	topic     string
	partition int32
	from, to  int64
}

// restoreSpans reads the restorations from a process's log. The task id
// is <sub-topology>_<partition>, and a task's changelog partition is its
// partition.
func restoreSpans(t *testing.T, p *proc) []restoreSpan {
	t.Helper()
	var out []restoreSpan
	for _, l := range p.logsWith("restoring store") {
		task := l.str("task")
		i := strings.LastIndexByte(task, '_')
		part, err := strconv.Atoi(task[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("restoring store: task %q is not <sub>_<partition>", task)
		}
		out = append(out, restoreSpan{topic: l.str("changelog"), partition: int32(part), from: l.int("from_offset"), to: l.int("to_offset")})
	}
	return out
}

// TestKill9RestoresOnlyTheTail kills a running ordercounts instance with
// SIGKILL in the middle of its work and restarts it on the same state
// directory. Its Pebble store is at its last committed transaction, so the
// restart must restore only the changelog records after its checkpoint:
// from a non-zero offset, fewer records than the changelog holds, and
// exactly the committed records between the checkpoint and the end. The
// output must still be exactly once (order-counts 1..n per user).
//
// A killed member stays in the group until its session times out (45 s,
// franz-go's default; the engine has no static membership that would let
// its successor take its place at once), and the restarted instance gets no
// partitions before. The test evicts it right after the kill, as an
// operator would, so the wait does not cost every `make test` 45 s.
func TestKill9RestoresOnlyTheTail(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	bin, appID := orderCountsSetup(t)
	orders := countOrders(12000, 3000, 11)
	final := replayFinalCounts(t, bin, orders)
	watch := watchCounts(t)
	dir := t.TempDir()
	start := func(name string) *proc {
		return startProc(t, name, bin, "run", "--brokers", strings.Join(brokers, ","), "--application-id", appID,
			"--state-dir", dir, "--guarantee", "exactly_once_v2", "--cache-bytes", "0")
	}
	first := start("first instance")
	first.waitLog(60*time.Second, "RUNNING", isRunning)
	members := groupMembers(t, appID)
	began := time.Now()
	produceAtPace(t, orders[:8000], 4000, func(i int) {
		if i == 6000 {
			// Mid-run: records keep arriving, transactions are open.
			watch.waitFor(t, 2000, 30*time.Second)
			first.kill9()
			evict(t, appID, members)
			t.Logf("%.1fs: killed after %d orders produced, %d counts committed", time.Since(began).Seconds(), i, watch.n.Load())
		}
	})
	if got := len(first.logsWith("restoring store")); got != 0 {
		t.Fatalf("the first instance restored %d stores from an empty changelog", got)
	}
	second := start("restarted instance")
	produceAtPace(t, orders[8000:], 4000, nil)
	restored := second.waitLog(120*time.Second, "restored", func(l logLine) bool { return l.Msg == "restored" })
	t.Logf("%.1fs: restored %d records in %s", time.Since(began).Seconds(), restored.int("records"), restored.str("took"))
	watch.waitFor(t, int64(len(orders)), 120*time.Second)
	second.stop(60 * time.Second)

	spans := restoreSpans(t, second)
	if len(spans) == 0 {
		t.Fatal("the restarted instance restored nothing: no changelog tail past a checkpoint?")
	}
	changelog := appID + "-order-counts-store-changelog"
	recs := readCommitted(t, changelog)
	var tail, skipped int64
	for _, s := range spans {
		if s.topic != changelog {
			t.Fatalf("restored %q, want %q", s.topic, changelog)
		}
		if s.from <= 0 {
			t.Errorf("partition %d restored from offset %d: the local checkpoint was not used", s.partition, s.from)
		}
		for _, r := range recs {
			switch {
			case r.Partition != s.partition:
			case r.Offset < s.from:
				skipped++
			case r.Offset < s.to:
				tail++
			}
		}
	}
	var n int64 // every restoration of the run (a task may be restored twice)
	for _, l := range second.logsWith("restored") {
		n += l.int("records")
	}
	t.Logf("changelog: %d committed records; restored %d partitions from their checkpoints: %d records skipped, %d replayed (the tail)",
		len(recs), len(spans), skipped, n)
	if n != tail {
		t.Errorf("restored %d records, but the changelog holds %d committed records between the checkpoints and the ends %v", n, tail, spans)
	}
	if n >= int64(len(recs)) || skipped == 0 {
		t.Errorf("restored %d of %d changelog records (%d skipped): not only the tail", n, len(recs), skipped)
	}
	checkExactlyOnce(t, final)
}

// groupMembers lists the member ids of a consumer group.
func groupMembers(t *testing.T, group string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gs, err := admin(t).DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range gs[group].Members {
		ids = append(ids, m.MemberID)
	}
	if len(ids) == 0 {
		t.Fatalf("group %s has no members", group)
	}
	return ids
}

// evict removes members from a group (LeaveGroup on their behalf, what the
// coordinator does itself when their session times out).
func evict(t *testing.T, group string, ids []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	for _, id := range ids {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = id
		reason := "killed by the test"
		m.Reason = &reason
		req.Members = append(req.Members, m)
	}
	resp, err := req.RequestWith(ctx, kafkatest.Client(t))
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
		for _, m := range resp.Members {
			if err == nil {
				err = kerr.ErrorForCode(m.ErrorCode)
			}
		}
	}
	if err != nil {
		t.Fatalf("evicting %v from %s: %v", ids, group, err)
	}
}
