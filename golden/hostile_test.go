package golden_test

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileDocsInjectNothing checks the golden case hostile-docs, whose
// spec puts Go code (after comment terminators, backquotes, quotes,
// newlines, directives, Unicode line separators) into every free-text
// slot. TestGolden keeps the output current and go build/vet/test compile
// it; this test proves none of that text became code: the identifier
// pwned, which every payload calls, appears only inside comments and
// string literals, no line is a compiler directive, and the only functions
// are the generator's own. It also checks that the docs and the default
// did reach the output, so the test is not vacuous.
func TestHostileDocsInjectNothing(t *testing.T) {
	files := generatedFiles(t, "hostile-docs")
	if len(files) < 3 {
		t.Fatalf("hostile-docs has %d generated files; run go test ./golden -update", len(files))
	}
	inComments, inStrings := 0, 0
	for name, src := range files {
		path := filepath.Join("hostile-docs", name)
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(path, -1, len(src)), src, func(pos token.Position, msg string) {
			t.Errorf("%s: %s", pos, msg)
		}, scanner.ScanComments)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			switch {
			case tok == token.COMMENT:
				inComments += strings.Count(lit, "pwned")
			case tok == token.STRING:
				inStrings += strings.Count(lit, "pwned")
			case strings.Contains(lit, "pwned"):
				t.Errorf("%s: %s %q: spec text became code", fset.Position(pos), tok, lit)
			}
		}
		for i, line := range strings.Split(string(src), "\n") {
			l := strings.TrimSpace(line)
			if strings.HasPrefix(l, "//go:") || strings.HasPrefix(l, "//line ") || strings.HasPrefix(l, "// +build") ||
				strings.HasPrefix(l, "/*line ") {
				t.Errorf("%s:%d: a directive: %q", path, i+1, line)
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "init" {
				t.Errorf("%s: declares func init", path)
			}
		}
	}
	if inComments < 10 || inStrings < 1 {
		t.Errorf("pwned appears %d times in comments and %d in strings: the hostile docs and default did not reach the output", inComments, inStrings)
	}
}
