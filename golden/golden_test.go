package golden_test

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/internal/typecheck"
	"github.com/streamgen/streamgen/spec"
)

var update = flag.Bool("update", false, "rewrite every generated file of the repository (and golden/*/stderr.txt)")

// root is the repository root, relative to this package's directory.
const root = ".."

// fixCmd is printed with every stale file: one command regenerates them all.
const fixCmd = "make generate (go test ./golden -run TestGolden -update)"

// kind says how the specs under a directory are generated and what is
// committed next to them.
type kind struct {
	prefix string // slash path under the root, ending in /
	cfg    gen.Config
	// golden: failures are expected when the case has a stderr.txt, and a
	// check-user-funcs file asks for the type check of user functions.
	golden bool
	// uncommitted: nothing generated is committed next to the spec (the
	// conformance harness generates scenarios fresh on every run), so the
	// test checks only that generation succeeds.
	uncommitted bool
	// build: also vet and run the generated tests of the package, which no
	// ./... pattern reaches because it sits under testdata.
	build bool
	// only, when set, keeps just these generated files: the record test
	// packages (gen/testdata, bench/serde) commit their records and nothing
	// of the app.
	only []string
}

// kinds covers every streamgen.yaml of the repository; a spec under no
// prefix fails the test, so a new one cannot go unchecked. SpecPath is the
// spec's name as the generator sees it run from the spec's directory.
// Version markers are left out where a release must not rewrite committed
// files (goldens, alltypes, bench/serde); elsewhere the files are what
// `go generate` (streamgen generate) writes.
var kinds = []kind{
	{prefix: "golden/", cfg: gen.Config{SpecPath: "streamgen.yaml", OmitVersionMarkers: true}, golden: true},
	{prefix: "examples/", cfg: gen.Config{SpecPath: "streamgen.yaml"}},
	{prefix: "docs/examples/", cfg: gen.Config{SpecPath: "streamgen.yaml"}},
	{prefix: "chaos/", cfg: gen.Config{SpecPath: "streamgen.yaml"}},
	{prefix: "interop/scenarios/", cfg: gen.Config{SpecPath: "streamgen.yaml"}},
	{prefix: "bench/scenarios/", cfg: gen.Config{SpecPath: "streamgen.yaml"}},
	{prefix: "bench/serde/", cfg: gen.Config{SpecPath: "streamgen.yaml", OmitVersionMarkers: true, OmitTests: true}, only: []string{"streamgen_records.go", "streamgen_json.go", "streamgen_avro.go", "streamgen_protobuf.go"}},
	{prefix: "gen/testdata/", cfg: gen.Config{SpecPath: "streamgen.yaml", OmitVersionMarkers: true}, build: true,
		only: []string{"streamgen_records.go", "streamgen_records_test.go"}},
	// The e2e tests' own apps: binaries their tests build (go build ./...
	// skips testdata), so nothing of a test package is generated.
	{prefix: "internal/e2e/testdata/", cfg: gen.Config{SpecPath: "streamgen.yaml", OmitTests: true}},
	{prefix: "conformance/scenarios/", cfg: gen.Config{SpecPath: "streamgen.yaml"}, uncommitted: true},
	// The type check's test packages (one imports a package that does not
	// exist, so the check must fall back) and the rendered init project:
	// their own tests generate them, nothing is committed.
	{prefix: "internal/typecheck/testdata/", cfg: gen.Config{SpecPath: "streamgen.yaml"}, uncommitted: true},
	{prefix: "templates/testdata/", cfg: gen.Config{SpecPath: "streamgen.yaml"}, uncommitted: true},
}

// genCase is one spec of the repository: its directory (relative to this
// package) and how it is generated.
type genCase struct {
	dir string
	kind
}

// name is the directory relative to the repository root, the subtest name.
func (c genCase) name() string { return strings.TrimPrefix(filepath.ToSlash(c.dir), root+"/") }

// cases walks the repository for streamgen.yaml files, skipping .git and
// dot-directories (conformance/.run holds scratch copies).
func cases(t *testing.T) []genCase {
	t.Helper()
	var out []genCase
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "streamgen.yaml" {
			return nil
		}
		c := genCase{dir: filepath.Dir(path)}
		rel := c.name() + "/"
		for _, k := range kinds {
			if strings.HasPrefix(rel, k.prefix) {
				c.kind = k
				out = append(out, c)
				return nil
			}
		}
		t.Errorf("%s: no rule in golden_test.go's kinds says how to generate this spec", path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	if len(out) < 80 {
		t.Fatalf("found only %d specs; the walk is broken", len(out))
	}
	return out
}

// generatedFiles lists the streamgen-generated Go files in dir.
func generatedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(b, []byte(gen.Header)) {
			out[e.Name()] = b
		}
	}
	return out
}

