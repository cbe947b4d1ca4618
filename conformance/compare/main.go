// Command compare is the differential conformance suite: it runs every scenario's random
// input sequences through Kafka Streams (the Java harness, TopologyTestDriver) and through
// streamgen (the scenario's generated Go binary), and compares the outputs record by record.
//
//	go run ./conformance/compare                     # all scenarios, 200 sequences each
//	go run ./conformance/compare -quick              # a fast subset, for make test
//	go run ./conformance/compare -java-only          # check the Java half alone
//	go run ./conformance/compare -scenarios 'ss-*' -sequences 50 -seed 7
//
// The Go side is a command template (see -go-cmd) run once per scenario with the sequence
// file on stdin; it must write the delimited outputs on stdout. The last line printed is
// always "conformance: S scenarios, N sequences, D differences"; the exit status is non-zero
// when there are differences or errors.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamgen/streamgen/conformance/internal/scenario"
)

// defaultGoCmd runs a scenario's generated binary. {name} is the scenario name and {dir} its
// directory relative to the repository root; the command runs in the repository root.
const defaultGoCmd = "conformance/go-side.sh {name}"

// quickSet is one scenario per family, for -quick, and one for each capability of
// issue 15 (windowed keys from a step, tombstones on a stream topic, versioned tables
// under an aggregation).
var quickSet = []string{
	"tumbling-count", "hopping-aggregate-suppress", "sliding-aggregate", "session-aggregate",
	"session-count-final", "ss-outer-asym-grace", "st-left", "tt-outer", "fk-inner",
	"table-groupby-aggregate", "branch-merge-count", "suppress-time-limit",
	"table-filter-mapvalues", "sg-left", "tt-outer-materialized", "null-through-map",
	"st-versioned-grace", "left-join-zero", "top-articles", "null-stream-topic",
	"versioned-groupby-aggregate",
}

type options struct {
	root       string
	glob       string
	sequences  int
	seed       uint64
	quick      bool
	javaOnly   bool
	goCmd      string
	javaStores string
	keep       string
	minOutput  float64
	show       int
	shrink     bool
	verbose    bool
	describe   bool
	cacheBytes int64 // -1: each scenario's own
}

func main() {
	var o options
	flag.StringVar(&o.glob, "scenarios", "*", "glob of scenario names to run")
	flag.IntVar(&o.sequences, "sequences", 200, "random sequences per scenario (default 20 with -quick)")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed; the same seed gives the same sequences")
	flag.BoolVar(&o.quick, "quick", false, "run a fast subset: one scenario per family")
	flag.BoolVar(&o.javaOnly, "java-only", false, "run only Kafka Streams and check every scenario produces output")
	flag.StringVar(&o.goCmd, "go-cmd", envOr("STREAMGEN_CONFORMANCE_GO_CMD", defaultGoCmd),
		"command for the Go side, run by sh in the repository root; {name} and {dir} are replaced")
	flag.StringVar(&o.javaStores, "java-stores", "rocksdb",
		"state stores of the Java side: rocksdb (Kafka Streams' default) or memory (faster, not equivalent for emit-on-window-close)")
	flag.StringVar(&o.keep, "keep", "", "keep inputs and outputs in this directory")
	flag.Float64Var(&o.minOutput, "min-output", 0.5, "with -java-only: least fraction of sequences that must produce output")
	flag.IntVar(&o.show, "show", 3, "differing sequences to print per scenario")
	flag.BoolVar(&o.shrink, "shrink", true, "shrink the first difference of each scenario to a minimal input")
	flag.BoolVar(&o.verbose, "v", false, "print per-scenario progress")
	flag.Int64Var(&o.cacheBytes, "cache-bytes", -1, "record cache of both sides for every scenario (default: each scenario's cache_bytes, 0 unless it says)")
	flag.BoolVar(&o.describe, "describe", true, "fail when a scenario's describe differs from Kafka Streams' (the count is printed either way; -describe=false only counts)")
	flag.Parse()
	if o.quick && !flagSet("sequences") {
		o.sequences = 20
	}
	if o.javaStores != "memory" && o.javaStores != "rocksdb" {
		fmt.Fprintln(os.Stderr, "compare: -java-stores must be memory or rocksdb")
		os.Exit(2)
	}
	os.Exit(run(o))
}

