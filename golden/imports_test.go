package golden_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoGeneratedImports keeps `make generate` able to run from a broken
// state: if a test of this package imported a generated package (golden/full,
// an example), a runtime change that leaves it stale would stop this
// package from compiling, and so TestGolden from regenerating it. Tests that
// link generated code go in a package of their own (golden/runtimedescribe).
func TestNoGeneratedImports(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, f := range files {
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, gen := range []string{"/golden/", "/examples/", "/docs/examples/", "/bench/", "/chaos/", "/conformance/scenarios/"} {
				if strings.Contains(path, "streamgen/streamgen"+gen) {
					t.Errorf("%s imports the generated package %s: move the test to a package of its own", f, path)
				}
			}
		}
	}
}
