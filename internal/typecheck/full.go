package typecheck

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// fullCheck loads the package with go/packages, as the go command sees it,
// with the generated files overlaid. It is the slow road: `go list` builds
// the export data of every dependency, and it decides every case.
func fullCheck(in *inputs) (*checked, error) {
	cfg := &packages.Config{
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:        in.dir,
		Overlay:    in.overlay,
		Tests:      false,
		BuildFlags: in.buildFlags,
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, fmt.Errorf("streamgen: loading the Go package in %s to check user functions: %w", in.dir, err)
	}
	if len(pkgs) != 1 || pkgs[0].Types == nil {
		return nil, fmt.Errorf("streamgen: loading the Go package in %s: no package found", in.dir)
	}
	res := &checked{pkg: pkgs[0].Types}
	for _, e := range pkgs[0].Errors {
		if e.Kind != packages.TypeError {
			continue
		}
		if file, line, ok := errorLine(e.Pos); ok {
			res.errors = append(res.errors, typeError{file: file, line: line, msg: e.Msg})
		}
	}
	return res, nil
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
