package typecheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// fastCheck type-checks the package's files with go/types, importing every
// dependency from its export data in the build cache: only the user's files
// and the generated ones are checked from source. It returns errUndecided
// when it cannot stand in for the full load.
func fastCheck(in *inputs, c *cache) (*checked, error) {
	if in.mod == nil {
		return nil, errUndecided
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, f := range in.files {
		af, err := parser.ParseFile(fset, f.path, f.src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, errUndecided // the full load reports syntax the same way the compiler does
		}
		files = append(files, af)
	}
	imports, ok := importPaths(files)
	if !ok {
		return nil, errUndecided
	}
	exports, err := c.exports(in, imports)
	if err != nil {
		return nil, err
	}
	imp := &exportImporter{exports: exports}
	imp.gc = importer.ForCompiler(fset, "gc", imp.lookup)
	res := &checked{}
	goarch := os.Getenv("GOARCH")
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	conf := types.Config{
		Importer:  imp,
		GoVersion: in.mod.goVersion,
		Sizes:     types.SizesFor("gc", goarch),
		Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) {
				p := te.Fset.Position(te.Pos)
				res.errors = append(res.errors, typeError{file: p.Filename, line: p.Line, msg: te.Msg})
			}
		},
	}
	res.pkg, _ = conf.Check(in.mod.pkgPath(in.dir), fset, files, nil)
	if imp.failed || res.pkg == nil {
		return nil, errUndecided
	}
	return res, nil
}

// importPaths returns the sorted import paths of files; ok is false for
// cgo, which go/types cannot check from these files alone.
func importPaths(files []*ast.File) (paths []string, ok bool) {
	seen := map[string]bool{}
	for _, f := range files {
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil || p == "C" {
				return nil, false
			}
			if p != "unsafe" && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	return paths, true
}

// exportImporter imports packages from export data files.
type exportImporter struct {
	exports map[string]string // import path -> export data file
	gc      types.Importer
	failed  bool
}

func (i *exportImporter) Import(path string) (*types.Package, error) {
	p, err := i.gc.Import(path)
	if err != nil {
		i.failed = true
	}
	return p, err
}

func (i *exportImporter) lookup(path string) (io.ReadCloser, error) {
	file, ok := i.exports[path]
	if !ok {
		i.failed = true
		return nil, fmt.Errorf("no export data for %s", path)
	}
	return os.Open(file)
}

// listExports asks the go command where the export data of the imports and
// of their dependencies is, building what the build cache lacks.
func listExports(in *inputs, imports []string) (map[string]string, error) {
	if len(imports) == 0 {
		return map[string]string{}, nil
	}
	args := append([]string{"list", "-e", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}"}, in.buildFlags...)
	args = append(args, imports...)
	cmd := exec.Command("go", args...)
	cmd.Dir = in.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errUndecided // the full load reports why, as the go command words it
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, _ := strings.Cut(sc.Text(), "\t")
		if file != "" {
			exports[path] = file
		}
	}
	for _, p := range imports {
		if exports[p] == "" {
			return nil, errUndecided
		}
	}
	return exports, nil
}
