// Package typecheck checks, before anything is written, that the user
// functions a spec names exist in the user's Go package with the signatures
// the generated topology needs, and that the spec's inline expressions
// type-check, reporting both at the spec position instead of as errors in
// generated code.
//
// The check is the slow part of `streamgen generate`, so it takes the
// fastest road that can decide:
//
//  1. a cache of results, keyed by a hash of every input the answer depends
//     on (the user's files, the generated files, go.mod and go.sum, the
//     source of every package of the main module or of a local replace that
//     the package imports, the Go toolchain and the streamgen executable);
//  2. go/types over the user's own files plus the generated ones, importing
//     every dependency from the compiler's export data in the build cache
//     (located once by `go list -export`, then remembered under the same
//     kind of key);
//  3. when that road cannot decide (cgo, syntax errors, a package the
//     export data does not cover), a full load with golang.org/x/tools/go/packages.
//
// Every road reports the same diagnostics: they are computed by one
// function from the type-checked package and its type errors.
package typecheck

import (
	"errors"
	"fmt"
	"go/types"
	"path/filepath"
	"strings"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/spec"
)

// Options tune a check. The zero value is what `streamgen generate` uses.
type Options struct {
	// BuildFlags are passed to the go command (only -tags matters to the
	// fast path, which reads it to select the user's files).
	BuildFlags []string
	// CacheDir holds cached results; empty means os.UserCacheDir()/streamgen.
	CacheDir string
	// NoCache skips reading and writing cached results and export data.
	NoCache bool
}

// Check type-checks the Go package in dir as it will be once files (the
// output of gen.GenerateChecked) are written, and returns the diagnostics
// for checks as a spec.Diagnostics error, or nil if every user function and
// inline expression is well typed.
//
// Generated code asserts the same signatures, so `go build` fails on them
// too; this check only moves the message to the spec line. Other compile
// errors in the user's package are left to the Go compiler.
func Check(dir string, files map[string][]byte, checks *gen.Checks, opt Options) error {
	if checks == nil || (len(checks.Funcs) == 0 && len(checks.Exprs) == 0) {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	in, err := readInputs(abs, files, checks, opt.BuildFlags)
	if err != nil {
		return err
	}
	cache := openCache(opt)
	key := cache.resultKey(in)
	if diags, ok := cache.result(key); ok {
		return diags.err()
	}
	res, err := fastCheck(in, cache)
	if errors.Is(err, errUndecided) {
		res, err = fullCheck(in)
	}
	if err != nil {
		return err
	}
	diags := report(in, res)
	cache.putResult(key, diags)
	return diags.err()
}

// errUndecided is the fast path giving the decision to the full load.
var errUndecided = errors.New("typecheck: the fast path cannot decide")

// checked is a type-checked package, whichever road produced it.
type checked struct {
	pkg    *types.Package
	errors []typeError
}

// typeError is a type error at a line of a file (an absolute path).
type typeError struct {
	file string
	line int
	msg  string
}

// diagList is the check's result in a form that caches as JSON.
type diagList spec.Diagnostics

func (d diagList) err() error {
	if len(d) == 0 {
		return nil
	}
	return spec.Diagnostics(d)
}

func (d *diagList) add(pos spec.Pos, format string, args ...any) {
	*d = append(*d, spec.Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// report turns a type-checked package into the diagnostics for the checks.
func report(in *inputs, res *checked) diagList {
	checks := in.checks
	var diags diagList
	qual := types.RelativeTo(res.pkg)
	scope := res.pkg.Scope()
	for _, a := range checks.Funcs {
		obj := scope.Lookup(a.Name)
		var wantType types.Type
		want := ""
		if v := scope.Lookup(a.Var); v != nil {
			wantType = v.Type()
			want = types.TypeString(wantType, qual)
		}
		switch {
		case obj == nil:
			diags.add(a.Pos, "%s of node %q: function %q is not defined in package %s; want %s", a.Role, a.Node, a.Name, res.pkg.Name(), want)
		case wantType != nil && !types.AssignableTo(obj.Type(), wantType):
			got := types.TypeString(obj.Type(), qual)
			diags.add(a.Pos, "%s of node %q: function %q has signature %s, want %s", a.Role, a.Node, a.Name, got, want)
		}
	}
	exprErrors(&diags, in, res)
	return diags
}

// exprErrors reports the type errors the Go compiler would find inside the
// topology's inline expressions (an undefined name, a package missing from
// `imports:`, a wrong result type) at the spec position of the expression,
// so a spec mistake never surfaces as an error in generated code. An error
// is matched to an expression by the generated line it is on, which holds
// the expression as gofmt prints it; errors elsewhere are left to the
// compiler.
func exprErrors(diags *diagList, in *inputs, res *checked) {
	checks := in.checks
	if len(checks.Exprs) == 0 || len(res.errors) == 0 {
		return
	}
	topology := filepath.Join(in.dir, checks.TopologyFile)
	lines := strings.Split(string(in.generated[checks.TopologyFile]), "\n")
	reported := map[string]bool{}
	for _, e := range res.errors {
		if e.file != topology || e.line < 1 || e.line > len(lines) {
			continue
		}
		for _, x := range checks.Exprs {
			printed := printedExpr(x.Expr)
			if printed == "" || !strings.Contains(lines[e.line-1], printed) {
				continue
			}
			key := x.Pos.String() + e.msg
			if !reported[key] {
				reported[key] = true
				msg := e.msg
				if name, ok := strings.CutPrefix(msg, "undefined: "); ok && !strings.Contains(name, ".") {
					msg += fmt.Sprintf(" (if %s is a package, add its import path to the spec's imports:)", name)
				}
				diags.add(x.Pos, "%s of node %q: expression %q: %s", x.Role, x.Node, x.Expr, msg)
			}
			break
		}
	}
}
