// Package chaos proves exactly-once under crashes the way Apache Kafka
// proves Kafka Streams' (streams_eos_test and its verifier): a driver
// writes keyed integers at a steady rate, three instances of the EOS test
// application (chaos/eos, compiled by streamgen) process them under
// exactly_once_v2 while instances are killed with SIGKILL, stopped and
// restarted, and optionally the broker is killed; then a verifier checks
// every output against the input record by record. See README.md.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamgen/streamgen/internal/kadmin"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config scales and seeds the chaos runs.
type Config struct {
	Brokers []string
	// Bin is the EOS application binary (BuildApp builds it).
	Bin string
	// WorkDir holds the instances' state directories and logs; a run's
	// directory is removed when the run passes.
	WorkDir string
	Out     io.Writer
	// Keep keeps the logs and state of passed runs too.
	Keep bool

	Runs    int
	Records int           // input records per run
	Rate    int           // input records per second
	Keys    int           // distinct keys
	Kills   int           // kill -9 of an instance per run
	Seed    uint64        // run i uses Seed+i
	MaxDown time.Duration // an instance killed stays down up to this long

	SessionTimeout time.Duration
	CommitInterval time.Duration // 0: the spec's (5 s)
	CatchUp        time.Duration // how long processing may lag behind the driver

	// BrokerFaults kill -9 the broker this many times per run, and start
	// each run with the broker down (the instances must wait for it).
	BrokerFaults int
	Broker       BrokerControl

	// Rolling plays the rolling-operations schedule (rolling.go) instead
	// of random kills: a rolling restart, scaling 3 → 5 → 2, and a kill -9
	// of the busiest instance, each phase measured.
	Rolling bool
	// InstanceArgs are passed to every instance's run command, after the
	// runner's own (e.g. --standby-replicas 1).
	InstanceArgs []string
}

// BrokerControl crashes and restarts the broker of a broker-fault run.
type BrokerControl interface {
	Kill9() error
	Start() error
}

// ScriptBroker controls a broker of scripts/kafka.sh by its directory.
type ScriptBroker struct {
	Script, Dir string
}

