package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
)

// need fails the test under CI=true, and skips it elsewhere, when a tool the suite runs is
// missing: a CI run never passes by skipping.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("interop: %s not found (CI=true: a missing tool fails)", tool)
			}
			t.Skipf("interop: %s not found", tool)
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// prepare gets a test of the suite going: the broker's address (or a skip, or under CI=true a
// failure, without one), no -short mode, the tools, and the repository root.
func prepare(t *testing.T) (brokers []string, root string) {
	t.Helper()
	brokers = kafkatest.Brokers(t)
	if testing.Short() {
		t.Skip("interop: starts JVMs; skipped in -short mode")
	}
	need(t, "java", "mvn", "go")
	return brokers, repoRoot(t)
}

// TestInteropQuick is the subset of make interop that make test runs: the quick scenarios,
// Java producer -> streamgen app -> Java consumer against the Kafka Streams twin, on the
// real broker (and registry, for the registry formats).
func TestInteropQuick(t *testing.T) {
	brokers, root := prepare(t)
	all, err := Load(root, "*")
	if err != nil {
		t.Fatal(err)
	}
	ss := QuickOnly(all)
	if len(ss) < 2 {
		t.Fatalf("only %d quick scenarios of %d", len(ss), len(all))
	}
	// Without a registry the plain-JSON scenarios still run locally; under CI=true a missing
	// registry fails, since the quick subset covers a registry format.
	registry := os.Getenv("STREAMGEN_REGISTRY_URL")
	var runnable []*Scenario
	for _, s := range ss {
		if s.Registry && registry == "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("scenario %s needs a schema registry and STREAMGEN_REGISTRY_URL is empty (CI=true: a missing registry fails)", s.Name)
			}
			t.Logf("skipping scenario %s: it needs a schema registry (set STREAMGEN_REGISTRY_URL; scripts/registry.sh start)", s.Name)
			continue
		}
		runnable = append(runnable, s)
	}
	if len(runnable) == 0 {
		t.Skip("interop: every quick scenario needs a schema registry")
	}
	ss = runnable
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Root: root, Brokers: brokers, Registry: registry, Work: t.TempDir(), Log: &log, Timeout: 4 * time.Minute}, ss)
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenarios != len(ss) || res.Records < 100*len(ss) || res.Differences != 0 {
		t.Fatalf("%s; want %d scenarios, at least %d records, no differences", res.Summary(), len(ss), 100*len(ss))
	}
}
