package archtest

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// runtimeLayers is the runtime's own layering: a package may import only
// project packages of a strictly lower layer, so packages of one layer
// never import each other. Every runtime package must be listed: a new one
// fails the test until it is given its place.
//
//	0  stdlib-only leaves: serdes, sgpartition, internal/{topodesc,unionfind,version},
//	   runtime/internal/httpsec (TLS and the bearer token of the HTTP endpoints)
//	1  sgreplay (the replay line format), sgstate (stores), sgimpl (generated-only glue),
//	   sgregistry (the schema registry client)
//	2  runtime/internal/engine (the contract between sgstream and the
//	   engines: tasks, their configuration, the test driver's interface)
//	3  sgstream (the typed DSL generated code calls; it implements the
//	   engine contract with unexported types)
//	4  sgquery (typed store views) and sgtest (the test driver tests use;
//	   sgapp's replay command runs it too)
//	5  sgapp (the binary's replay and describe commands) and sgkafka (the
//	   engine): neither imports the other, which is why App.Run is injected
//	6  sgrun (the run command: flags, environment, the embedded broker)
var runtimeLayers = map[string]int{
	module + "/serdes":                   0,
	module + "/runtime/sgpartition":      0,
	module + "/internal/topodesc":        0,
	module + "/internal/unionfind":       0,
	module + "/internal/version":         0,
	module + "/runtime/internal/httpsec": 0,
	module + "/runtime/sgreplay":         1,
	module + "/runtime/sgstate":          1,
	module + "/runtime/sgimpl":           1,
	module + "/runtime/sgregistry":       1,
	module + "/runtime/internal/engine":  2,
	module + "/runtime/sgstream":         3,
	module + "/runtime/sgquery":          4,
	module + "/runtime/sgtest":           4,
	module + "/runtime/sgapp":            5,
	module + "/runtime/sgkafka":          5,
	module + "/runtime/sgrun":            6,
}

const (
	runCommand = module + "/runtime/sgrun"
	kfake      = "github.com/twmb/franz-go/pkg/kfake"
)

// stdlibOnly are the leaves that must depend on the standard library only:
// the generator and the runtime share them, so they must not drag either's
// dependencies into the other.
var stdlibOnly = []string{
	module + "/internal/topodesc",
	module + "/internal/unionfind",
	module + "/internal/version",
	module + "/runtime/sgpartition",
	module + "/serdes",
}

func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// isRuntime reports whether path is a runtime package (or a shared leaf
// the runtime layers list).
func isRuntime(path string) bool {
	_, listed := runtimeLayers[path]
	return listed || hasPrefix(path, module+"/runtime")
}

