package interop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config is where a run happens.
type Config struct {
	Root     string   // repository root
	Brokers  []string // a real broker
	Registry string   // the registry's Confluent-compatible URL; "" when no scenario needs one
	Work     string   // scratch directory: binaries, state, logs
	Log      io.Writer
	// Timeout bounds the wait for both sides to process all input.
	Timeout time.Duration

	// epoch is the run's time base, an hour before it starts on a whole minute, which every
	// Java command of one run gets as STREAMGEN_INTEROP_EPOCH_MS: takeover scenarios time their
	// records from it, since Kafka Streams' window changelogs delete records older than their
	// retention plus a day.
	epoch time.Time
}

// Run runs the scenarios together (one Java producer, the streamgen apps and one JVM with
// every twin side by side, one Java consumer: JVM starts dominate on a small machine) and
// compares their outputs. The report goes to cfg.Log; an error means the run itself broke.
func Run(ctx context.Context, cfg Config, ss []*Scenario) (*Result, error) {
	for _, s := range ss {
		if s.Registry && cfg.Registry == "" {
			return nil, fmt.Errorf("interop: scenario %s needs a schema registry: set STREAMGEN_REGISTRY_URL (scripts/registry.sh start)", s.Name)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	run := fmt.Sprintf("%d", time.Now().UnixNano()%1e9)
	cfg.epoch = time.Now().Add(-time.Hour).Truncate(time.Minute)
	if err := createTopics(ctx, adm, ss); err != nil {
		return nil, err
	}
	bins, err := buildApps(ctx, cfg, ss)
	if err != nil {
		return nil, err
	}
	if tk := takeovers(ss); len(tk) > 0 {
		if err := runFirstHalf(ctx, cfg, adm, tk, bins, run); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(cfg.Log, "interop: producing the inputs of %d scenarios (Java)\n", len(ss))
	if _, err := javaOutput(ctx, cfg, append([]string{"produce", strings.Join(cfg.Brokers, ","), registryArg(cfg)}, names(ss)...)...); err != nil {
		return nil, err
	}
	if err := runBothSides(ctx, cfg, adm, ss, bins, run); err != nil {
		return nil, err
	}
	out, err := javaOutput(ctx, cfg, append([]string{"consume", strings.Join(cfg.Brokers, ","), registryArg(cfg)}, names(ss)...)...)
	if err != nil {
		return nil, err
	}
	// Kept for -keep: what the Java consumer read, one canonical record a line.
	_ = os.WriteFile(filepath.Join(cfg.Work, "consumed.jsonl"), out, 0o644)
	res, err := compare(cfg.Log, ss, out)
	if err != nil {
		return nil, err
	}
	if tk := takeovers(ss); len(tk) > 0 {
		d, err := compareChangelogs(ctx, cfg.Log, cfg, adm, tk, run)
		if err != nil {
			return nil, err
		}
		res.Differences += d
	}
	fmt.Fprintf(cfg.Log, "interop: formats covered: %s\n", res.Formats)
	return res, nil
}

func names(ss []*Scenario) []string {
	var n []string
	for _, s := range ss {
		n = append(n, s.Name)
	}
	return n
}

func registryArg(cfg Config) string {
	if cfg.Registry == "" {
		return "-"
	}
	return cfg.Registry
}

// createTopics deletes what an earlier run on the same broker left and creates every topic
// of the scenarios (the broker does not auto-create them).
func createTopics(ctx context.Context, adm *kadm.Client, ss []*Scenario) error {
	var all []string
	for _, s := range ss {
		for t := range s.Topics {
			all = append(all, t)
		}
	}
	if _, err := adm.DeleteTopics(ctx, all...); err != nil {
		return fmt.Errorf("interop: delete old topics: %v", err)
	}
	for _, s := range ss {
		for t, p := range s.Topics {
			if err := createTopic(ctx, adm, t, int32(p)); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepForever is the topics' retention. The scenarios' records carry event times of
// November 2023 (fixed, so both sides compute the same windows and timestamps), far past any
// broker's default retention of days: with it, the broker's next retention check (every 5
// minutes by default) deletes whole segments, inputs and outputs, in the middle of a run, and
// a side then reads nothing ("no records on ... from one side or both"), more often the
// slower the machine.
var keepForever = map[string]*string{"retention.ms": kadm.StringPtr("-1")}

// createTopic retries while the broker still deletes a topic of that name.
func createTopic(ctx context.Context, adm *kadm.Client, t string, partitions int32) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := adm.CreateTopic(ctx, partitions, 1, keepForever, t)
		if err == nil {
			err = r.Err
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, kerr.TopicAlreadyExists) || time.Now().After(deadline) {
			return fmt.Errorf("interop: create topic %s: %v", t, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// buildApps builds every scenario's app with one go command into cfg.Work/bin.
func buildApps(ctx context.Context, cfg Config, ss []*Scenario) (map[string]string, error) {
	bin := filepath.Join(cfg.Work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	bins := map[string]string{}
	for _, s := range ss {
		args = append(args, "./"+s.Dir)
		bins[s.Name] = filepath.Join(bin, s.Name)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cfg.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("interop: go build the scenario apps: %v\n%s", err, out)
	}
	return bins, nil
}

// javaCmd is interop/java/run.sh with args; its standard error goes to the log.
func javaCmd(ctx context.Context, cfg Config, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(cfg.Root, "interop", "java", "run.sh")}, args...)...)
	cmd.Dir = cfg.Root
	cmd.Stderr = cfg.Log
	cmd.Env = append(os.Environ(), fmt.Sprintf("STREAMGEN_INTEROP_EPOCH_MS=%d", cfg.epoch.UnixMilli()))
	return cmd
}

func javaOutput(ctx context.Context, cfg Config, args ...string) ([]byte, error) {
	out, err := javaCmd(ctx, cfg, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("interop: java %s: %v", args[0], err)
	}
	return out, nil
}

// runBothSides starts every streamgen app and the twins, waits until both have committed
// all input, and stops them. Caches are off on both sides, so every update is a record. A
// reverse takeover's second half is Kafka Streams' (streams-as), in place of its app.
func runBothSides(ctx context.Context, cfg Config, adm *kadm.Client, ss []*Scenario, bins map[string]string, run string) error {
	logs := filepath.Join(cfg.Work, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	groups := map[string][]string{}
	fwd, back := splitReverse(ss)
	for _, s := range fwd {
		p, err := startApp(cfg, s, bins[s.Name], run)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		groups[s.AppID+"-"+run] = s.consumed(s.AppID + "-" + run)
	}
	if len(back) > 0 {
		p, err := startStreamsAs(cfg, back, run, "kstreams-second", groups)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	for _, s := range ss {
		groups["interop-"+s.Name+"-kstreams-"+run] = s.consumed("interop-" + s.Name + "-kstreams-" + run)
	}
	twin := javaCmd(context.Background(), cfg, append([]string{"streams", strings.Join(cfg.Brokers, ","), registryArg(cfg),
		filepath.Join(cfg.Work, "kstreams"), run}, names(ss)...)...)
	p, err := start(twin, filepath.Join(logs, "kstreams.log"), "Kafka Streams twins")
	if err != nil {
		return err
	}
	procs = append(procs, p)
	fmt.Fprintf(cfg.Log, "interop: running %d streamgen apps, %d Kafka Streams takeovers and the twins\n", len(fwd), len(back))
	if err := waitCommitted(ctx, adm, groups, procs, cfg.Timeout); err != nil {
		return err
	}
	return stopAll(procs)
}

// startApp starts scenario s's streamgen app under its id for this run, on its own state
// directory, logging to logs/<name>.log.
func startApp(cfg Config, s *Scenario, bin, run string) (*proc, error) {
	logs := filepath.Join(cfg.Work, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	args := []string{"run", "--brokers", strings.Join(cfg.Brokers, ","), "--application-id", s.AppID + "-" + run,
		"--state-dir", filepath.Join(cfg.Work, "state", s.Name), "--cache-bytes", "0",
		// As the Java side (Main): unmatched left/outer join records are
		// emitted after every record, not on a wall-clock throttle.
		"--outer-join-emit-interval", "0"}
	if s.Registry {
		// Auto-registration registers the schemas of the sides the app writes; the
		// input subjects hold only what the Java producer registered.
		args = append(args, "--registry", cfg.Registry, "--registry-auto-register", "true")
	}
	p, err := start(exec.Command(bin, args...), filepath.Join(logs, s.Name+".log"), s.Name)
	if err != nil {
		return nil, err
	}
	p.term = true
	return p, nil
}

// stopAll stops every process, in order, and returns the first error.
func stopAll(procs []*proc) error {
	var first error
	for _, p := range procs {
		if err := p.stop(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// proc is a side of the run: a streamgen app or the twins' JVM, which stops when its
// standard input closes (the apps stop on SIGTERM).
type proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	log   string
	done  chan error
	ended bool
	// term says stop sends SIGTERM: the apps stop on it, the JVM on a closed stdin (a
	// SIGTERM'd JVM exits 143 whatever its shutdown hooks do).
	term bool
}

func start(cmd *exec.Cmd, logPath, name string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("interop: start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, stdin: in, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); f.Close() }()
	return p, nil
}

// exited reports, without waiting, an error when the process ended before it was stopped.
func (p *proc) exited() error {
	select {
	case err := <-p.done:
		p.ended = true
		return fmt.Errorf("interop: %s exited early (%v); its log:\n%s", p.name, err, tail(p.log))
	default:
		return nil
	}
}

// stop asks the process to end (SIGTERM and a closed stdin) and waits up to a minute.
func (p *proc) stop() error {
	if p.ended {
		return nil
	}
	p.ended = true
	p.stdin.Close()
	if p.term {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("interop: %s: %v; its log:\n%s", p.name, err, tail(p.log))
		}
		return nil
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("interop: %s did not stop within a minute", p.name)
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// waitCommitted waits until every group has committed offsets at the end of each of its
// input topics: under exactly_once_v2 that is when all the outputs of that input are
// committed too. A side that exits early ends the wait with its log.
func waitCommitted(ctx context.Context, adm *kadm.Client, groups map[string][]string, procs []*proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		for _, p := range procs {
			if err := p.exited(); err != nil {
				return err
			}
		}
		behind, err := firstBehind(ctx, adm, groups)
		if err != nil {
			return err
		}
		if behind == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("interop: %s has not processed all its input after %v", behind, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// firstBehind names a group that has not committed the end of its inputs, "" when none.
func firstBehind(ctx context.Context, adm *kadm.Client, groups map[string][]string) (string, error) {
	for g, topics := range groups {
		// Offsets first, then the ends: a stage that writes a repartition topic between the
		// two calls then shows as behind, where the other order could miss its records.
		committed, err := adm.FetchOffsets(ctx, g)
		if kerr.IsRetriable(err) {
			// On a new broker the offsets topic and its coordinators come with the first group.
			return fmt.Sprintf("group %s (%v)", g, err), nil
		}
		if err != nil {
			return "", err
		}
		ends, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return "", err
		}
		for _, t := range topics {
			if _, ok := ends[t]; !ok {
				// A repartition topic the app has not created yet.
				return fmt.Sprintf("group %s (%s not listed yet)", g, t), nil
			}
		}
		behind := ""
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				// A repartition topic the app has not created yet.
				behind = fmt.Sprintf("group %s (%s: %v)", g, o.Topic, o.Err)
				return
			}
			if o.Offset == 0 {
				return
			}
			c, ok := committed.Lookup(o.Topic, o.Partition)
			end := o.Offset
			if strings.HasSuffix(o.Topic, "-repartition") {
				// A repartition topic is written in transactions (exactly_once_v2): its
				// last offset is the marker that commits the last one, which a reader's
				// committed position need not pass.
				end--
			}
			if !ok || c.At < end {
				behind = fmt.Sprintf("group %s (%s[%d] at %d of %d)", g, o.Topic, o.Partition, c.At, o.Offset)
			}
		})
		if behind != "" {
			return behind, nil
		}
	}
	return "", nil
}

// lines splits the consumer's output.
func lines(out []byte) [][]byte {
	var ls [][]byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			ls = append(ls, append([]byte(nil), sc.Bytes()...))
		}
	}
	return ls
}
