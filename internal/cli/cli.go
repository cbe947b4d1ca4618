// Package cli implements the streamgen command. It does the I/O — flags,
// reading the spec, writing files, printing diagnostics — around the pure
// spec and gen packages, so the golden tests can drive it in process.
package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/internal/typecheck"
	"github.com/streamgen/streamgen/spec"
)

// Exit codes, documented in `streamgen help`.
const (
	ExitOK      = 0 // success
	ExitProblem = 1 // invalid spec, wrong user function, stale generated files (check), breaking changes (check -against), unformatted files (fmt -d)
	ExitUsage   = 2 // bad command line
	ExitIO      = 3 // a file could not be read or written
)

const usage = `streamgen compiles a stream-processing spec into typed Go code.

Usage:
  streamgen init [flags] [dir]     create a new project: go.mod, a starter spec, tests, deployment files
  streamgen generate [flags]       write the generated Go files; what
                                   //go:generate go tool streamgen generate runs
  streamgen check [flags]          exit 1 with a unified diff when generated files are stale
  streamgen check -against <old>   exit 1 when the spec would break an application running <old>
                                   (a spec file, or a git revision holding the same path)
  streamgen check -registry <url>  exit 1 when the schema registry's compatibility rules refuse a
                                   record schema of the spec's avro, protobuf or jsonschema topics
  streamgen describe [flags]       print the topology (-format text|mermaid|dot)
  streamgen fmt [-w] [-d] file...  normalise spec files (stdout; -w in place; -d a diff)
  streamgen schema                 print the JSON Schema of the spec format
  streamgen schema <format> [spec] print the avro, protobuf or jsonschema schemas of the spec's records
  streamgen help [command]         show help

Common flags:
  -spec path   the spec file (default streamgen.yaml in the current directory)
  -out dir     where generated files go (default: the spec's directory)

Exit codes:
  0  success
  1  invalid spec, user function with a wrong signature, stale files (check),
     breaking changes (check -against), or files not formatted (fmt -d)
  2  bad command line
  3  a file could not be read or written
`

// Run runs the streamgen command with args (without the program name).
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "init":
		return runInit(rest, stdout, stderr)
	case "generate", "gen":
		return runGenerate(rest, stdout, stderr, false)
	case "check":
		return runGenerate(rest, stdout, stderr, true)
	case "describe":
		return runDescribe(rest, stdout, stderr)
	case "fmt":
		return runFmt(rest, stdout, stderr)
	case "schema":
		return runSchema(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		// `help -h` (or `-h -h`) is the help itself, not a command to ask.
		if len(rest) > 0 && rest[0] != "help" && !strings.HasPrefix(rest[0], "-") {
			return Run([]string{rest[0], "-h"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "streamgen: unknown command %q\n\n%s", cmd, usage)
	return ExitUsage
}

type commonFlags struct {
	spec, out string
	tests     bool
	typecheck bool
}

func newFlagSet(name, help string, stderr, stdout io.Writer, c *commonFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("streamgen "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.spec, "spec", "streamgen.yaml", "the spec file")
	fs.StringVar(&c.out, "out", "", "output directory (default: the spec's directory)")
	fs.Usage = func() {
		fmt.Fprintf(stdout, "usage: streamgen %s [flags]\n\n%s\nFlags:\n", name, help)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, false
		}
		return ExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "streamgen: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage, false
	}
	return 0, true
}

// parseAndLoad parses args with fs, then loads the spec c names: prog is
// nil when either step ends the command, with code its exit code.
func parseAndLoad(fs *flag.FlagSet, args []string, c *commonFlags, stderr io.Writer) (prog *spec.Program, code int) {
	if code, ok := parseFlags(fs, args); !ok {
		return nil, code
	}
	return load(c, stderr)
}

// load parses the spec and reports diagnostics on stderr.
func load(c *commonFlags, stderr io.Writer) (*spec.Program, int) {
	src, err := os.ReadFile(c.spec)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen: %v\n", err)
		return nil, ExitIO
	}
	prog, err := spec.Parse(filepath.ToSlash(filepath.Clean(c.spec)), src)
	if err != nil {
		fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
		return nil, ExitProblem
	}
	return prog, ExitOK
}

