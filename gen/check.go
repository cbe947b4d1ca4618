package gen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/streamgen/streamgen/spec"
)

// CheckUserFuncs loads the Go package in dir, as it will be once files (the
// output of Generate) are written, and reports every user function the spec
// names that is missing or has the wrong signature, as a diagnostic at the
// spec position that names it with the signature it wants.
//
// Generated code asserts the same signatures, so `go build` fails on them
// too; this check only moves the message to the spec line. Other compile
// errors in the user's package are left to the Go compiler.
func CheckUserFuncs(prog *spec.Program, dir string, files map[string][]byte, buildFlags ...string) error {
	c, err := runSteps(prog, Config{SpecPath: "streamgen.yaml", OmitTests: true})
	if err != nil {
		return err
	}
	if len(c.funcAsserts) == 0 && len(c.inlineExprs) == 0 {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	overlay := map[string][]byte{}
	for name, src := range files {
		overlay[filepath.Join(abs, name)] = src
	}
	// Generated files on disk that the new output drops must not take part.
	entries, _ := os.ReadDir(abs)
	for _, e := range entries {
		p := filepath.Join(abs, e.Name())
		if _, ok := overlay[p]; ok || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && strings.HasPrefix(string(b), Header) {
			overlay[p] = []byte("package " + c.pkg + "\n")
		}
	}
	cfg := &packages.Config{
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:        abs,
		Overlay:    overlay,
		Tests:      false,
		BuildFlags: buildFlags,
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return fmt.Errorf("streamgen: loading the Go package in %s to check user functions: %w", dir, err)
	}
	if len(pkgs) != 1 || pkgs[0].Types == nil {
		return fmt.Errorf("streamgen: loading the Go package in %s: no package found", dir)
	}
	pkg := pkgs[0]
	wants := assertedTypes(pkg, filepath.Join(abs, topologyFileName))
	var diags diagnostics
	for i, a := range c.funcAsserts {
		obj := pkg.Types.Scope().Lookup(a.name)
		want := ""
		var wantType types.Type
		if i < len(wants) {
			wantType = wants[i]
			want = types.TypeString(wantType, types.RelativeTo(pkg.Types))
		}
		switch {
		case obj == nil:
			diags.add(a.pos, "%s of node %q: function %q is not defined in package %s; want %s", a.role, a.node.Name, a.name, pkg.Name, want)
		case wantType != nil && !types.AssignableTo(obj.Type(), wantType):
			got := types.TypeString(obj.Type(), types.RelativeTo(pkg.Types))
			diags.add(a.pos, "%s of node %q: function %q has signature %s, want %s", a.role, a.node.Name, a.name, got, want)
		}
	}
	exprErrors(&diags, c.inlineExprs, pkg, files[topologyFileName], filepath.Join(abs, topologyFileName))
	return diags.err()
}

// exprErrors reports the type errors the Go compiler would find inside the
// topology's inline expressions (an undefined name, a package missing from
// `imports:`, a wrong result type) at the spec position of the expression,
// so a spec mistake never surfaces as an error in generated code. An
// error is matched to an expression by the generated line it is on, which
// holds the expression as gofmt prints it; errors elsewhere are left to
// the compiler.
func exprErrors(diags *diagnostics, exprs []*funcAssert, pkg *packages.Package, src []byte, file string) {
	if len(exprs) == 0 || len(pkg.Errors) == 0 {
		return
	}
	lines := strings.Split(string(src), "\n")
	reported := map[string]bool{}
	for _, e := range pkg.Errors {
		if e.Kind != packages.TypeError {
			continue
		}
		path, line, ok := errorLine(e.Pos)
		if !ok || path != file || line < 1 || line > len(lines) {
			continue
		}
		for _, x := range exprs {
			printed := printedExpr(x.name)
			if printed == "" || !strings.Contains(lines[line-1], printed) {
				continue
			}
			key := x.pos.String() + e.Msg
			if !reported[key] {
				reported[key] = true
				msg := e.Msg
				if name, ok := strings.CutPrefix(msg, "undefined: "); ok && !strings.Contains(name, ".") {
					msg += fmt.Sprintf(" (if %s is a package, add its import path to the spec's imports:)", name)
				}
				diags.add(x.pos, "%s of node %q: expression %q: %s", x.role, x.node.Name, x.name, msg)
			}
			break
		}
	}
}

// errorLine splits a packages.Error position, file:line:col.
func errorLine(pos string) (file string, line int, ok bool) {
	rest, _, found := cutLastColon(pos) // drop the column
	if !found {
		return "", 0, false
	}
	file, num, found := cutLastColon(rest)
	if !found {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	return file, n, err == nil
}

func cutLastColon(s string) (before, after string, found bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// printedExpr is the first line of an expression as gofmt prints it in the
// generated file.
func printedExpr(src string) string {
	x, err := parser.ParseExpr(src)
	if err != nil {
		return ""
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, token.NewFileSet(), x); err != nil {
		return ""
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	return first
}

// assertedTypes returns, in order, the types of the signature assertions
// `_ func(...) ... = UserFunc` in the generated topology file.
func assertedTypes(pkg *packages.Package, file string) []types.Type {
	var out []types.Type
	for _, f := range pkg.Syntax {
		if pkg.Fset.Position(f.Pos()).Filename != file {
			continue
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok || vs.Type == nil || len(vs.Values) != 1 {
					continue
				}
				if _, isFunc := vs.Type.(*ast.FuncType); !isFunc {
					continue
				}
				if tv, ok := pkg.TypesInfo.Types[vs.Type]; ok {
					out = append(out, tv.Type)
				}
			}
		}
	}
	return out
}
