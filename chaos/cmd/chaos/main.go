// Command chaos runs the exactly-once chaos harness (chaos/README.md)
// against a running broker and ends with one summary line:
//
//	chaos: <R> runs, <K> kills, <I> input records, <L> lost, <D> duplicated, <F> failed runs
//
// `make chaos` runs it through scripts/chaos.sh, which starts a broker of
// its own. It exits 1 when any run failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/streamgen/streamgen/chaos"
)

func main() {
	var cfg chaos.Config
	brokers := flag.String("brokers", os.Getenv("STREAMGEN_KAFKA_BROKERS"), "seed brokers (default $STREAMGEN_KAFKA_BROKERS)")
	brokerDir := flag.String("broker-dir", os.Getenv("STREAMGEN_KAFKA_DIR"), "the scripts/kafka.sh directory of the broker, needed by -broker-faults")
	workDir := flag.String("workdir", "", "state directories and logs of the instances (default: a new temporary directory)")
	flag.IntVar(&cfg.Runs, "runs", 1, "runs, one after the other")
	flag.IntVar(&cfg.Records, "records", 100_000, "input records per run")
	flag.IntVar(&cfg.Rate, "rate", 2000, "input records per second")
	flag.IntVar(&cfg.Keys, "keys", 1000, "distinct keys")
	flag.IntVar(&cfg.Kills, "kills", 3, "kill -9 of an instance per run")
	seed := flag.Uint64("seed", 0, "seed of the kill times and the data (default: from the clock); run i uses seed+i")
	flag.DurationVar(&cfg.MaxDown, "max-down", 15*time.Second, "a killed instance stays down up to this long (beyond the session timeout its tasks move)")
	flag.DurationVar(&cfg.SessionTimeout, "session-timeout", 10*time.Second, "the instances' --session-timeout")
	flag.DurationVar(&cfg.CommitInterval, "commit-interval", 0, "the instances' --commit-interval (default: the spec's 5s)")
	flag.DurationVar(&cfg.CatchUp, "catch-up", 5*time.Minute, "how long processing may take after the driver finished")
	flag.IntVar(&cfg.BrokerFaults, "broker-faults", 0, "kill -9 and restart the broker this many times per run, and start each run with the broker down")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the logs and state directories of passed runs too")
	bin := flag.String("bin", "", "the chaos/eos application binary (default: built from the module)")
	flag.BoolVar(&cfg.Rolling, "rolling", false, "play the rolling-operations schedule instead of random kills: a rolling restart, 3 → 5 → 2 instances, a kill -9 of the busiest, each phase measured")
	kstreams := flag.Bool("kstreams", false, "run the schedule on Kafka Streams (chaos/java: the same topology, flags and verifier) instead of streamgen")
	sideBySide := flag.Bool("side-by-side", false, "with -rolling: play the schedule on streamgen, then on Kafka Streams with the same seed, and print their phases side by side")
	instanceArgs := flag.String("instance-args", "", "more flags for every instance's run command, space-separated (e.g. '--standby-replicas 1')")
	flag.Parse()
	cfg.InstanceArgs = strings.Fields(*instanceArgs)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Brokers = strings.Split(*brokers, ",")
	if *brokers == "" {
		fail("no brokers: set -brokers or STREAMGEN_KAFKA_BROKERS (make chaos starts one)")
	}
	cfg.Seed = *seed
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano() % 1_000_000_007)
	}
	if cfg.BrokerFaults > 0 {
		if *brokerDir == "" {
			fail("-broker-faults needs -broker-dir (the broker's scripts/kafka.sh directory)")
		}
		script, err := chaos.KafkaScript()
		if err != nil {
			fail(err.Error())
		}
		cfg.Broker = chaos.ScriptBroker{Script: script, Dir: *brokerDir}
	}
	cfg.WorkDir = *workDir
	if cfg.WorkDir == "" {
		d, err := os.MkdirTemp("", "streamgen-chaos-")
		if err != nil {
			fail(err.Error())
		}
		cfg.WorkDir = d
	}
	if *sideBySide && !cfg.Rolling {
		fail("-side-by-side compares the phases of -rolling")
	}
	cfg.Bin = *bin
	if cfg.Bin == "" && !*kstreams {
		cfg.Bin = must(chaos.BuildApp(ctx, cfg.WorkDir))
	}
	cfg.Out = os.Stdout
	if !*sideBySide {
		if *kstreams {
			cfg.Bin = must(chaos.KStreamsApp(ctx))
		}
		sum, _ := chaos.Run(ctx, cfg)
		fmt.Println(sum)
		exitFor(sum, cfg)
		return
	}
	ks := cfg
	ks.Bin = must(chaos.KStreamsApp(ctx))
	fmt.Println("chaos: streamgen")
	sum, ours := chaos.Run(ctx, cfg)
	fmt.Println(sum)
	fmt.Println("chaos: Kafka Streams")
	ksSum, theirs := chaos.Run(ctx, ks)
	fmt.Println(ksSum)
	if len(ours) > 0 && len(theirs) > 0 {
		chaos.PhaseTable(os.Stdout, ours[0].Phases, theirs[0].Phases)
	}
	exitFor(sum, cfg)
	exitFor(ksSum, ks)
}

// exitFor exits 1 when a run of sum failed or did not happen.
func exitFor(sum chaos.Summary, cfg chaos.Config) {
	if sum.Failed > 0 || sum.Runs < cfg.Runs {
		os.Exit(1)
	}
}

func must(s string, err error) string {
	if err != nil {
		fail(err.Error())
	}
	return s
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "chaos:", msg)
	os.Exit(2)
}
