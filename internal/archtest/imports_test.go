package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/streamgen/streamgen"

type pkg struct {
	ImportPath   string
	Deps         []string
	Imports      []string
	TestImports  []string // of the package's in-package tests
	XTestImports []string // of its external (_test package) tests
}

// allImports are the package's imports and its tests'.
func (p pkg) allImports() []string {
	return append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...)
}

// listPackages runs `go list -json` over the module (Deps is filled
// without -deps).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return pkgs
}

func hasPrefix(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// lightDeps are packages under a banned prefix that depend on the
// standard library only: franz-go's schema registry client, which
// `streamgen check -registry` uses, pulls nothing of Kafka's client.
var lightDeps = []string{"github.com/twmb/franz-go/pkg/sr"}

// TestImports enforces the dependency direction of docs/architecture.md:
// runtime and serdes never reach the generator or its libraries, the
// generator never reaches Kafka or Pebble, and nothing imports golden or cmd.
func TestImports(t *testing.T) {
	rules := []struct {
		from   []string
		banned []string
		why    string
	}{
		{[]string{module + "/runtime", module + "/serdes"},
			[]string{module + "/gen", module + "/spec", module + "/templates", module + "/cmd", "github.com/dave/jennifer", "go.yaml.in/yaml/v3", "golang.org/x/tools"},
			"generated binaries link only the runtime"},
		{[]string{module + "/spec", module + "/gen", module + "/cmd"},
			[]string{"github.com/twmb/franz-go", "github.com/cockroachdb/pebble/v2", module + "/runtime"},
			"the generator must not pull the runtime's heavy dependencies"},
		{[]string{module + "/spec"},
			[]string{module + "/gen", module + "/templates", module + "/serdes", "github.com/dave/jennifer"},
			"spec is the first stage of the pipeline"},
		{[]string{module + "/serdes"},
			[]string{module + "/runtime"},
			"serdes is the runtime's leaf"},
		{[]string{module + "/golden", module + "/examples", module + "/conformance/scenarios"},
			[]string{module + "/gen", module + "/spec", "github.com/dave/jennifer"},
			"generated code is user code: it links the runtime, never the generator"},
	}
	pkgs := listPackages(t)
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	checked := 0
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if hasPrefix(imp, module+"/golden", module+"/cmd") && !strings.HasSuffix(p.ImportPath, "_test") {
				t.Errorf("%s imports %s: nothing may import golden or cmd packages", p.ImportPath, imp)
			}
		}
		for _, r := range rules {
			if !hasPrefix(p.ImportPath, r.from...) {
				continue
			}
			checked++
			for _, d := range p.Deps {
				if hasPrefix(d, r.banned...) && !hasPrefix(d, lightDeps...) {
					t.Errorf("%s depends on %s: %s", p.ImportPath, d, r.why)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package matched any rule: the module layout changed, update the test")
	}
}
