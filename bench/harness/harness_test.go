package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMain lets the test binary stand in for the harness binary: the limit
// runs re-execute os.Executable with "limit".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "limit" {
		os.Exit(limitMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// buildScenarios builds the named scenario applications into a temporary
// directory and returns it.
func buildScenarios(t *testing.T, names ...string) string {
	t.Helper()
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./bench/scenarios/"+n)
	}
	build := exec.Command("go", args...)
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSmoke runs the harness at tiny sizes on the test broker, with our
// applications and the limit only (no JVM, no Python): every run must
// finish, count what was produced, have its figures, and the sink must hold
// exactly one record per input record for each of the four runs that write
// it, so nothing was lost or counted twice. manystores runs on its own
// input of 48 partitions (144 stores on one instance) and leaves state of
// the 100 keys on disk.
func TestSmoke(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	bin := buildScenarios(t, "streamprocesswithsink", "streamcount", manyStores)
	dir := t.TempDir()
	const n = 2000
	cfg := &config{
		brokers: brokers, records: n, keys: 100, valueSize: 20, partitions: 2, manyParts: 48, resumeKeys: 3000,
		scenarios:  []string{"streamprocesswithsink", "streamcount", manyStores},
		guarantees: []string{alos, eos},
		systems:    []string{sysLimit, sysOurs},
		binDir:     bin, workDir: filepath.Join(dir, "work"), cacheBytes: 1 << 20,
		static: true, alosCommit: time.Second, eosCommit: 100 * time.Millisecond, timeout: 2 * time.Minute,
		jsonOut: filepath.Join(dir, "results.json"), mdOut: filepath.Join(dir, "benchmarks.md"),
		command: "go test ./bench/harness",
	}
	var log strings.Builder
	rep, err := run(context.Background(), cfg, &log)
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.write(cfg); err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.results), 10; got != want {
		t.Fatalf("%d results, want %d (limit consume and copy, 3 scenarios, under 2 guarantees)", got, want)
	}
	for _, r := range rep.results {
		if r.Error != "" {
			t.Errorf("%s %s %s: %s", r.Scenario, r.System, r.Guarantee, r.Error)
			continue
		}
		if r.Records != n || r.RecordsPerS <= 0 || r.PeakRSSBytes <= 0 || r.FirstRecordMS <= 0 || r.CPUS <= 0 {
			t.Errorf("%s %s %s: implausible figures %+v", r.Scenario, r.System, r.Guarantee, *r)
		}
	}
	for _, g := range cfg.guarantees {
		for _, s := range []string{"streamcount", manyStores} {
			r := rep.find(s, sysOurs, g)
			if r == nil || r.DistinctKeys != 100 || r.StateDirBytes <= 0 {
				t.Errorf("%s %s: want state of 100 distinct keys on disk, got %+v", s, g, r)
			}
		}
	}
	resumed := rep.find("streamcount", sysOurs, eos)
	if resumed == nil || resumed.ResumeMS == nil || *resumed.ResumeMS <= 0 || resumed.ResumeKeys != 3000 {
		t.Errorf("no resume time for streamcount under %s: %+v", eos, resumed)
	}

	// The JSON has the fields the report promises, for every object.
	b, err := os.ReadFile(cfg.jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(b, &objs); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		for _, f := range []string{"scenario", "system", "guarantee", "records_per_s", "peak_rss_bytes", "cpu_s", "first_record_ms"} {
			if _, ok := o[f]; !ok {
				t.Errorf("results.json object %v lacks %q", o, f)
			}
		}
	}
	md, err := os.ReadFile(cfg.mdOut)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| streamprocesswithsink | exactly_once_v2 |", "## Targets", "machine:",
		"| manystores | exactly_once_v2 | 100 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("benchmarks.md lacks %q", want)
		}
	}

	// Two limit copies, each measured twice, and two runs of
	// streamprocesswithsink wrote the sink: exactly n committed records each.
	if got := countCommitted(t, brokers, sink); got != 6*n {
		t.Errorf("%s holds %d committed records, want %d", sink, got, 6*n)
	}
}

// TestVariant runs our side of streamcount twice, the second time as a
// variant with a flag and an environment variable the application already
// reads (the memory budget's flag is not there yet): the variant is a
// result and a row of its own, and only its process got the variable
// (STREAMGEN_CPUPROFILE makes it write a profile).
func TestVariant(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	bin := buildScenarios(t, "streamcount")
	dir := t.TempDir()
	profile := filepath.Join(dir, "variant.pprof")
	cfg := &config{
		brokers: brokers, records: 1000, keys: 50, valueSize: 20, partitions: 2, manyParts: 48,
		scenarios: []string{"streamcount"}, guarantees: []string{alos}, systems: []string{sysOurs},
		variant: variant{name: "nocache", args: []string{"--cache-bytes", "0"}, env: envList{"STREAMGEN_CPUPROFILE=" + profile}},
		binDir:  bin, workDir: filepath.Join(dir, "work"), cacheBytes: 1 << 20,
		alosCommit: time.Second, eosCommit: 100 * time.Millisecond, timeout: 2 * time.Minute,
	}
	var log strings.Builder
	rep, err := run(context.Background(), cfg, &log)
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, sys := range []string{sysOurs, "streamgen+nocache"} {
		if r := rep.find("streamcount", sys, alos); !ok(r) || r.StateDirBytes <= 0 {
			t.Errorf("streamcount %s: %+v", sys, r)
		}
	}
	if st, err := os.Stat(profile); err != nil || st.Size() == 0 {
		t.Errorf("the variant wrote no CPU profile (its environment did not reach it): %v", err)
	}
	if tab := rep.table(); !strings.Contains(tab, "streamgen+nocache: our side with `STREAMGEN_CPUPROFILE=") ||
		!strings.Contains(tab, "--cache-bytes 0` |") {
		t.Errorf("no variant table:\n%s", tab)
	}
}

// TestVariantArgv checks what the variant's process is started with: our
// side's command line with the variant's flags last, so they win over the
// harness's, and the variant's environment, which our default run lacks.
func TestVariantArgv(t *testing.T) {
	cfg := &config{brokers: []string{"b:9092"}, binDir: "bin", workDir: "w", cacheBytes: 1 << 20, systems: []string{sysOurs},
		variant: variant{name: "budget", args: []string{"--cache-bytes", "0"}, env: envList{"STREAMGEN_STORE_MEMORY_BYTES=268435456"}}}
	r := &runner{cfg: cfg}
	ours := r.argv("streamcount", sysOurs, alos, "app", "dir", "")
	v := r.argv("streamcount", "streamgen+budget", alos, "app", "dir", "")
	if want := append(slices.Clone(ours), "--cache-bytes", "0"); !slices.Equal(v, want) {
		t.Errorf("variant argv %q, want %q", v, want)
	}
	if e := r.env("streamgen+budget", 5); !slices.Contains(e, "STREAMGEN_STORE_MEMORY_BYTES=268435456") || !slices.Contains(e, "STREAMGEN_BENCH_EXPECT=5") {
		t.Errorf("variant env %q", e)
	}
	if e := r.env(sysOurs, 5); slices.Contains(e, "STREAMGEN_STORE_MEMORY_BYTES=268435456") {
		t.Errorf("our default run got the variant's env: %q", e)
	}
	if !r.runnable("streamcount", "streamgen+budget") || !slices.Contains(r.scenarioSystems(), "streamgen+budget") {
		t.Error("the variant does not run")
	}
}

func countCommitted(t *testing.T, brokers []string, topic string) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n := 0
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return n
		}
		n += fs.NumRecords()
	}
}
