// Package sgrun is a generated binary's `run` command: its flags and
// STREAMGEN_* environment, signals, TLS and SASL files, the CPU profile
// switch, and the demo conveniences (`--embedded`: an in-process Kafka,
// franz-go's kfake; `--input`; `--print`). It turns them into an
// sgkafka.Config and runs the engine. Generated code sets App.Run = sgrun.Run.
//
// The engine library is package sgkafka, which neither parses flags nor
// links kfake. See docs/operations.md ("The embedded broker") for what
// linking kfake costs a binary and why it is kept.
package sgrun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgkafka"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// warmupFlags are the warm-up replica settings of run (Kafka Streams'
// max.warmup.replicas, acceptable.recovery.lag and
// probing.rebalance.interval.ms, with their defaults).
type warmupFlags struct {
	max      int
	lag      int64
	interval time.Duration
}

func (w *warmupFlags) add(fs *flag.FlagSet) error {
	max, err := strconv.Atoi(env("MAX_WARMUP_REPLICAS", strconv.Itoa(sgkafka.DefaultMaxWarmupReplicas)))
	if err != nil {
		return fmt.Errorf("streamgen: run: STREAMGEN_MAX_WARMUP_REPLICAS: %v", err)
	}
	lag, err := strconv.ParseInt(env("ACCEPTABLE_RECOVERY_LAG", strconv.Itoa(sgkafka.DefaultAcceptableRecoveryLag)), 10, 64)
	if err != nil {
		return fmt.Errorf("streamgen: run: STREAMGEN_ACCEPTABLE_RECOVERY_LAG: %v", err)
	}
	interval, err := time.ParseDuration(env("PROBING_REBALANCE_INTERVAL", sgkafka.DefaultProbingRebalanceInterval.String()))
	if err != nil {
		return fmt.Errorf("streamgen: run: STREAMGEN_PROBING_REBALANCE_INTERVAL: %v", err)
	}
	fs.IntVar(&w.max, "max-warmup-replicas", max, "warm-up replicas the group leader places at once so that tasks move only to instances with a caught-up copy of their state; -1 moves them at once (env STREAMGEN_MAX_WARMUP_REPLICAS)")
	fs.Int64Var(&w.lag, "acceptable-recovery-lag", lag, "changelog records a copy of a task's state may lag and still count as caught up (env STREAMGEN_ACCEPTABLE_RECOVERY_LAG)")
	fs.DurationVar(&w.interval, "probing-rebalance-interval", interval, "how long after placing warm-ups the leader rebalances to move the caught-up ones (env STREAMGEN_PROBING_REBALANCE_INTERVAL)")
	return nil
}

// emitIntervals are the wall-clock emit throttles of run: Kafka Streams'
// internal __emit.interval.ms.kstreams.windowed.aggregation__ and
// __emit.interval.ms.kstreams.outer.join.spurious.results.fix__, 1 s by
// default; 0 turns a throttle off, so that what emit-on-close windows and
// left or outer stream-stream joins emit does not depend on how fast
// records arrive (replay's flags of the same names default to 0).
type emitIntervals struct{ window, outerJoin time.Duration }

func (e *emitIntervals) add(fs *flag.FlagSet) error {
	for _, f := range []struct {
		d           *time.Duration
		name, env   string
		what, kafka string
	}{
		{&e.window, "window-emit-interval", "WINDOW_EMIT_INTERVAL", "emit-on-close windowed aggregations", "windowed.aggregation"},
		{&e.outerJoin, "outer-join-emit-interval", "OUTER_JOIN_EMIT_INTERVAL", "the unmatched records of left and outer stream-stream joins", "outer.join.spurious.results.fix"},
	} {
		d, err := time.ParseDuration(env(f.env, sgkafka.DefaultEmitInterval.String()))
		if err != nil {
			return fmt.Errorf("streamgen: run: STREAMGEN_%s: %v", f.env, err)
		}
		fs.DurationVar(f.d, f.name, d, fmt.Sprintf("wall-clock throttle of %s, Kafka Streams' __emit.interval.ms.kstreams.%s__; 0 turns it off (env STREAMGEN_%s)", f.what, f.kafka, f.env))
	}
	return nil
}

// config returns the intervals as sgkafka.Config takes them: 0 there is
// the default, so a 0 flag is NoEmitThrottle.
func (e emitIntervals) config() (window, outerJoin time.Duration) {
	conv := func(d time.Duration) time.Duration {
		if d == 0 {
			return sgkafka.NoEmitThrottle
		}
		return d
	}
	return conv(e.window), conv(e.outerJoin)
}