// TestRuntimeLayering enforces runtimeLayers on the imports of every
// runtime package. Tests are not held to it: an external test may drive a
// package from above (sgkafka's tests run the engine on kfake); the rules
// on tests are TestRunCommandImports and TestRuntimeTestImports.
func TestRuntimeLayering(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		if !isRuntime(p.ImportPath) {
			continue
		}
		layer, ok := runtimeLayers[p.ImportPath]
		if !ok {
			t.Errorf("%s is a runtime package without a layer: add it to runtimeLayers", p.ImportPath)
			continue
		}
		checked++
		for _, imp := range p.Imports {
			l, ok := runtimeLayers[imp]
			if ok && l >= layer {
				t.Errorf("%s (layer %d) imports %s (layer %d): a runtime package imports only lower layers", p.ImportPath, layer, imp, l)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d runtime packages checked: the layout changed, update runtimeLayers", checked)
	}
}

// runtimeInternal is the root of the runtime's internal packages: the API
// between sgstream and the engines, which generated code, examples and
// users never see.
const runtimeInternal = module + "/runtime/internal"

// TestRuntimeInternalImports checks that runtime/internal/... is imported
// only by runtime packages and their tests. Go's internal rule already
// refuses an import from outside runtime/; the test states the rule where
// the rest of the picture is, and fails if the packages move (for instance
// to the module's internal/, where anything in the module could reach
// them). Generated code is held to it by TestGeneratedCodeImports.
func TestRuntimeInternalImports(t *testing.T) {
	importers := 0
	for _, p := range listPackages(t) {
		for _, imp := range p.allImports() {
			if !hasPrefix(imp, runtimeInternal) {
				continue
			}
			if !hasPrefix(p.ImportPath, module+"/runtime") {
				t.Errorf("%s imports %s: runtime/internal is the runtime's own; use the public API of sgstream, sgtest or sgkafka", p.ImportPath, imp)
			} else if !hasPrefix(p.ImportPath, runtimeInternal) {
				importers++
			}
			break
		}
	}
	if importers < 5 {
		t.Errorf("only %d runtime packages import %s: the engine API moved, update the test", importers, runtimeInternal)
	}
}

// TestRunCommandImports keeps the run command at the top: no other runtime
// package, and no test of one, imports it; and it is the only package of
// the module whose non-test code imports the embedded broker (kfake), so
// an application that embeds the engine never links it.
func TestRunCommandImports(t *testing.T) {
	kfakeImporters := 0
	for _, p := range listPackages(t) {
		if hasPrefix(p.ImportPath, module+"/runtime") && p.ImportPath != runCommand {
			for _, imp := range p.allImports() {
				if imp == runCommand {
					t.Errorf("%s imports %s: the run command is the top of the runtime", p.ImportPath, imp)
				}
			}
		}
		for _, imp := range p.Imports {
			if imp != kfake {
				continue
			}
			if p.ImportPath != runCommand {
				t.Errorf("%s imports %s: only the run command links the embedded broker", p.ImportPath, imp)
			} else {
				kfakeImporters++
			}
		}
	}
	if kfakeImporters != 1 {
		t.Errorf("%s imports kfake %d times, want once: the embedded broker moved, update the test", runCommand, kfakeImporters)
	}
}

// TestStdlibOnlyLeaves checks that the shared leaves depend on the standard
// library only, and that sgreplay depends on nothing of the project but
// serdes, so the replay format stays readable without the engine.
func TestStdlibOnlyLeaves(t *testing.T) {
	allowed := map[string][]string{
		module + "/runtime/sgreplay": {module + "/serdes"},
		// The topology model gen and the runtime share, over the leaves it
		// groups, names and renders with.
		module + "/internal/topograph": {module + "/internal/topodesc", module + "/internal/toponame", module + "/internal/unionfind"},
	}
	for _, leaf := range stdlibOnly {
		allowed[leaf] = nil
	}
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		extra, ok := allowed[p.ImportPath]
		if !ok {
			continue
		}
		seen[p.ImportPath] = true
		for _, d := range p.Deps {
			if !isStdlib(d) && !hasPrefix(d, extra...) {
				t.Errorf("%s depends on %s: it must depend on the standard library only%s", p.ImportPath, d, besides(extra))
			}
		}
	}
	for leaf := range allowed {
		if !seen[leaf] {
			t.Errorf("%s not found: update the stdlib-only list", leaf)
		}
	}
}

func besides(extra []string) string {
	if len(extra) == 0 {
		return ""
	}
	sort.Strings(extra)
	return " and " + strings.Join(extra, ", ")
}

// TestRuntimeTestImports extends the first rule of TestImports to tests:
// a runtime test that imported the generator (to generate code on the fly)
// would hide that the runtime works without it.
func TestRuntimeTestImports(t *testing.T) {
	banned := []string{module + "/gen", module + "/spec", module + "/internal/cli", "github.com/dave/jennifer", "golang.org/x/tools"}
	checked := 0
	for _, p := range listPackages(t) {
		if !hasPrefix(p.ImportPath, module+"/runtime", module+"/serdes") {
			continue
		}
		checked++
		for _, imp := range p.allImports()[len(p.Imports):] {
			if hasPrefix(imp, banned...) {
				t.Errorf("a test of %s imports %s: runtime tests link only the runtime", p.ImportPath, imp)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no runtime package found")
	}
}

// generatedMayImport are the only project packages generated code imports:
// the user-facing runtime, sgimpl for what only generated code may use,
// and sgtest and serdestest for the generated driver and record tests.
// Never sgkafka (an application reaches the engine through sgrun or its own
// code) and never runtime/internal/... (Go forbids it outside runtime/).
var generatedMayImport = map[string]bool{
	module + "/serdes":            true,
	module + "/serdes/serdestest": true,
	module + "/runtime/sgapp":     true,
	module + "/runtime/sgimpl":    true,
	module + "/runtime/sgquery":   true,
	module + "/runtime/sgreplay":  true,
	module + "/runtime/sgrun":     true,
	module + "/runtime/sgstate":   true,
	module + "/runtime/sgstream":  true,
	module + "/runtime/sgtest":    true,
}

// TestGeneratedCodeImports checks every generated file in the repository
// (goldens, examples, docs examples, bench and chaos scenarios, gen's
// testdata) against generatedMayImport, so the generator cannot start to
// depend on a runtime package users are not meant to see.
func TestGeneratedCodeImports(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(src, []byte("// Code generated by streamgen. DO NOT EDIT.")) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if hasPrefix(p, module) && !generatedMayImport[p] {
				t.Errorf("%s imports %s: generated code uses only the user-facing runtime and sgimpl", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("only %d generated files found: the layout changed, update the test", files)
	}
}