func run(o options) int {
	r := &runner{opts: o}
	s, n, d := r.run()
	for _, e := range r.errors {
		fmt.Println("ERROR", e)
	}
	fmt.Printf("conformance: %d scenarios, %d sequences, %d differences\n", s, n, d)
	if d > 0 || len(r.errors) > 0 {
		return 1
	}
	return 0
}

type runner struct {
	opts   options
	root   string
	work   string
	errors []string
}

func (r *runner) errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// run returns the number of scenarios and sequences run and the differences found.
func (r *runner) run() (scenarios, sequences, differences int) {
	root, err := scenario.RepoRoot()
	if err != nil {
		r.errorf("%v", err)
		return
	}
	r.root = root
	scs, err := scenario.LoadAll(filepath.Join(root, "conformance", "scenarios"), r.opts.glob)
	if err != nil {
		r.errorf("%v", err)
		return
	}
	if r.opts.quick {
		scs = filterQuick(scs)
	}
	if r.opts.cacheBytes >= 0 {
		for _, s := range scs {
			s.CacheBytes = r.opts.cacheBytes
		}
	}
	if len(scs) == 0 {
		r.errorf("no scenario matches %q", r.opts.glob)
		return
	}
	if r.opts.keep != "" {
		r.work = r.opts.keep
		err = os.MkdirAll(r.work, 0o755)
	} else {
		r.work, err = os.MkdirTemp("", "conformance-")
		defer os.RemoveAll(r.work)
	}
	if err != nil {
		r.errorf("%v", err)
		return
	}

	known, err := r.javaScenarios()
	if err != nil {
		r.errorf("java harness: %v", err)
		return
	}
	var runnable []*scenario.Scenario
	for _, s := range scs {
		if !known[s.Name] {
			r.errorf("%s: no Java topology of that name in conformance/java (Scenarios.java)", s.Name)
			continue
		}
		runnable = append(runnable, s)
	}
	inputs := map[string][]byte{}
	for _, s := range runnable {
		inputs[s.Name] = encode(s.Generate(r.opts.seed, r.opts.sequences))
	}
	start := time.Now()
	javaOut, err := r.runJava(runnable, inputs, "")
	if err != nil {
		r.errorf("java harness: %v", err)
		return len(runnable), 0, 0
	}
	fmt.Printf("kafka streams: %d scenarios x %d sequences in %.1fs\n", len(runnable), r.opts.sequences, time.Since(start).Seconds())

	for _, s := range runnable {
		want, err := decode(javaOut[s.Name])
		if err != nil {
			r.errorf("%s: java output: %v", s.Name, err)
			continue
		}
		scenarios++
		sequences += r.opts.sequences
		if r.opts.javaOnly {
			r.checkNonTrivial(s, want)
			continue
		}
		differences += r.compareScenario(s, inputs[s.Name], want)
	}
	if !r.opts.javaOnly {
		r.checkDescribe(runnable)
	}
	r.checkDSL()
	return scenarios, sequences, differences
}

func filterQuick(scs []*scenario.Scenario) []*scenario.Scenario {
	var out []*scenario.Scenario
	for _, s := range scs {
		for _, q := range quickSet {
			if s.Name == q {
				out = append(out, s)
			}
		}
	}
	return out
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func expand(tmpl string, s *scenario.Scenario, root string) string {
	dir, err := filepath.Rel(root, s.Dir)
	if err != nil {
		dir = s.Dir
	}
	return strings.NewReplacer("{name}", s.Name, "{dir}", filepath.ToSlash(dir)).Replace(tmpl)
}