// runFlags are the run command's settings.
type runFlags struct {
	connFlags
	appID, stateDir, guaranteeName string
	guarantee                      sgkafka.Guarantee
	commitInterval                 time.Duration
	cacheBytes                     int64
	storeMemoryBytes               int64
	workers                        int
	standbyReplicas                int
	warmups                        warmupFlags
	rack                           string
	groupInstanceID                string
	groupProtocol                  string
	sessionTimeout                 time.Duration
	logLevel, logFormat            string
	embedded                       bool
	input, print                   string
	untilIdle                      time.Duration
	emitIntervals                  emitIntervals
	metricsAddr                    string
	query                          *queryFlags
	policies                       *policyFlags
	errorPolicies                  errorPolicies
}

// env returns the value of STREAMGEN_<name>, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("STREAMGEN_" + name); ok {
		return v
	}
	return def
}

// Run is a generated binary's `run` command: it runs the application's
// topology on Kafka until SIGINT/SIGTERM (then it commits, flushes, closes
// and exits 0). Generated code sets App.Run = sgrun.Run.
func Run(app *sgapp.App, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return RunContext(ctx, app, args, stdout, stderr)
}

// RunContext is Run with a context in place of the signals, for tests and
// embedding: ending ctx is a clean shutdown.
func RunContext(ctx context.Context, app *sgapp.App, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "streamgen: internal error: %v\n", r)
			code = 1
		}
	}()
	f, err := parseRunFlags(app, args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	logger, err := sgapp.Logger(stderr, f.logLevel, f.logFormat == "json")
	if err != nil {
		fmt.Fprintf(stderr, "streamgen: run: --log-level: %v\n", err)
		return 2
	}
	if err := runApp(ctx, app, f, stdout, logger); err != nil {
		fmt.Fprintln(stderr, explainSecurityError(err, &f.connFlags))
		return 1
	}
	return 0
}

