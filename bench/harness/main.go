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

// Scenarios are Kafka Streams' SimpleBenchmark's, in its order, then
// issue 17's at real state sizes.
var allScenarios = []string{
	"streamprocess", "streamprocesswithsink", "streamprocesswithstatestore", "streamprocesswithwindowstore",
	"streamcount", "streamcountwindowed", "streamtablejoin", "streamstreamjoin", "tabletablejoin",
	manyStores,
}

// manyStores reads its own input of many partitions (srcMany), so that one
// instance holds three stores for each of them.
const manyStores = "manystores"

// twoInputs are the scenarios that read bench-src2 too.
var twoInputs = map[string]bool{"streamtablejoin": true, "streamstreamjoin": true, "tabletablejoin": true}

// stateless are the scenarios that keep no state: they have no disk bytes
// per key to report.
var stateless = map[string]bool{"streamprocess": true, "streamprocesswithsink": true}

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
	manyParts    int  // partitions of srcMany, the input of manystores
	sequential   bool // key i%keys for record i: every key appears once per keys records
	resumeKeys   int
	scenarios    []string
	guarantees   []string
	systems      []string
	variant      variant // a second run of our side with extra args or env; name "": none
	binDir       string  // the scenario binaries, one per scenario name
	javaCP       string  // class path of bench/java; empty: no Kafka Streams
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
	brokerPID    int    // the broker process, whose CPU is the benchmark's own
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
	fs.IntVar(&c.manyParts, "manystores-partitions", 48, "partitions of the manystores input (three stores per partition on one instance)")
	fs.BoolVar(&c.sequential, "sequential-keys", false, "key i mod -keys for record i instead of uniform draws: with -records ≥ -keys every key appears (for state of exactly -keys keys)")
	fs.IntVar(&c.resumeKeys, "resume-keys", 1000000, "keys of state for the kill -9 resume measurement (0 skips it)")
	scen := fs.String("scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios")
	guar := fs.String("guarantees", alos+","+eos, "comma-separated guarantees")
	sys := fs.String("systems", strings.Join([]string{sysLimit, sysOurs, sysKStream, sysFaust}, ","), "comma-separated systems")
	fs.StringVar(&c.binDir, "bin-dir", "", "directory of the scenario binaries (required for streamgen)")
	fs.StringVar(&c.javaCP, "java-classpath", "", "class path of the Kafka Streams program (bench/java)")
	fs.StringVar(&c.variant.name, "variant", "", "also run our side of every scenario as system streamgen+NAME, with -variant-args and -variant-env (e.g. budget)")
	variantArgs := fs.String("variant-args", "", "extra flags of the variant's run command, after the harness's own (the last of a repeated flag wins)")
	fs.Var(&c.variant.env, "variant-env", "KEY=VALUE added to the variant's environment (repeatable); the harness's own flags override STREAMGEN_ variables of the settings it passes")
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
	fs.IntVar(&c.brokerPID, "broker-pid", 0, "the broker's pid, so that its CPU does not count as other work on the machine (scripts/bench.sh passes the broker it starts)")
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
	c.variant.args = strings.Fields(*variantArgs)
	if err := c.variant.check(); err != nil {
		return nil, err
	}
	if slices.Contains(c.systems, sysOurs) && c.binDir == "" {
		return nil, fmt.Errorf("-bin-dir is required for the streamgen system")
	}
	return c, nil
}

// variant is our side run again with extra flags or environment, reported
// as its own system (streamgen+name): how a setting such as a memory budget
// changes the figures, measured in the same run.
type variant struct {
	name string
	args []string
	env  envList
}

func (v *variant) system() string { return sysOurs + "+" + v.name }

func (v *variant) check() error {
	if v.name == "" && (len(v.args) > 0 || len(v.env) > 0) {
		return fmt.Errorf("-variant-args and -variant-env need -variant NAME")
	}
	// The name goes into application ids, which name topics.
	if strings.Trim(v.name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
		return fmt.Errorf("-variant %q: want letters, digits, '.', '_' and '-' only", v.name)
	}
	return nil
}

// envList is a repeatable KEY=VALUE flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }

func (e *envList) Set(s string) error {
	if k, _, ok := strings.Cut(s, "="); !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	*e = append(*e, s)
	return nil
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