func (b ScriptBroker) run(cmd string) error {
	out, err := exec.Command("bash", b.Script, cmd, b.Dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kafka.sh %s: %v: %s", cmd, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (b ScriptBroker) Kill9() error { return b.run("kill9") }
func (b ScriptBroker) Start() error { return b.run("start") }

// KafkaScript finds scripts/kafka.sh above the working directory.
func KafkaScript() (string, error) { return findRepoFile(filepath.Join("scripts", "kafka.sh")) }

// BuildApp builds the EOS application into dir and returns its path.
func BuildApp(ctx context.Context, dir string) (string, error) {
	mod, err := findRepoFile("go.mod")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "chaos-eos")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./chaos/eos")
	cmd.Dir = filepath.Dir(mod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./chaos/eos: %v\n%s", err, out)
	}
	return bin, nil
}

// Result is what one run measured.
type Result struct {
	Run            int
	Seed           uint64
	Records        int64 // input records verified
	Kills          int
	BrokerKills    int
	CleanRestarts  int
	AbortedTxns    int
	AbortedRecords int64
	Restores       int           // restorations (a task group opened after a start or a rebalance)
	Restored       int64         // changelog records restored
	RestoreMax     time.Duration // longest restoration
	RestoreTotal   time.Duration
	Lost, Dup      int64
	Took           time.Duration
	// Phases are the rolling schedule's measurements (Config.Rolling).
	Phases []Phase
	Err    error
}

func (r Result) String() string {
	status := "ok"
	if r.Err != nil {
		status = "FAILED: " + r.Err.Error()
	}
	return fmt.Sprintf("run %d seed=%d: %d input records, %d kills, %d clean restarts, %d broker kills, %d aborted transactions (%d aborted output records), %d restorations of %d records (max %s, total %s), %d lost, %d duplicated, %s: %s",
		r.Run, r.Seed, r.Records, r.Kills, r.CleanRestarts, r.BrokerKills, r.AbortedTxns, r.AbortedRecords,
		r.Restores, r.Restored, r.RestoreMax, r.RestoreTotal, r.Lost, r.Dup, r.Took.Round(time.Second), status)
}

// Summary adds up runs.
type Summary struct {
	Runs, Kills, Failed int
	Records, Lost, Dup  int64
}

func (s Summary) String() string {
	return fmt.Sprintf("chaos: %d runs, %d kills, %d input records, %d lost, %d duplicated, %d failed runs",
		s.Runs, s.Kills, s.Records, s.Lost, s.Dup, s.Failed)
}

// Run runs cfg.Runs runs one after the other and prints a line per run;
// the caller prints the summary.
func Run(ctx context.Context, cfg Config) (Summary, []Result) {
	cfg.defaults()
	var sum Summary
	var results []Result
	fmt.Fprintf(cfg.Out, "chaos: seed %d (replay with -seed %d); %d runs of %d records at %d/s, %d kills, %d broker kills each\n",
		cfg.Seed, cfg.Seed, cfg.Runs, cfg.Records, cfg.Rate, cfg.Kills, cfg.BrokerFaults)
	for i := 0; i < cfg.Runs && ctx.Err() == nil; i++ {
		r := runOne(ctx, cfg, i)
		results = append(results, r)
		fmt.Fprintln(cfg.Out, r)
		sum.Runs++
		sum.Kills += r.Kills
		sum.Records += r.Records
		sum.Lost += r.Lost
		sum.Dup += r.Dup
		if r.Err != nil {
			sum.Failed++
		}
	}
	return sum, results
}

func (cfg *Config) defaults() {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if cfg.Records <= 0 {
		cfg.Records = 100_000
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 2000
	}
	if cfg.Keys <= 0 {
		cfg.Keys = 1000
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.CatchUp <= 0 {
		cfg.CatchUp = 5 * time.Minute
	}
}

// event is one fault of a run's schedule.
type event struct {
	at   time.Duration // since the driver started
	kind string        // "kill", "restart", "broker"
	inst int
	down time.Duration
}

// schedule draws a run's faults: kills spread over the production window,
// a clean stop-and-restart of another instance between two kills, broker
// kills in the middle.
func schedule(rng *rand.Rand, cfg Config) []event {
	window := time.Duration(float64(cfg.Records) / float64(cfg.Rate) * float64(time.Second))
	at := func(lo, hi float64) time.Duration {
		return time.Duration((lo + rng.Float64()*(hi-lo)) * float64(window))
	}
	var evs []event
	var kills []time.Duration
	for range cfg.Kills {
		kills = append(kills, at(0.1, 0.85))
	}
	sort.Slice(kills, func(i, j int) bool { return kills[i] < kills[j] })
	for i, t := range kills {
		victim := rng.IntN(3)
		down := time.Duration(rng.Int64N(int64(cfg.MaxDown) + 1))
		evs = append(evs, event{at: t, kind: "kill", inst: victim, down: down})
		if i+1 < len(kills) {
			evs = append(evs, event{at: (t + down + kills[i+1]) / 2, kind: "restart", inst: (victim + 1 + rng.IntN(2)) % 3})
		}
	}
	for range cfg.BrokerFaults {
		evs = append(evs, event{at: at(0.3, 0.7), kind: "broker", down: time.Duration(2+rng.IntN(7)) * time.Second})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	return evs
}

// runOne is one run: fresh topics, three instances, the driver and the
// fault schedule, catch-up, then the verifier. Every phase is a method of
// chaosRun so each reads in one screen; a phase's error ends the run, and
// errors noted along the way (a failed restart) fail it at the end.
func runOne(ctx context.Context, cfg Config, i int) (res Result) {
	seed := cfg.Seed + uint64(i)
	r := &chaosRun{cfg: cfg, res: Result{Run: i + 1, Seed: seed}, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
	began := time.Now()
	defer func() { res = r.finish(time.Since(began)) }()
	// The seed decides the data and the faults; the application id is
	// new every time, so a replay never meets a previous run's group or
	// internal topics.
	r.appID = fmt.Sprintf("chaos-eos-%d-%x", seed, time.Now().UnixNano()&0xffffff)
	r.dir = filepath.Join(cfg.WorkDir, r.appID)
	os.RemoveAll(r.dir)
	if r.res.Err = os.MkdirAll(r.dir, 0o755); r.res.Err != nil {
		return
	}
	if r.res.Err = resetTopics(ctx, cfg.Brokers, r.appID); r.res.Err != nil {
		return
	}
	r.newInstances()
	defer r.killAll()
	if r.res.Err = r.startInstances(ctx); r.res.Err != nil {
		return
	}
	watch, err := watchOutputs(ctx, cfg.Brokers)
	if r.res.Err = err; err != nil {
		return
	}
	defer watch.close()
	drive := r.drive
	if cfg.Rolling {
		drive = func(ctx context.Context, seed uint64) error { return r.driveRolling(ctx, seed, watch) }
	}
	if r.res.Err = drive(ctx, seed); r.res.Err != nil {
		return
	}
	if r.res.Err = r.catchUp(ctx, watch); r.res.Err != nil {
		return
	}
	r.countRestorations()
	r.res.Err = r.verify(ctx)
	return
}

// chaosRun holds one run's state while its phases run.
type chaosRun struct {
	cfg   Config
	res   Result
	rng   *rand.Rand // the fault schedule's
	appID string
	dir   string // state directories and logs
	insts []*instance
	// retired are instances a scale-down stopped for good.
	retired []*instance
	errs    []error // noted on the way; they fail the run at the end
}

func (r *chaosRun) note(err error) {
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

// finish joins the noted errors into the result, points a failure at its
// logs and removes a passed run's directory.
func (r *chaosRun) finish(took time.Duration) Result {
	res := r.res
	res.Took = took
	if res.Err == nil {
		res.Err = errors.Join(r.errs...)
	}
	if res.Err != nil {
		res.Err = fmt.Errorf("%w (logs in %s)", res.Err, r.dir)
		r.printLogTails()
	} else if !r.cfg.Keep {
		os.RemoveAll(r.dir)
	}
	return res
}

// printLogTails prints, for a failed run, each instance's last warnings
// and errors and its last lines, so a failure in CI (whose run directory
// goes with the test's temporary directory) still shows what the
// instances said.
func (r *chaosRun) printLogTails() {
	if r.cfg.Out == nil {
		return
	}
	for _, in := range append(slices.Clone(r.insts), r.retired...) {
		b, err := os.ReadFile(in.logPath)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		var bad []string
		for _, l := range lines {
			if strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
				bad = append(bad, l)
			}
		}
		fmt.Fprintf(r.cfg.Out, "%s: last warnings and errors:\n%s\n%s: last lines:\n%s\n", in.name,
			strings.Join(bad[max(0, len(bad)-20):], "\n"), in.name, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
}

// newInstances prepares the three instances: static members with their own
// state directories, the record cache off so every update is emitted.
func (r *chaosRun) newInstances() {
	r.insts = make([]*instance, 3)
	for k := range r.insts {
		r.insts[k] = r.newInstance(k)
	}
}

// newInstance is instance k of the run, not started.
func (r *chaosRun) newInstance(k int) *instance {
	a := []string{"run", "--brokers", strings.Join(r.cfg.Brokers, ","), "--application-id", r.appID,
		"--state-dir", filepath.Join(r.dir, fmt.Sprintf("state-%d", k)),
		"--group-instance-id", fmt.Sprintf("%s-i%d", r.appID, k),
		"--session-timeout", r.cfg.SessionTimeout.String(),
		"--cache-bytes", "0", "--log-format", "json"}
	if r.cfg.CommitInterval > 0 {
		a = append(a, "--commit-interval", r.cfg.CommitInterval.String())
	}
	a = append(a, r.cfg.InstanceArgs...)
	return &instance{name: fmt.Sprintf("instance %d", k), bin: r.cfg.Bin, args: a,
		logPath: filepath.Join(r.dir, fmt.Sprintf("instance-%d.log", k))}
}

func (r *chaosRun) killAll() {
	for _, in := range r.insts {
		in.kill9()
	}
}

// startInstances starts the instances and waits until all are RUNNING.
// Broker faults start with the broker down: the instances must wait for
// it, as Kafka Streams does, instead of failing.
func (r *chaosRun) startInstances(ctx context.Context) error {
	if r.cfg.BrokerFaults > 0 {
		if err := r.cfg.Broker.Kill9(); err != nil {
			return err
		}
		r.res.BrokerKills++
	}
	for _, in := range r.insts {
		if err := in.start(); err != nil {
			return err
		}
	}
	if r.cfg.BrokerFaults > 0 {
		sleep(ctx, time.Duration(3+r.rng.IntN(6))*time.Second)
		if err := r.cfg.Broker.Start(); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, 3*time.Minute, func() error { return runningOrFailed(r.insts...) }); err != nil {
		return fmt.Errorf("instances not RUNNING: %w", err)
	}
	return nil
}

// drive writes the input while the fault schedule plays, and returns when
// the driver has written every record.
func (r *chaosRun) drive(ctx context.Context, seed uint64) error {
	drv := &driver{brokers: r.cfg.Brokers, topic: inputTopic, records: r.cfg.Records, rate: r.cfg.Rate, keys: r.cfg.Keys,
		rng: rand.New(rand.NewPCG(seed, 0xda7a))}
	drvDone := make(chan error, 1)
	start := time.Now()
	go func() { drvDone <- drv.run(ctx) }()
	for _, ev := range schedule(r.rng, r.cfg) {
		sleep(ctx, time.Until(start.Add(ev.at)))
		for _, in := range r.insts {
			if err := in.exitedBadly(); err != nil {
				r.note(err)
				r.note(in.start())
			}
		}
		r.inject(ctx, ev)
	}
	return <-drvDone
}

// inject plays one fault of the schedule.
func (r *chaosRun) inject(ctx context.Context, ev event) {
	switch ev.kind {
	case "kill":
		// Like Kafka's test, kill an instance that is processing (it
		// holds an open transaction), not one still starting up.
		victim := r.insts[ev.inst]
		waitFor(ctx, time.Minute, func() error {
			if victim.isRunning() || victim.exitedBadly() != nil {
				return nil
			}
			return errNotYet
		})
		victim.kill9()
		r.res.Kills++
		sleep(ctx, ev.down)
		r.note(victim.start())
	case "restart":
		r.note(r.insts[ev.inst].stop(2 * time.Minute))
		r.note(r.insts[ev.inst].start())
		r.res.CleanRestarts++
	case "broker":
		r.note(r.cfg.Broker.Kill9())
		r.res.BrokerKills++
		sleep(ctx, ev.down)
		r.note(r.cfg.Broker.Start())
	}
}

// catchUp waits until every output holds one record per input record,
// then stops the instances cleanly.
func (r *chaosRun) catchUp(ctx context.Context, watch *outputWatch) error {
	total, err := endTotal(ctx, r.cfg.Brokers, inputTopic)
	if err != nil {
		return err
	}
	r.note(waitFor(ctx, r.cfg.CatchUp, func() error {
		for _, in := range r.insts {
			if err := in.exitedBadly(); err != nil {
				return err
			}
		}
		for _, t := range outputTopics {
			if n := watch.count(t); n < total {
				return fmt.Errorf("%w: %s has %d of %d records", errNotYet, t, n, total)
			}
		}
		return nil
	}))
	for _, in := range r.insts {
		r.note(in.stop(2 * time.Minute))
	}
	return nil
}

// countRestorations adds up the restorations the instances logged.
func (r *chaosRun) countRestorations() {
	for _, in := range append(slices.Clone(r.insts), r.retired...) {
		for _, l := range in.restorations() {
			r.res.Restores++
			r.res.Restored += l.num("records")
			if d, err := time.ParseDuration(l.str("took")); err == nil {
				r.res.RestoreMax = max(r.res.RestoreMax, d)
				r.res.RestoreTotal += d
			}
		}
	}
}

// verify runs Kafka's checks over the outputs; a passed run's topics are
// deleted.
func (r *chaosRun) verify(ctx context.Context) error {
	v, err := verify(ctx, r.cfg.Brokers, r.appID)
	if err != nil {
		return fmt.Errorf("verifier: %w", err)
	}
	r.res.Records = v.inputs
	r.res.Lost = v.lost + v.unprocessed
	r.res.Dup = v.dup
	r.res.AbortedTxns = v.abortedTxns
	r.res.AbortedRecords = v.abortedRecords
	r.note(v.err())
	if len(r.errs) == 0 {
		deleteTopics(ctx, r.cfg.Brokers, r.appID)
	}
	return nil
}

var errNotYet = errors.New("not yet")

// runningOrFailed is nil when every instance is RUNNING, the exit error of
// one that exited, else errNotYet (a waitFor condition).
func runningOrFailed(insts ...*instance) error {
	for _, in := range insts {
		if err := in.exitedBadly(); err != nil {
			return err
		}
		if !in.isRunning() {
			return errNotYet
		}
	}
	return nil
}

// waitFor polls f until it returns nil, a non-errNotYet error, or timeout.
func waitFor(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || !errors.Is(err, errNotYet) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", timeout, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func admin(brokers []string) (*kadm.Client, *kgo.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}

// resetTopics deletes the application's topics (a previous run's) and
// creates the input and output topics empty, 5 partitions each.
func resetTopics(ctx context.Context, brokers []string, appID string) error {
	adm, cl, err := admin(brokers)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	names := append([]string{inputTopic}, outputTopics...)
	if _, err := adm.DeleteTopics(ctx, names...); err != nil {
		return fmt.Errorf("deleting topics: %w", err)
	}
	want := map[string]int32{}
	for _, name := range names {
		if err := kadmin.Create(ctx, adm, name, partitions); err != nil {
			return fmt.Errorf("creating topic %q: %w", name, err)
		}
		want[name] = partitions
	}
	// Every partition led before the run starts.
	if err := kadmin.WaitLed(ctx, adm, want, 100*time.Millisecond); err != nil {
		return fmt.Errorf("topics not ready: %w", err)
	}
	return nil
}

// deleteTopics removes a passed run's internal topics so that many runs
// do not pile up partitions on the broker.
func deleteTopics(ctx context.Context, brokers []string, appID string) {
	adm, cl, err := admin(brokers)
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	kadmin.DeleteAppTopics(ctx, adm, appID)
}

func endTotal(ctx context.Context, brokers []string, topic string) (int64, error) {
	adm, cl, err := admin(brokers)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n, nil
}

// outputWatch counts the committed records of the output topics as they
// arrive, to know when processing caught up with the driver.
type outputWatch struct {
	cl     *kgo.Client
	mu     sync.Mutex
	counts map[string]int64
	done   chan struct{}
	// last is when records of each output partition last arrived, gaps
	// the pauses between arrivals longer than minGap (rolling.go).
	last map[string]time.Time
	gaps []outputGap
}

func watchOutputs(ctx context.Context, brokers []string) (*outputWatch, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(outputTopics...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	w := &outputWatch{cl: cl, counts: map[string]int64{}, done: make(chan struct{}), last: map[string]time.Time{}}
	go func() {
		defer close(w.done)
		for {
			fs := cl.PollFetches(ctx)
			if fs.IsClientClosed() || ctx.Err() != nil {
				return
			}
			now := time.Now()
			w.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { w.counts[r.Topic]++ })
			fs.EachPartition(func(p kgo.FetchTopicPartition) {
				if len(p.Records) > 0 {
					w.arrived(fmt.Sprintf("%s[%d]", p.Topic, p.Partition), now)
				}
			})
			w.mu.Unlock()
		}
	}()
	return w, nil
}

func (w *outputWatch) count(topic string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[topic]
}

func (w *outputWatch) close() {
	w.cl.Close()
	<-w.done
}