// parseRunFlags reads the run command's flags, with the environment and the
// spec's settings as their defaults.
func parseRunFlags(app *sgapp.App, args []string, stderr io.Writer) (*runFlags, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &runFlags{}
	guarantee := app.Guarantee
	if guarantee == "" {
		guarantee = sgkafka.AtLeastOnce.String()
	}
	addConnFlags(fs, &f.connFlags, "run")
	fs.StringVar(&f.appID, "application-id", env("APPLICATION_ID", app.ID), "application id: consumer group and internal topic prefix (env STREAMGEN_APPLICATION_ID)")
	fs.StringVar(&f.stateDir, "state-dir", env("STATE_DIR", ""), "state store directory (env STREAMGEN_STATE_DIR; default <tmp>/streamgen/<application id>)")
	fs.StringVar(&f.guaranteeName, "guarantee", env("GUARANTEE", guarantee), "at_least_once or exactly_once_v2 (env STREAMGEN_GUARANTEE)")
	ci := time.Duration(0)
	if v := env("COMMIT_INTERVAL", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("streamgen: run: STREAMGEN_COMMIT_INTERVAL: %v", err)
		}
		ci = d
	} else {
		ci = app.CommitInterval
	}
	fs.DurationVar(&f.commitInterval, "commit-interval", ci, "commit interval (env STREAMGEN_COMMIT_INTERVAL; default from the spec, else 30s, 100ms under exactly_once_v2)")
	cache, err := strconv.ParseInt(env("CACHE_BYTES", strconv.Itoa(10<<20)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("streamgen: run: STREAMGEN_CACHE_BYTES: %v", err)
	}
	fs.Int64Var(&f.cacheBytes, "cache-bytes", cache, "record cache size in bytes, 0 disables (env STREAMGEN_CACHE_BYTES)")
	storeMem, err := strconv.ParseInt(env("STORE_MEMORY_BYTES", "0"), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("streamgen: run: STREAMGEN_STORE_MEMORY_BYTES: %v", err)
	}
	fs.Int64Var(&f.storeMemoryBytes, "store-memory-bytes", storeMem, "one budget in bytes for the block cache and memtables of all state stores, 0 for none (env STREAMGEN_STORE_MEMORY_BYTES; see docs/operations.md)")
	workers, err := strconv.Atoi(env("WORKERS", "1"))
	if err != nil {
		return nil, fmt.Errorf("streamgen: run: STREAMGEN_WORKERS: %v", err)
	}
	fs.IntVar(&f.workers, "workers", workers, "stream threads (env STREAMGEN_WORKERS)")
	standbys, err := strconv.Atoi(env("STANDBY_REPLICAS", strconv.Itoa(app.StandbyReplicas)))
	if err != nil {
		return nil, fmt.Errorf("streamgen: run: STREAMGEN_STANDBY_REPLICAS: %v", err)
	}
	fs.StringVar(&f.rack, "rack", env("RACK", ""), "the rack or zone this instance runs in: standbys go to other racks than their task's, and consumers fetch from a replica in it (client.rack) (env STREAMGEN_RACK)")
	fs.IntVar(&f.standbyReplicas, "standby-replicas", standbys, "standby replicas of each task on other instances, kept up to date from the changelogs (env STREAMGEN_STANDBY_REPLICAS; default from the spec, else 0)")
	if err := f.warmups.add(fs); err != nil {
		return nil, err
	}
	fs.StringVar(&f.groupProtocol, "group-protocol", env("GROUP_PROTOCOL", "classic"), "how instances share the tasks: classic (a consumer group, streamgen's assignor) or streams (a KIP-1071 streams group: Kafka 4.2+ assigns tasks, standbys and warm-ups) (env STREAMGEN_GROUP_PROTOCOL)")
	fs.StringVar(&f.groupInstanceID, "group-instance-id", env("GROUP_INSTANCE_ID", ""), "static group membership id, unique per instance; worker i of several gets -<i> appended (env STREAMGEN_GROUP_INSTANCE_ID)")
	st := 45 * time.Second
	if v := env("SESSION_TIMEOUT", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("streamgen: run: STREAMGEN_SESSION_TIMEOUT: %v", err)
		}
		st = d
	}
	fs.DurationVar(&f.sessionTimeout, "session-timeout", st, "how long the group waits for a silent member before moving its tasks (env STREAMGEN_SESSION_TIMEOUT)")
	fs.StringVar(&f.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (env STREAMGEN_LOG_LEVEL)")
	fs.StringVar(&f.logFormat, "log-format", env("LOG_FORMAT", "text"), "text or json (env STREAMGEN_LOG_FORMAT)")
	embedded, _ := strconv.ParseBool(env("EMBEDDED", "false"))
	fs.BoolVar(&f.embedded, "embedded", embedded, "run against an in-process Kafka (franz-go kfake) with the declared topics created (env STREAMGEN_EMBEDDED)")
	fs.StringVar(&f.input, "input", "", "produce the records of this replay-format JSON lines file before processing")
	fs.StringVar(&f.print, "print", "", "print the records of these comma-separated topics (read committed) as JSON lines on stdout")
	fs.DurationVar(&f.untilIdle, "until-idle", 0, "exit 0 once the input is processed and no record arrived for this long")
	if err := f.emitIntervals.add(fs); err != nil {
		return nil, err
	}
	fs.StringVar(&f.metricsAddr, "metrics-addr", env("METRICS_ADDR", ""), "serve Prometheus metrics on http://<addr>/metrics, e.g. 127.0.0.1:9100 (env STREAMGEN_METRICS_ADDR)")
	f.policies = addPolicyFlags(fs, app)
	f.query = addQueryFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s run [flags]\n\nRuns the application on Kafka until SIGINT/SIGTERM.\n\nFlags:\n", app.ID)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("streamgen: run: unexpected arguments %q", fs.Args())
	}
	if err := f.finish(!f.embedded); err != nil {
		return nil, err
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return nil, fmt.Errorf("streamgen: run: --log-format %q: want text or json", f.logFormat)
	}
	if f.guarantee, err = sgkafka.ParseGuarantee(f.guaranteeName); err != nil {
		return nil, fmt.Errorf("streamgen: run: --guarantee %q: want %s or %s", f.guaranteeName, sgkafka.AtLeastOnce, sgkafka.ExactlyOnceV2)
	}
	if f.sessionTimeout <= 0 {
		return nil, fmt.Errorf("streamgen: run: --session-timeout %s: want a positive duration", f.sessionTimeout)
	}
	if f.workers < 1 {
		return nil, fmt.Errorf("streamgen: run: --workers %d: want at least 1", f.workers)
	}
	if f.storeMemoryBytes != 0 {
		if err := sgstate.CheckMemoryBudget(f.storeMemoryBytes); err != nil {
			return nil, fmt.Errorf("streamgen: run: --store-memory-bytes %d: %v (0 for no budget)", f.storeMemoryBytes, err)
		}
	}
	if f.errorPolicies, err = f.policies.resolve(); err != nil {
		return nil, err
	}
	return f, nil
}