func runGenerate(args []string, stdout, stderr io.Writer, check bool) int {
	var c commonFlags
	name, help := "generate", "Writes the generated Go files next to the spec. Nothing is written if anything fails."
	if check {
		name, help = "check", "Regenerates in memory and compares with the files on disk; prints a unified diff and exits 1 when they differ.\nWith -against, instead compares the spec with an older one and reports the changes that would break\nan application running it (docs/operations.md); exits 1 when one is breaking."
	}
	fs := newFlagSet(name, help, stderr, stdout, &c)
	fs.BoolVar(&c.tests, "tests", true, "also generate serde round-trip tests and benchmarks")
	fs.BoolVar(&c.typecheck, "typecheck", true, "type-check the user functions and inline expressions the spec names before writing (results cached in the user cache dir)")
	var against, registry string
	if check {
		fs.StringVar(&against, "against", "", "instead, compare the spec with an older one: a spec file, or a git revision (the spec's path at that revision); exit 1 on breaking changes")
		fs.StringVar(&registry, "registry", "", "instead, ask this schema registry (Confluent API URL) whether the schemas of the avro, protobuf and jsonschema topics are compatible with the latest registered versions; exit 1 on a refusal")
	}
	prog, code := parseAndLoad(fs, args, &c, stderr)
	if prog == nil {
		return code
	}
	if against != "" {
		return runEvolution(prog, c.spec, against, stdout, stderr)
	}
	if registry != "" {
		return runRegistryCheck(prog, registry, stdout, stderr)
	}
	out := c.out
	if out == "" {
		out = filepath.Dir(c.spec)
	}
	rel, err := filepath.Rel(out, c.spec)
	if err != nil {
		rel = filepath.Base(c.spec)
	}
	files, checks, err := gen.GenerateChecked(prog, gen.Config{SpecPath: filepath.ToSlash(rel), OmitTests: !c.tests})
	if err != nil {
		fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
		return ExitProblem
	}
	if c.typecheck {
		if err := typecheck.Check(out, files, checks, typecheck.Options{}); err != nil {
			fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
			return ExitProblem
		}
	}
	if check {
		return compareFiles(out, files, stdout, stderr)
	}
	return writeFiles(out, files, stderr)
}

// generatedHeader marks files streamgen owns; only those are ever removed.
var generatedHeader = []byte(gen.Header)

// staleFiles lists generated files in dir that the new output no longer has.
func staleFiles(dir string, files map[string][]byte) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		if _, ok := files[e.Name()]; ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(b, generatedHeader) {
			stale = append(stale, e.Name())
		}
	}
	return stale, nil
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// safeJoin refuses generated paths that would escape the output directory.
func safeJoin(dir, name string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(name))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("streamgen: generated path %q escapes the output directory", name)
	}
	return filepath.Join(dir, clean), nil
}

func writeFiles(dir string, files map[string][]byte, stderr io.Writer) int {
	stale, err := staleFiles(dir, files)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen: %v\n", err)
		return ExitIO
	}
	paths := map[string]string{}
	for _, name := range sortedNames(files) {
		p, err := safeJoin(dir, name)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return ExitIO
		}
		paths[name] = p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "streamgen: %v\n", err)
		return ExitIO
	}
	for _, name := range sortedNames(files) {
		old, err := os.ReadFile(paths[name])
		if err == nil && bytes.Equal(old, files[name]) {
			continue // keep mtimes of unchanged files, so builds stay cached
		}
		if err := os.MkdirAll(filepath.Dir(paths[name]), 0o755); err != nil {
			fmt.Fprintf(stderr, "streamgen: %v\n", err)
			return ExitIO
		}
		if err := os.WriteFile(paths[name], files[name], 0o644); err != nil {
			fmt.Fprintf(stderr, "streamgen: %v\n", err)
			return ExitIO
		}
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			fmt.Fprintf(stderr, "streamgen: %v\n", err)
			return ExitIO
		}
	}
	return ExitOK
}

func compareFiles(dir string, files map[string][]byte, stdout, stderr io.Writer) int {
	stale, err := staleFiles(dir, files)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen: %v\n", err)
		return ExitIO
	}
	differ := false
	for _, name := range sortedNames(files) {
		p, err := safeJoin(dir, name)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return ExitIO
		}
		old, _ := os.ReadFile(p)
		if d := textdiff.Unified(filepath.ToSlash(p), filepath.ToSlash(p)+" (regenerated)", string(old), string(files[name])); d != "" {
			fmt.Fprint(stdout, d)
			differ = true
		}
	}
	for _, name := range stale {
		p := filepath.Join(dir, name)
		old, _ := os.ReadFile(p)
		fmt.Fprint(stdout, textdiff.Unified(filepath.ToSlash(p), "/dev/null", string(old), ""))
		differ = true
	}
	if differ {
		fmt.Fprintf(stderr, "streamgen: generated files in %s are stale; run `go generate` there (or `make generate`)\n", dir)
		return ExitProblem
	}
	return ExitOK
}

func runDescribe(args []string, stdout, stderr io.Writer) int {
	var c commonFlags
	var format string
	fs := newFlagSet("describe", "Prints the topology: sub-topologies, sources, processors, stores and sinks.", stderr, stdout, &c)
	fs.StringVar(&format, "format", "text", "output format: text, mermaid (a flowchart for Markdown) or dot (Graphviz: dot -Tsvg)")
	prog, code := parseAndLoad(fs, args, &c, stderr)
	if prog == nil {
		return code
	}
	text, err := gen.Describe(prog, format)
	if err != nil {
		fmt.Fprintln(stderr, err)
		if _, invalid := err.(spec.Diagnostics); invalid {
			return ExitProblem // node names the runtime would refuse
		}
		return ExitUsage
	}
	fmt.Fprint(stdout, text)
	return ExitOK
}
