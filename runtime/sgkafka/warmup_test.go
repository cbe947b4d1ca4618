package sgkafka

import (
	"testing"
	"time"
)

// A second instance joins one that holds all the state: with warm-up
// replicas it runs nothing until its copies are caught up (warm-ups fill
// them from the changelogs), and the probing rebalance then hands it its
// share, restoring only a tail; without them (MaxWarmupReplicas < 0) it
// takes its share at once and restores it from scratch, which also shows
// the check can fail.
func TestWarmupsMoveTasksOnlyWhenCaughtUp(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		const parts, n = 4, 4000
		run := func(appID, in, out string, maxWarmups int) (restored int64) {
			tp := countTopology(t, ev, appID, in, out, parts)
			cfg := func() Config {
				return Config{Brokers: ev.brokers, ApplicationID: appID, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2,
					CommitInterval: 50 * time.Millisecond, MaxWarmupReplicas: maxWarmups, AcceptableRecoveryLag: n / 400,
					ProbingRebalanceInterval: 2 * time.Second}
			}
			a := startEngine(t, tp, cfg())
			waitFor(t, 60*time.Second, "a running every task", func() bool { return a.e.State() == Running && countTasks(a.e) == parts })
			recs := inputRecords(in, n, n) // one key per record: state grows with the input
			produce(t, ev.brokers, parts, recs)
			waitFor(t, 90*time.Second, "all records processed", func() bool { return a.e.Processed() >= n })
			b := startEngine(t, tp, cfg())
			if maxWarmups > 0 {
				waitFor(t, 60*time.Second, "b warming up its share", func() bool {
					warm, _ := standbyState(b.e)
					return warm == parts/2
				})
				if got := countTasks(b.e); got != 0 {
					t.Errorf("b runs %d tasks before its copies are caught up, want 0", got)
				}
			}
			waitFor(t, 90*time.Second, "b running its share", func() bool {
				return countTasks(b.e) == parts/2 && countTasks(a.e) == parts/2 && a.e.State() == Running && b.e.State() == Running
			})
			for _, r := range []*running{a, b} {
				if err := r.stop(t); err != nil {
					t.Fatal(err)
				}
			}
			expectDriverOutput(t, testEnv{brokers: ev.brokers, appID: appID, in: in, out: out}, tp, parts, recs, decodeCount, "output of "+appID)
			return b.e.TotalRestored()
		}
		warm := run(ev.appID, ev.in, ev.out, parts/2)
		if limit := int64(n / 100); warm > limit {
			t.Errorf("with warm-ups, b restored %d changelog records taking its tasks, want at most %d (1%% of the state)", warm, limit)
		}
		cold := run(ev.appID+"-nowarm", ev.in+"-contrast", ev.out+"-contrast", -1)
		if cold < n/4 {
			t.Errorf("without warm-ups, b restored %d records, want about half of %d: the contrast does not show", cold, n)
		}
		t.Logf("records b restored taking over its share: %d with warm-ups, %d without", warm, cold)
	})
}
