package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/spec"
	"github.com/streamgen/streamgen/templates"
)

const initHelp = `Creates a new streamgen project in dir (default: the current directory): a Go module that
requires streamgen and pins its generator as a Go tool, a starter spec with its functions and a
test, a Makefile, a Dockerfile, Kubernetes manifests and a Grafana dashboard. dir must be empty
unless -force is given; existing files are never overwritten.

Depend on a released streamgen with -version vX.Y.Z (the default is the version of this
streamgen binary, when it has one), or on a local checkout with -replace PATH.`

// streamgenModule is the module the new project requires.
const streamgenModule = "github.com/streamgen/streamgen"

// devVersion is the version go.mod requires when a replace directive
// supplies the module: any version does, this one says none was released.
const devVersion = "v0.0.0-00010101000000-000000000000"

type initFlags struct {
	module, replace, version string
	force                    bool
}

func runInit(args []string, stdout, stderr io.Writer) int {
	var f initFlags
	fs := flag.NewFlagSet("streamgen init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.module, "module", "", "the new module's path (default: example.com/<dir name>)")
	fs.StringVar(&f.replace, "replace", "", "a local checkout of streamgen, for a replace directive in go.mod (its go.sum is copied too)")
	fs.StringVar(&f.version, "version", "", "the streamgen version go.mod requires (default: this binary's version)")
	fs.BoolVar(&f.force, "force", false, "write into a directory that is not empty (existing files are still never overwritten)")
	fs.Usage = func() {
		fmt.Fprintf(stdout, "usage: streamgen init [flags] [dir]\n\n%s\n\nFlags:\n", initHelp)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "streamgen init: want at most one directory, got %q\n", fs.Args())
		return ExitUsage
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	data, code := initData(&f, dir, stderr)
	if data == nil {
		return code
	}
	files, err := projectFiles(*data, f.replace)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitIO
	}
	if code := writeProject(dir, files, f.force, stderr); code != ExitOK {
		return code
	}
	fmt.Fprintf(stdout, "streamgen init: created module %s in %s (%d files)\n", data.Module, dir, len(files))
	return ExitOK
}

// modulePathRE is a conservative module path: lower-case elements of
// letters, digits, dots, dashes and underscores.
var modulePathRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._~-]*(/[a-zA-Z0-9._~-]+)*$`)

// nameRE is what the binary, application id and Kubernetes names may be.
var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// initData checks the flags and works out the templates' data.
func initData(f *initFlags, dir string, stderr io.Writer) (*templates.Data, int) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen init: %v\n", err)
		return nil, ExitIO
	}
	mod := f.module
	if mod == "" {
		mod = "example.com/" + strings.ToLower(filepath.Base(abs))
	}
	if !modulePathRE.MatchString(mod) {
		fmt.Fprintf(stderr, "streamgen init: -module %q is not a module path (e.g. example.com/myorders)\n", mod)
		return nil, ExitUsage
	}
	name := path.Base(mod)
	if !nameRE.MatchString(name) {
		fmt.Fprintf(stderr, "streamgen init: the module path's last element %q must be lower-case letters, digits and dashes: it names the binary, the application id and the Kubernetes objects\n", name)
		return nil, ExitUsage
	}
	d := &templates.Data{Module: mod, Name: name, Version: f.version}
	if f.replace != "" {
		if d.Replace, err = checkout(f.replace); err != nil {
			fmt.Fprintf(stderr, "streamgen init: -replace: %v\n", err)
			return nil, ExitUsage
		}
		if d.Version == "" {
			d.Version = devVersion
		}
	}
	if d.Version == "" {
		d.Version = binaryVersion()
	}
	if d.Version == "" {
		fmt.Fprintln(stderr, "streamgen init: this streamgen binary has no release version; give -version vX.Y.Z (a released streamgen) or -replace PATH (a checkout)")
		return nil, ExitUsage
	}
	return d, ExitOK
}

// checkout returns the absolute path of a streamgen checkout, or why p is not one.
func checkout(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(string(b), "module "+streamgenModule+"\n") {
		return "", fmt.Errorf("%s/go.mod is not the module %s", p, streamgenModule)
	}
	return filepath.ToSlash(abs), nil
}

// binaryVersion is the version of the streamgen module this binary was
// built from (go install …@vX), or "" for a development build.
func binaryVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != streamgenModule || !strings.HasPrefix(bi.Main.Version, "v") || strings.Contains(bi.Main.Version, "+dirty") {
		return ""
	}
	return bi.Main.Version
}

// projectFiles renders the templates and adds the files that are not
// templates: the spec's JSON Schema, the code generated from the starter
// spec and, with a checkout, its go.sum, so that the new module builds
// offline from the module cache.
func projectFiles(d templates.Data, replace string) (map[string][]byte, error) {
	files, err := templates.Render(d)
	if err != nil {
		return nil, err
	}
	files["streamgen.schema.json"] = spec.SchemaJSON
	// The generated files too, so that the first `go mod tidy` sees every
	// package the project imports (the runtime's, through them).
	prog, err := spec.Parse("streamgen.yaml", files["streamgen.yaml"])
	if err != nil {
		return nil, fmt.Errorf("streamgen init: the starter spec: %v", err)
	}
	generated, err := gen.Generate(prog, gen.Config{SpecPath: "streamgen.yaml"})
	if err != nil {
		return nil, fmt.Errorf("streamgen init: the starter spec: %v", err)
	}
	for name, b := range generated {
		files[name] = b
	}
	if replace != "" {
		sum, err := os.ReadFile(filepath.Join(d.Replace, "go.sum"))
		if err != nil {
			return nil, fmt.Errorf("streamgen init: -replace: %v", err)
		}
		files["go.sum"] = sum
	}
	return files, nil
}

// writeProject writes files under dir, which must be empty unless force.
func writeProject(dir string, files map[string][]byte, force bool, stderr io.Writer) int {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		fmt.Fprintf(stderr, "streamgen init: %v\n", err)
		return ExitIO
	}
	if len(entries) > 0 && !force {
		fmt.Fprintf(stderr, "streamgen init: %s is not empty (it has %s); use an empty directory, or -force to add the project's files next to what is there\n", dir, entries[0].Name())
		return ExitUsage
	}
	names := make([]string, 0, len(files))
	for name := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Lstat(p); err == nil {
			fmt.Fprintf(stderr, "streamgen init: %s exists; nothing was written\n", p)
			return ExitProblem
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintf(stderr, "streamgen init: %v\n", err)
			return ExitIO
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			fmt.Fprintf(stderr, "streamgen init: %v\n", err)
			return ExitIO
		}
	}
	return ExitOK
}
