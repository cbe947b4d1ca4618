package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/spec"
)

// TestEveryScenarioCompiles generates every scenario of the suite next to
// its user functions, as conformance/go-side.sh does, and compiles them all
// in one go build. make test runs only the quick subset of the suite, and
// the golden test only generates the scenarios, so without this a change of
// the generator's signatures (a nullable result that becomes a pointer)
// could break a scenario outside the quick set until the next full run.
func TestEveryScenarioCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every scenario; run without -short")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := filepath.Glob(filepath.Join(repo, "conformance", "scenarios", "*", "streamgen.yaml"))
	if err != nil || len(scenarios) == 0 {
		t.Fatalf("no scenarios found (%v)", err)
	}
	// A dot-directory inside the module, so the packages resolve the
	// module's imports and no ./... pattern ever reaches them.
	out := filepath.Join(repo, "conformance", ".build-check")
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	var pkgs []string
	for _, specPath := range scenarios {
		name := filepath.Base(filepath.Dir(specPath))
		if strings.HasPrefix(name, "_") {
			continue
		}
		dst := filepath.Join(out, name)
		writeScenario(t, specPath, dst)
		pkgs = append(pkgs, "./conformance/.build-check/"+name)
	}
	cmd := exec.Command("go", append([]string{"build"}, pkgs...)...) // several packages: compiled, not linked
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the %d scenarios: %v\n%s", len(pkgs), err, msg)
	}
	t.Logf("%d scenarios compile", len(pkgs))
}

// sharedFuncs is the line of a scenario.json that names its functions in
// conformance/scenarios/_funcs (go-side.sh reads the same line).
var sharedFuncs = regexp.MustCompile(`(?m)^\s*"funcs":\s*"([a-z0-9-]+)"`)

// writeScenario writes the generated files of the spec and a copy of its
// user functions without the conformance build tag into dst.
func writeScenario(t *testing.T, specPath, dst string) {
	t.Helper()
	src, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := spec.Parse("streamgen.yaml", src)
	if err != nil {
		t.Fatalf("%s: %v", specPath, err)
	}
	files, err := gen.Generate(prog, gen.Config{SpecPath: "streamgen.yaml", OmitTests: true})
	if err != nil {
		t.Fatalf("%s: %v", specPath, err)
	}
	dir := filepath.Dir(specPath)
	funcs := filepath.Join(dir, "funcs.go")
	if js, err := os.ReadFile(filepath.Join(dir, "scenario.json")); err == nil {
		if m := sharedFuncs.FindSubmatch(js); m != nil {
			funcs = filepath.Join(dir, "..", "_funcs", string(m[1])+".go")
		}
	}
	if b, err := os.ReadFile(funcs); err == nil {
		files["funcs.go"] = []byte(strings.TrimPrefix(string(b), "//go:build conformance\n"))
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
