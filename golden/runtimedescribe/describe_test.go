// Package runtimedescribe_test checks that `streamgen describe` prints what
// the generated binaries' describe prints: the topology the runtime builds.
//
// It is a package of its own, not part of golden's tests, because it links
// golden/full, golden/hostile-docs and golden/tombstones: when a runtime or generator change
// leaves those stale, they do not compile, and golden's TestGolden, which
// regenerates them (`make generate`), must still build to do so.
package runtimedescribe_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/golden/full"
	"github.com/streamgen/streamgen/golden/hostile-docs"
	"github.com/streamgen/streamgen/golden/tombstones"
	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/spec"
)

// formats are the describe formats compared.
var formats = []string{"text", "mermaid", "dot"}

// TestDescribeIsRuntime checks, for every generated application in the
// repository, that `streamgen describe` (rendered from the spec) prints
// exactly what the generated binary's `describe` prints (rendered from the
// graph the runtime builds and runs): same sub-topologies, numbers, nodes
// and order, in every format. That each sub-topology number is the
// sub-topology part of the task ids the engine runs is checked where the
// engine's view of the topology is reachable, in runtime/sgstream
// (TestDescribedSubTopologiesAreTasks). Importable packages are compared
// in process; the main packages are built once, together, and run.
// Conformance scenarios, which are generated only when the suite runs, are
// compared by conformance/compare's describe check.
func TestDescribeIsRuntime(t *testing.T) {
	inProcess := map[string]*sgapp.App{"../full": full.NewApp(), "../hostile-docs": hostiledocs.NewApp(), "../tombstones": tombstones.NewApp()}
	for dir, app := range inProcess {
		t.Run(strings.TrimPrefix(dir, "../"), func(t *testing.T) {
			compareDescribe(t, dir, func(format string) (string, error) { return sgapp.Describe(app, format) })
		})
	}
	if testing.Short() {
		t.Skip("-short: building every generated application takes minutes")
	}
	var pkgs []string
	for _, pattern := range []string{"../../examples/*/streamgen.yaml", "../../docs/examples/*/streamgen.yaml", "../../bench/scenarios/*/streamgen.yaml", "../../chaos/*/streamgen.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Dir(p)))
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d generated applications", len(pkgs))
	}
	binOf := buildApps(t, pkgs)
	for _, pkg := range pkgs {
		t.Run(strings.TrimPrefix(pkg, "./../../"), func(t *testing.T) {
			compareDescribe(t, pkg, func(format string) (string, error) {
				out, err := exec.Command(binOf[pkg], "describe", "-format", format).Output()
				if err != nil {
					return "", fmt.Errorf("%s describe: %w", pkg, err)
				}
				return string(out), nil
			})
		})
	}
}

// buildApps builds the main packages pkgs and returns each one's binary.
// go build -o names a binary after its package's directory, so packages
// that share a directory name (examples/windows, docs/examples/windows) are
// built in separate rounds, each into a directory of its own; each round
// is one go build, which shares the compilation of the runtime.
func buildApps(t *testing.T, pkgs []string) map[string]string {
	t.Helper()
	var rounds [][]string
	round := map[string]int{} // base name -> rounds that already hold one
	for _, pkg := range pkgs {
		i := round[filepath.Base(pkg)]
		round[filepath.Base(pkg)]++
		if i == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[i] = append(rounds[i], pkg)
	}
	binOf := map[string]string{}
	for i, r := range rounds {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		build := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, r...)...)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		for _, pkg := range r {
			binOf[pkg] = filepath.Join(dir, filepath.Base(pkg))
		}
	}
	return binOf
}

// compareDescribe checks, in every format, that the runtime's description
// of the application in dir (runtime) is what streamgen describe renders
// from its spec.
func compareDescribe(t *testing.T, dir string, runtime func(format string) (string, error)) {
	t.Helper()
	prog, err := spec.ParseFile(filepath.Join(dir, "streamgen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range formats {
		want, err := gen.Describe(prog, format)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runtime(format)
		if err != nil {
			t.Fatal(err)
		}
		reportDrift(t, format, want, got)
	}
}

// reportDrift fails on a difference between the two descriptions.
func reportDrift(t *testing.T, format, want, got string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: streamgen describe differs from the runtime's:\n%s", format, textdiff.Unified("streamgen describe", "runtime", want, got))
	}
}