// run generates a case the way `streamgen generate` does from inside its
// directory, so paths in diagnostics and headers are relative. It
// generates twice: output that differs between runs is not deterministic.
func run(c genCase) (map[string][]byte, string) {
	src, err := os.ReadFile(filepath.Join(c.dir, "streamgen.yaml"))
	if err != nil {
		return nil, err.Error()
	}
	prog, err := spec.Parse("streamgen.yaml", src)
	if err != nil {
		return nil, err.Error()
	}
	files, checks, err := gen.GenerateChecked(prog, c.cfg)
	if err != nil {
		return nil, err.Error()
	}
	again, err := gen.Generate(prog, c.cfg)
	if err != nil {
		return nil, "second run: " + err.Error()
	}
	for name := range files {
		if !bytes.Equal(files[name], again[name]) {
			return nil, name + " differs between two runs: output is not deterministic"
		}
	}
	if c.only != nil {
		for name := range files {
			if !slices.Contains(c.only, name) {
				delete(files, name)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(c.dir, "check-user-funcs")); c.golden && err == nil {
		if err := typecheck.Check(c.dir, files, checks, typecheck.Options{BuildFlags: []string{"-tags=goldenfail"}, NoCache: true}); err != nil {
			return nil, err.Error()
		}
	}
	return files, ""
}

// TestGolden is the one freshness check of the repository: it regenerates
// every spec in memory and compares with the committed files (or, for
// golden failure cases, with stderr.txt). With -update it rewrites them.
func TestGolden(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.name(), func(t *testing.T) {
			files, stderr := run(c)
			switch {
			case c.uncommitted:
				if stderr != "" {
					t.Fatalf("%s: generation failed:\n%s", c.dir, stderr)
				}
				if have := generatedFiles(t, c.dir); len(have) > 0 {
					t.Errorf("%s: generated files are committed but the harness generates this spec itself; delete them", c.dir)
				}
			case *update:
				write(t, c, files, stderr)
			case c.golden:
				if compareStderr(t, c.dir, stderr) {
					return
				}
				compareFiles(t, c.dir, files)
			default:
				if stderr != "" {
					t.Fatalf("%s: generation failed:\n%s", c.dir, stderr)
				}
				compareFiles(t, c.dir, files)
			}
			if c.build && !t.Failed() {
				buildAndTest(t, c.dir)
			}
		})
	}
}

// compareStderr checks a golden case's diagnostics against its stderr.txt.
// It reports whether the case expects a failure (and so was handled).
func compareStderr(t *testing.T, dir, stderr string) bool {
	t.Helper()
	wantErrPath := filepath.Join(dir, "stderr.txt")
	wantErr, err := os.ReadFile(wantErrPath)
	if err != nil {
		if stderr != "" {
			t.Fatalf("%s: generation failed:\n%s", dir, stderr)
		}
		return false
	}
	if stderr == "" {
		t.Fatalf("%s: generation succeeded but stderr.txt expects a failure; run: %s", dir, fixCmd)
	}
	if d := textdiff.Unified("want "+wantErrPath, "got", string(wantErr), stderr+"\n"); d != "" {
		t.Fatalf("%s: diagnostics differ (-want +got); run: %s\n%s", dir, fixCmd, d)
	}
	return true
}

// compareFiles checks the committed generated files of dir against files.
func compareFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	have := generatedFiles(t, dir)
	for name, got := range files {
		if d := textdiff.Unified(filepath.Join(dir, name), "regenerated", string(have[name]), string(got)); d != "" {
			t.Errorf("%s is stale (-want +got); run: %s\n%s", filepath.Join(dir, name), fixCmd, d)
		}
	}
	for name := range have {
		if _, ok := files[name]; !ok {
			t.Errorf("%s is generated but no longer produced; run: %s", filepath.Join(dir, name), fixCmd)
		}
	}
}

// buildAndTest vets and runs the generated tests of dir, a package no
// ./... pattern reaches (it is under testdata).
func buildAndTest(t *testing.T, dir string) {
	t.Helper()
	if testing.Short() {
		t.Log("-short: not compiling the generated package")
		return
	}
	pkg := "./" + filepath.ToSlash(strings.TrimPrefix(dir, root+string(filepath.Separator)))
	for _, args := range [][]string{{"vet", pkg}, {"test", "-count=1", pkg}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// write rewrites a case: generated files (removing ones no longer
// produced) or, for a golden failure case, stderr.txt.
func write(t *testing.T, c genCase, files map[string][]byte, stderr string) {
	t.Helper()
	if stderr != "" && !c.golden {
		t.Fatalf("%s: generation failed:\n%s", c.dir, stderr)
	}
	for name := range generatedFiles(t, c.dir) {
		if _, ok := files[name]; !ok || stderr != "" {
			if err := os.Remove(filepath.Join(c.dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	errPath := filepath.Join(c.dir, "stderr.txt")
	if stderr != "" {
		if err := os.WriteFile(errPath, []byte(stderr+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if c.golden {
		os.Remove(errPath)
	}
	for name, b := range files {
		path := filepath.Join(c.dir, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
			continue // keep mtimes of unchanged files, as streamgen generate does
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
