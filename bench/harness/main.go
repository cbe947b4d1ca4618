// Command harness runs streamgen's side-by-side benchmarks against one Kafka
// broker in one run: the raw franz-go client (the limit), the generated
// applications of bench/scenarios, the same topologies in Kafka Streams
// (bench/java) and, for the count, Faust (bench/faust). It prints a table of
// ratios and writes bench/results.json and docs/benchmarks.md.
// scripts/bench.sh (make bench) builds everything and calls it; see
// docs/benchmarks.md for what is measured and how.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Scenarios are Kafka Streams' SimpleBenchmark's, in its order.
var allScenarios = []string{
	"streamprocess", "streamprocesswithsink", "streamprocesswithstatestore", "streamprocesswithwindowstore",
	"streamcount", "streamcountwindowed", "streamtablejoin", "streamstreamjoin", "tabletablejoin",
}

// twoInputs are the scenarios that read bench-src2 too.
var twoInputs = map[string]bool{"streamtablejoin": true, "streamstreamjoin": true, "tabletablejoin": true}

const (
	alos = "at_least_once"
	eos  = "exactly_once_v2"
)

// Systems, as they appear in results.json.
const (
	sysLimit   = "limit"
	sysOurs    = "streamgen"
	sysKStream = "kafka-streams"
	sysFaust   = "faust"
)

type config struct {
	brokers      []string
	records      int
	keys         int
	valueSize    int
	partitions   int
	resumeKeys   int
	scenarios    []string
	guarantees   []string
	systems      []string
	binDir       string // the scenario binaries, one per scenario name
	javaCP       string // class path of bench/java; empty: no Kafka Streams
	javaOpts     []string
	faustPython  string // python of the Faust venv; empty: no Faust
	faustScript  string
	faustMissing string // why Faust is missing, for the report
	faustRecords int    // Faust reads only the first faustRecords records: it is slow
	workDir      string
	cacheBytes   int64
	alosCommit   time.Duration
	eosCommit    time.Duration
	timeout      time.Duration
	latency      bool
	static       bool
	findings     string // a hand-written file appended to the report
	jsonOut      string
	mdOut        string
	command      string // how the run was started, for the report
	brokerNote   string // how the broker runs, for the report
	streamsVer   string // the Kafka Streams version the Java side was built with
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "limit" {
		os.Exit(limitMain(os.Args[2:]))
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(2)
	}
	rep, err := run(context.Background(), cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
	fmt.Print(rep.table())
	if err := rep.write(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("harness", flag.ContinueOnError)
	c := &config{}
	brokers := fs.String("brokers", os.Getenv("STREAMGEN_KAFKA_BROKERS"), "seed brokers (default $STREAMGEN_KAFKA_BROKERS)")
	fs.IntVar(&c.records, "records", 200000, "records per input topic")
	fs.IntVar(&c.keys, "keys", 10000, "distinct keys (SimpleBenchmark's key space)")
	fs.IntVar(&c.valueSize, "value-size", 100, "value bytes per record")
	fs.IntVar(&c.partitions, "partitions", 4, "partitions of the input and sink topics")
	fs.IntVar(&c.resumeKeys, "resume-keys", 1000000, "keys of state for the kill -9 resume measurement (0 skips it)")
	scen := fs.String("scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios")
	guar := fs.String("guarantees", alos+","+eos, "comma-separated guarantees")
	sys := fs.String("systems", strings.Join([]string{sysLimit, sysOurs, sysKStream, sysFaust}, ","), "comma-separated systems")
	fs.StringVar(&c.binDir, "bin-dir", "", "directory of the scenario binaries (required for streamgen)")
	fs.StringVar(&c.javaCP, "java-classpath", "", "class path of the Kafka Streams program (bench/java)")
	javaOpts := fs.String("java-opts", "", "extra JVM options for the Kafka Streams program (default: none, JVM defaults)")
	fs.StringVar(&c.faustPython, "faust-python", "", "python of the Faust virtualenv")
	fs.StringVar(&c.faustScript, "faust-script", "bench/faust/count.py", "the Faust count worker")
	fs.IntVar(&c.faustRecords, "faust-records", 10000, "records Faust counts (the first ones of the same input; its rate is far lower)")
	fs.StringVar(&c.faustMissing, "faust-missing", "", "why Faust is not available (printed in the report)")
	fs.StringVar(&c.workDir, "work-dir", "", "state directories and logs (default: a temporary directory)")
	fs.Int64Var(&c.cacheBytes, "cache-bytes", 10<<20, "record cache bytes (both systems)")
	fs.DurationVar(&c.alosCommit, "alos-commit-interval", 30*time.Second, "commit interval under at_least_once (both systems' default)")
	fs.DurationVar(&c.eosCommit, "eos-commit-interval", 100*time.Millisecond, "commit interval under exactly_once_v2 (both systems' default)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "longest a single run may take")
	fs.StringVar(&c.findings, "findings", "", "markdown file appended to the report (bench/findings.md: causes and profiles of missed targets)")
	fs.BoolVar(&c.static, "static", true, "resume as the same static group member (--group-instance-id, group.instance.id); false: evict the killed member")
	fs.BoolVar(&c.latency, "latency", true, "measure end-to-end latency of streamprocesswithsink at a steady rate")
	fs.StringVar(&c.jsonOut, "json", "", "write the results here (bench/results.json)")
	fs.StringVar(&c.mdOut, "md", "", "write the report here (docs/benchmarks.md)")
	fs.StringVar(&c.command, "command", "make bench", "the command line to print in the report")
	fs.StringVar(&c.brokerNote, "broker-note", "", "how the broker runs (printed in the report)")
	fs.StringVar(&c.streamsVer, "kafka-streams-version", "", "the Kafka Streams version of the Java side (printed in the report; scripts/bench.sh passes scripts/kafka/VERSION)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.brokers = strings.Split(*brokers, ",")
	if *brokers == "" {
		return nil, fmt.Errorf("no brokers: set -brokers or STREAMGEN_KAFKA_BROKERS")
	}
	c.scenarios = split(*scen)
	for _, s := range c.scenarios {
		if !slices.Contains(allScenarios, s) {
			return nil, fmt.Errorf("unknown scenario %q", s)
		}
	}
	c.guarantees = split(*guar)
	for _, g := range c.guarantees {
		if g != alos && g != eos {
			return nil, fmt.Errorf("unknown guarantee %q", g)
		}
	}
	c.systems = split(*sys)
	c.javaOpts = strings.Fields(*javaOpts)
	if slices.Contains(c.systems, sysOurs) && c.binDir == "" {
		return nil, fmt.Errorf("-bin-dir is required for the streamgen system")
	}
	return c, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (c *config) has(sys string) bool { return slices.Contains(c.systems, sys) }

func (c *config) commitInterval(g string) time.Duration {
	if g == eos {
		return c.eosCommit
	}
	return c.alosCommit
}

func (c *config) stateDir(appID string) string { return filepath.Join(c.workDir, "state", appID) }
