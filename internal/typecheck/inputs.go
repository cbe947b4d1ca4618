package typecheck

import (
	"bytes"
	"go/build"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/streamgen/streamgen/gen"
)

// inputs are the Go package as it will be once the generated files are
// written, with what every road of the check needs.
type inputs struct {
	dir        string // absolute
	checks     *gen.Checks
	buildFlags []string
	// files are the package's non-test Go files as they will be: the
	// user's own (as selected by build constraints), the generated ones and
	// the check file, sorted by path.
	files []srcFile
	// generated are the generated files by name, test files included.
	generated map[string][]byte
	// overlay replaces, for the full load, every generated file (including
	// ones on disk the new output drops) and adds the check file.
	overlay map[string][]byte
	mod     *module // nil outside a module
	depsKey string  // computed once by cache.depsKey
}

type srcFile struct {
	path string
	src  []byte
	user bool // written by the user, not by streamgen
}

// module is the main module the package belongs to.
type module struct {
	root      string // directory of go.mod
	path      string
	goVersion string // the go directive, as "go1.N"
	file      *modfile.File
	gomod     []byte
	gosum     []byte
	// workspace is set when a go.work file governs the build; the cache
	// does not model workspaces, so it is not used then.
	workspace bool
}

func readInputs(dir string, files map[string][]byte, checks *gen.Checks, buildFlags []string) (*inputs, error) {
	in := &inputs{dir: dir, checks: checks, buildFlags: buildFlags, generated: files, overlay: map[string][]byte{}}
	ctxt := build.Default
	ctxt.BuildTags = buildTags(buildFlags)
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if _, ok := files[name]; ok {
			continue
		}
		p := filepath.Join(dir, name)
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(src, []byte(gen.Header)) {
			// Generated files on disk that the new output drops must not
			// take part.
			in.overlay[p] = []byte("package " + checks.Package + "\n")
			continue
		}
		if ok, err := ctxt.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		in.files = append(in.files, srcFile{path: p, src: src, user: true})
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		in.overlay[p] = src
		if !strings.HasSuffix(name, "_test.go") {
			in.files = append(in.files, srcFile{path: p, src: src})
		}
	}
	p := filepath.Join(dir, gen.CheckFileName)
	in.overlay[p] = checks.File
	in.files = append(in.files, srcFile{path: p, src: checks.File})
	sort.Slice(in.files, func(i, j int) bool { return in.files[i].path < in.files[j].path })
	in.mod = findModule(dir)
	return in, nil
}

// buildTags returns the tags a -tags build flag selects.
func buildTags(flags []string) []string {
	var tags []string
	for i, f := range flags {
		name, v, hasValue := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if name != "tags" || !strings.HasPrefix(f, "-") {
			continue
		}
		if !hasValue && i+1 < len(flags) {
			v = flags[i+1]
		}
		tags = append(tags, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	return tags
}

// findModule finds the go.mod governing dir, or returns nil.
func findModule(dir string) *module {
	for d := dir; ; {
		gomod, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			f, err := modfile.ParseLax(filepath.Join(d, "go.mod"), gomod, nil)
			if err != nil || f.Module == nil {
				return nil
			}
			m := &module{root: d, path: f.Module.Mod.Path, file: f, gomod: gomod}
			if f.Go != nil {
				m.goVersion = "go" + f.Go.Version
			}
			m.gosum, _ = os.ReadFile(filepath.Join(d, "go.sum"))
			m.workspace = inWorkspace(d)
			return m
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}

// inWorkspace reports whether a go.work file applies to the module in dir.
func inWorkspace(dir string) bool {
	switch w := os.Getenv("GOWORK"); w {
	case "off":
		return false
	case "":
	default:
		return true
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// pkgPath is the import path of the package in dir.
func (m *module) pkgPath(dir string) string {
	rel, err := filepath.Rel(m.root, dir)
	if err != nil || rel == "." {
		return m.path
	}
	return m.path + "/" + filepath.ToSlash(rel)
}

// localDir returns the directory of an imported package whose source is
// on this machine rather than pinned by go.sum: a package of the main
// module or of a module replaced by a directory.
func (m *module) localDir(path string) (string, bool) {
	if rest, ok := underModule(path, m.path); ok {
		return filepath.Join(m.root, rest), true
	}
	for _, r := range m.file.Replace {
		if !modfile.IsDirectoryPath(r.New.Path) {
			continue
		}
		if rest, ok := underModule(path, r.Old.Path); ok {
			base := r.New.Path
			if !filepath.IsAbs(base) {
				base = filepath.Join(m.root, base)
			}
			return filepath.Join(base, rest), true
		}
	}
	return "", false
}

func underModule(path, mod string) (string, bool) {
	if path == mod {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, mod+"/")
	return filepath.FromSlash(rest), ok
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