func runApp(ctx context.Context, app *sgapp.App, f *runFlags, stdout io.Writer, slogger *slog.Logger) error {
	sec, err := f.securityOpts()
	if err != nil {
		return err
	}
	tp, err := sgstream.NewTopology(f.appID, app.Build)
	if err != nil {
		return err
	}
	brokers := splitList(f.brokers)
	if f.embedded {
		stop, addrs, err := startEmbedded(ctx, app, tp, slogger)
		if err != nil {
			return err
		}
		defer stop()
		brokers, sec = addrs, nil
	}
	// The topology's sinks are what run writes (and --input's topics, bound
	// as produce binds them).
	bindWrites, err := f.bindRegistry(ctx, app, f.embedded, tp.Writes, slogger)
	if err != nil {
		return err
	}
	httpSec, err := f.query.security()
	if err != nil {
		return err
	}
	qs, err := sgkafka.ListenQueries(f.query.addr, f.query.advertise, f.query.redirect, httpSec, slogger)
	if err != nil {
		return err
	}
	defer qs.Stop()
	cfg := sgkafka.Config{
		Brokers: brokers, ApplicationID: f.appID, StateDir: f.stateDir, Guarantee: f.guarantee,
		CommitInterval: f.commitInterval, CacheMaxBytes: f.cacheBytes, StoreMemoryBytes: f.storeMemoryBytes, Workers: f.workers,
		GroupInstanceID: f.groupInstanceID, GroupProtocol: f.groupProtocol, SessionTimeout: f.sessionTimeout, StandbyReplicas: f.standbyReplicas, Rack: f.rack,
		MaxWarmupReplicas: f.warmups.max, AcceptableRecoveryLag: f.warmups.lag, ProbingRebalanceInterval: f.warmups.interval,
		Logger: slogger, ClientOpts: sec,
		Deserialization: f.errorPolicies.deser, Processing: f.errorPolicies.proc,
		DeadLetterTopic: f.errorPolicies.deadLetterTopic, InvalidTime: f.errorPolicies.invalidTime,
		IdleExit: f.untilIdle, OnStart: app.OnStart,
	}
	cfg.WindowEmitInterval, cfg.OuterJoinEmitInterval = f.emitIntervals.config()
	cfg.QueryAddr = qs.Addr()
	reg := sgkafka.NewMetricsRegistry()
	if f.metricsAddr != "" {
		cfg.Metrics = reg
	}
	e, err := sgkafka.New(tp, cfg)
	if err != nil {
		return err
	}
	if f.metricsAddr != "" {
		addr, stop, err := sgkafka.ServeMetricsPage(f.metricsAddr, reg, httpSec, e)
		if err != nil {
			return fmt.Errorf("%w: --metrics-addr: %w", sgkafka.ErrConfig, err)
		}
		defer stop()
		slogger.Info("serving metrics", "url", httpSec.Scheme()+"://"+addr+"/metrics", "page", httpSec.Scheme()+"://"+addr+"/", "token", httpSec.Token != "")
	}
	qs.Start(e, app.Stores)
	ec := e.Config()
	slogger.Info("starting", "application_id", ec.ApplicationID, "brokers", strings.Join(brokers, ","),
		"guarantee", ec.Guarantee.String(), "commit_interval", ec.CommitInterval.String(), "state_dir", ec.StateDir,
		"workers", ec.Workers, "standby_replicas", ec.StandbyReplicas, "cache_bytes", ec.CacheMaxBytes, "store_memory_bytes", ec.StoreMemoryBytes, "tls", len(sec) > 0, "sasl_mechanism", f.saslMech)
	if f.input != "" {
		n, err := produceInput(ctx, brokers, sec, writingCodecs(app, bindWrites), f.input)
		if err != nil {
			return err
		}
		slogger.Info("input produced", "file", f.input, "records", n)
	}
	var pr *printer
	if f.print != "" {
		pr, err = startPrinter(ctx, brokers, sec, app, splitList(f.print), stdout)
		if err != nil {
			return err
		}
	}
	runErr := e.Run(ctx)
	if pr != nil {
		if err := pr.drain(); err != nil && runErr == nil {
			runErr = err
		}
	}
	return runErr
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
