package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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

// TestSmoke runs the harness at tiny sizes on the test broker, with our
// applications and the limit only (no JVM, no Python): every run must
// finish, count what was produced, have its figures, and the sink must hold
// exactly one record per input record for each of the four runs that write
// it, so nothing was lost or counted twice.
func TestSmoke(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator),
		"./bench/scenarios/streamprocesswithsink", "./bench/scenarios/streamcount")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	const n = 2000
	cfg := &config{
		brokers: brokers, records: n, keys: 100, valueSize: 20, partitions: 2, resumeKeys: 3000,
		scenarios:  []string{"streamprocesswithsink", "streamcount"},
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
	if got, want := len(rep.results), 8; got != want {
		t.Fatalf("%d results, want %d (limit consume and copy, 2 scenarios, under 2 guarantees)", got, want)
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
	for _, want := range []string{"| streamprocesswithsink | exactly_once_v2 |", "## Targets", "machine:"} {
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
