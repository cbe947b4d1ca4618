package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
)

// buildApp builds the EOS application once per test.
func buildApp(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := BuildApp(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// runOnce runs cfg, which asks for one run, logs the summary and returns
// the run's result; a failed run fails t, saying replay (a format taking the
// seed) to reproduce it.
func runOnce(t *testing.T, cfg Config, replay string) Result {
	t.Helper()
	sum, results := Run(context.Background(), cfg)
	t.Log(sum)
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	r := results[0]
	if r.Err != nil {
		t.Fatalf("run failed ("+replay+"): %v", r.Seed, r.Err)
	}
	return r
}

// TestChaosShort is `make chaos` in small: one run of 20 000 records,
// two kill -9s of instances that hold open transactions, a clean restart
// in between, then Kafka's EOS verifier. It runs on the shared broker.
func TestChaosShort(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	cfg := Config{
		Brokers: brokers, Bin: buildApp(t), WorkDir: t.TempDir(), Out: testWriter{t},
		Runs: 1, Records: 20_000, Rate: 1000, Keys: 500, Kills: 2, Seed: uint64(time.Now().UnixNano() % 1_000_003),
		// Some kills outlast the session timeout (the tasks move), some
		// do not (static membership gives them back at once).
		SessionTimeout: 6 * time.Second, MaxDown: 9 * time.Second, CatchUp: 3 * time.Minute,
	}
	r := runOnce(t, cfg, "replay with go run ./chaos/cmd/chaos -seed %d -runs 1 -records 20000 -rate 1000 -keys 500 -kills 2 -session-timeout 6s -max-down 9s")
	if r.Records != 20_000 || r.Kills != 2 || r.Lost != 0 || r.Dup != 0 {
		t.Fatalf("want 20000 records, 2 kills, 0 lost, 0 duplicated: %v", r)
	}
}

// TestChaosShortStreams is TestChaosShort with the instances in a streams
// group (--group-protocol streams): the broker assigns the tasks. A killed
// static member holds its instance id until its session times out (the
// group's, at least 45 s on Kafka 4.4), so the restarted instance rejoins
// only then, and takes its tasks back; the clean restart leaves and
// rejoins at once.
func TestChaosShortStreams(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	cfg := Config{
		Brokers: brokers, Bin: buildApp(t), WorkDir: t.TempDir(), Out: testWriter{t},
		Runs: 1, Records: 20_000, Rate: 1000, Keys: 500, Kills: 2, Seed: uint64(time.Now().UnixNano() % 1_000_003),
		MaxDown: 9 * time.Second, CatchUp: 3 * time.Minute, InstanceArgs: []string{"--group-protocol", "streams"},
	}
	r := runOnce(t, cfg, "replay with go run ./chaos/cmd/chaos -seed %d -runs 1 -records 20000 -rate 1000 -keys 500 -kills 2 -max-down 9s -instance-args '--group-protocol streams'")
	if r.Records != 20_000 || r.Kills != 2 || r.Lost != 0 || r.Dup != 0 {
		t.Fatalf("want 20000 records, 2 kills, 0 lost, 0 duplicated: %v", r)
	}
}

// TestStaticMembershipKill9 kills an instance with SIGKILL and restarts it
// under the same --group-instance-id. Its session timeout is 60 s; without
// static membership the coordinator would wait for the dead member that
// long before handing out its partitions. With it, the restarted member
// takes the dead one's place and runs again well before.
func TestStaticMembershipKill9(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	bin := buildApp(t)
	ctx := context.Background()
	appID := "chaos-static-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	if err := resetTopics(ctx, brokers, appID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTopics(context.Background(), brokers, appID) })
	dir := t.TempDir()
	const session = 60 * time.Second
	in := &instance{name: "instance", bin: bin, logPath: filepath.Join(dir, "instance.log"), args: []string{
		"run", "--brokers", strings.Join(brokers, ","), "--application-id", appID,
		"--state-dir", filepath.Join(dir, "state"), "--group-instance-id", appID + "-i0",
		"--session-timeout", session.String(), "--log-format", "json"}}
	t.Cleanup(in.kill9)
	running := func(what string) time.Duration {
		t.Helper()
		began := time.Now()
		err := waitFor(ctx, 2*session, func() error {
			if err := in.exitedBadly(); err != nil {
				return err
			}
			if len(in.logged("partitions assigned")) == 0 || !in.isRunning() {
				return errNotYet
			}
			return nil
		})
		if err != nil {
			b, _ := os.ReadFile(in.logPath)
			t.Fatalf("%s: %v\n%s", what, err, b)
		}
		return time.Since(began)
	}
	if err := in.start(); err != nil {
		t.Fatal(err)
	}
	running("first start")
	gen := in.logged("partitions assigned")[0].num("generation")
	in.kill9()
	if err := in.start(); err != nil {
		t.Fatal(err)
	}
	took := running("restart after kill -9")
	assigned := in.logged("partitions assigned")
	regen := assigned[len(assigned)-1].num("generation")
	t.Logf("restarted member running after %s (session timeout %s); generation %d before the kill, %d after",
		took.Round(time.Millisecond), session, gen, regen)
	if took >= session/2 {
		t.Fatalf("the restarted static member ran only after %s: it waited for the session timeout (%s)", took, session)
	}
	if err := in.stop(time.Minute); err != nil {
		t.Fatal(err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestChaosBrokerFaults starts a run with the broker down (the instances
// must wait for it) and kills the broker with SIGKILL in the middle of the
// run; the application must recover by itself and the verifier pass. It
// needs a broker of its own (three broker starts: 77 s here), which
// kafkatest.NewBroker starts; like every broker test it fails under
// CI=true when no broker can be started, and skips under -short.
// `make chaos CHAOS_FLAGS=-broker-faults=1` runs the same at full size.
func TestChaosBrokerFaults(t *testing.T) {
	b := kafkatest.NewBroker(t)
	script, err := KafkaScript()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Brokers: []string{b.Addr}, Bin: buildApp(t), WorkDir: t.TempDir(), Out: testWriter{t},
		Runs: 1, Records: 20_000, Rate: 1000, Keys: 500, Kills: 1, Seed: uint64(time.Now().UnixNano() % 1_000_003),
		SessionTimeout: 10 * time.Second, MaxDown: 3 * time.Second, CatchUp: 5 * time.Minute,
		BrokerFaults: 1, Broker: ScriptBroker{Script: script, Dir: b.Dir},
	}
	r := runOnce(t, cfg, "seed %d")
	if r.Records != 20_000 || r.BrokerKills != 2 || r.Lost != 0 || r.Dup != 0 {
		t.Fatalf("want 20000 records, 2 broker kills (at start and mid-run), 0 lost, 0 duplicated: %v", r)
	}
}

// TestChaosRolling is the rolling-operations schedule in small (make
// chaos CHAOS_FLAGS=-rolling at full size): a rolling restart, 3 → 5 → 2
// instances and a kill -9 of the busiest, under load, with one standby
// replica and warm-ups. The verifier must pass; with a standby, neither
// the rolling restart nor the kill restores a changelog from its start,
// and the joiners of the scale-out get warm-ups instead of restores.
func TestChaosRolling(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	cfg := Config{
		Brokers: brokers, Bin: buildApp(t), WorkDir: t.TempDir(), Out: testWriter{t},
		Runs: 1, Records: 60_000, Rate: 1000, Keys: 2000, Seed: uint64(time.Now().UnixNano() % 1_000_003),
		SessionTimeout: 6 * time.Second, CommitInterval: 500 * time.Millisecond, CatchUp: 3 * time.Minute,
		// A low acceptable lag, so that the joiners' empty copies count
		// as behind at this state size and get warm-ups.
		Rolling: true, InstanceArgs: []string{"--standby-replicas", "1", "--probing-rebalance-interval", "3s", "--acceptable-recovery-lag", "100"},
	}
	r := runOnce(t, cfg, "replay with go run ./chaos/cmd/chaos -rolling -seed %d -records 60000 -rate 1000 -keys 2000 -session-timeout 6s -commit-interval 500ms -instance-args '--standby-replicas 1 --probing-rebalance-interval 3s --acceptable-recovery-lag 100'")
	if r.Records != 60_000 || r.Lost != 0 || r.Dup != 0 || len(r.Phases) != 4 {
		t.Fatalf("want 60000 records, 0 lost, 0 duplicated, 4 phases: %v (%d phases)", r, len(r.Phases))
	}
	for _, p := range r.Phases {
		if p.Name != "scale 5 to 2" && p.Scratch > 0 {
			t.Errorf("%s: %d restorations from scratch with one standby, want 0", p.Name, p.Scratch)
		}
	}
}
