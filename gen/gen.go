// Package gen turns a resolved spec (spec.Program) into Go source files.
//
// Generate is a pure function: it returns file contents keyed by path
// relative to the output directory and writes nothing; cmd/streamgen does
// the I/O. Go code is built only with jennifer.
//
// The package's Go API carries no compatibility promise: the contract is
// the spec format, the generated code and the runtime API.
package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/streamgen/streamgen/internal/version"
	"github.com/streamgen/streamgen/spec"
)

// Config controls generation. The zero Config is valid; EnsureDefaults
// documents and fills in every default.
type Config struct {
	// OmitVersionMarkers leaves the streamgen release version out of the file
	// headers. Golden tests set it so that a release does not rewrite every
	// golden; the generated-code API version (GenVersion) is always emitted.
	// Default false.
	OmitVersionMarkers bool

	// OmitTests skips streamgen_records_test.go, the generated round-trip
	// tests and benchmarks of the records (the -tests=false flag). Default
	// false: the tests are emitted, so every user package checks its own
	// serdes. (A negative name because a bool cannot default to true.)
	OmitTests bool

	// SpecPath is the path written in each file's "// source:" header.
	// Default: prog.File. It must be relative (output must not depend on the
	// machine), in slash form.
	SpecPath string

	// ToolVersion is the streamgen release written in the headers unless
	// OmitVersionMarkers is set. Default "(devel)"; cmd/streamgen sets it
	// from its build info.
	ToolVersion string

	// Package is the Go package name of the generated files. Default:
	// prog.Package.
	Package string
}

// EnsureDefaults fills in the defaults of unset fields from prog.
func (c *Config) EnsureDefaults(prog *spec.Program) {
	if c.SpecPath == "" && prog != nil {
		c.SpecPath = filepath.ToSlash(prog.File)
	}
	if c.ToolVersion == "" {
		c.ToolVersion = "(devel)"
	}
	if c.Package == "" && prog != nil {
		c.Package = prog.Package
	}
}

// Validate reports every problem of the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	if c.SpecPath == "" {
		errs = append(errs, errors.New("gen: SpecPath is empty"))
	} else if path.IsAbs(c.SpecPath) || filepath.IsAbs(c.SpecPath) {
		errs = append(errs, fmt.Errorf("gen: SpecPath %q is absolute; generated output must not depend on the machine", c.SpecPath))
	}
	if strings.ContainsAny(c.SpecPath+c.ToolVersion, "\r\n") {
		errs = append(errs, errors.New("gen: SpecPath and ToolVersion must be single lines"))
	}
	if c.Package == "" {
		errs = append(errs, errors.New("gen: no package name"))
	} else if !isIdent(c.Package) {
		errs = append(errs, fmt.Errorf("gen: package name %q is not a Go identifier", c.Package))
	}
	return errors.Join(errs...)
}

func isIdent(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// Names of the files Generate writes.
const (
	recordsFile     = "streamgen_records.go"
	recordsTestFile = "streamgen_records_test.go"
)

// genCtx is the state shared by the generator steps.
type genCtx struct {
	prog *spec.Program
	cfg  Config
	pkg  string

	// files are the Go files generated so far, by output path.
	files map[string]*jen.File
	// diags collects positioned problems; steps add to it and keep going
	// where they can, so that one run reports everything.
	diags diagnostics

	// pkgScope holds every package-level identifier generated so far.
	// Steps reserve their names here so collisions between, say, a record
	// and a topology function are reported instead of failing to compile.
	pkgScope *scope
	// Go names assigned by the names step.
	recordNames map[*spec.Record]string
	enumNames   map[*spec.Enum]string
	fieldNames  map[*spec.Field]string
	valueNames  map[*spec.EnumValue]string

	// funcAsserts are the user functions the topology names, with the Go
	// signature each must have, in the order they are asserted in the
	// topology file (model.funcs, set by buildModel; read by CheckUserFuncs).
	funcAsserts []*funcAssert
	// inlineExprs are the topology's inline expressions (`expr:`), for
	// CheckUserFuncs to report their type errors at the spec position.
	inlineExprs []*funcAssert
	// registry are the registry serdes of topic sides by variable name
	// (registry.go).
	registry map[string]*registryUse
	// model is the Go-level program the topology, driver and queries
	// files are emitted from (set by buildModel).
	model *model
}

// steps are the generator steps, run in order. Each adds files to the
// context or records diagnostics. Add a step (such as generateTopology) by
// adding one line here; the names step must stay first.
var steps = []func(*genCtx) error{
	assignNames,         // names.go/records.go: Go names of records, enums, fields
	generateRecords,     // records.go: streamgen_records.go
	generateRecordTests, // records_testgen.go: streamgen_records_test.go
	generateJSON,        // records_json.go: streamgen_json.go and its test
	generateJSONSchema,  // records_jsonschema.go: streamgen_jsonschema.go
	generateProtobuf,    // records_protobuf.go: streamgen_protobuf.go and its test
	generateAvro,        // records_avro.go: streamgen_avro.go and its test
	generateRegistry,    // registry.go: streamgen_registry.go
	checkNodeNames,      // nodenames.go: the runtime's node names are unique
	buildModel,          // model.go: the Go model of topics, stores and wiring
	generateTopology,    // op_app.go: streamgen_topology.go
	generateDriver,      // driver.go: streamgen_driver.go
	generateQueries,     // query.go: streamgen_queries.go
}

// Generate generates the Go files for prog. The result maps paths relative
// to the output directory to formatted Go source. On error nothing is
// returned: either every file generated or none did.
func Generate(prog *spec.Program, cfg Config) (map[string][]byte, error) {
	c, err := runSteps(prog, cfg)
	if err != nil {
		return nil, err
	}
	return c.render()
}

// runSteps runs every generator step and returns the context holding the
// unrendered files.
func runSteps(prog *spec.Program, cfg Config) (*genCtx, error) {
	if prog == nil {
		return nil, errors.New("gen: nil program")
	}
	cfg.EnsureDefaults(prog)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &genCtx{
		prog:        prog,
		cfg:         cfg,
		pkg:         cfg.Package,
		files:       map[string]*jen.File{},
		pkgScope:    newScope(),
		recordNames: map[*spec.Record]string{},
		enumNames:   map[*spec.Enum]string{},
		fieldNames:  map[*spec.Field]string{},
		valueNames:  map[*spec.EnumValue]string{},
	}
	for _, step := range steps {
		if err := step(c); err != nil {
			return nil, err
		}
		// Later steps rely on the names and types of earlier ones, so stop
		// at the first step that found problems.
		if err := c.diags.err(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// render formats every file. A file jennifer cannot format (a generator
// bug) is reported with its raw source and line numbers, so the bug can be
// found without a debugger.
func (c *genCtx) render() (map[string][]byte, error) {
	names := make([]string, 0, len(c.files))
	for name := range c.files {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make(map[string][]byte, len(names))
	var errs []error
	for _, name := range names {
		if path.IsAbs(name) || strings.HasPrefix(path.Clean(name), "..") || path.Clean(name) != name {
			errs = append(errs, fmt.Errorf("gen: output path %q escapes the output directory", name))
			continue
		}
		f := c.files[name]
		f.NoFormat = true
		var buf bytes.Buffer
		if err := f.Render(&buf); err != nil {
			errs = append(errs, fmt.Errorf("gen: rendering %s: %w", name, err))
			continue
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			errs = append(errs, fmt.Errorf("gen: formatting %s: %w\n%s", name, err, numbered(buf.Bytes())))
			continue
		}
		out[name] = src
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// numbered prefixes each line of src with its 1-based line number, to
// match the positions format.Source reports.
func numbered(src []byte) string {
	var sb strings.Builder
	for i, line := range strings.Split(string(src), "\n") {
		fmt.Fprintf(&sb, "%5d  %s\n", i+1, line)
	}
	return sb.String()
}

// versionGate emits the compile-time check that the linked runtime supports
// the generated-code API of this generator (see sgimpl.EnforceVersion).
func versionGate(f *jen.File) {
	f.Comment("// This check fails to compile if the streamgen runtime linked into this")
	f.Comment("// package is too old or too new for this generated code; see the doc of")
	f.Comment("// sgimpl.EnforceVersion for the fix.")
	f.Const().Defs(
		jen.Id("_").Op("=").Qual(pathSgimpl, "EnforceVersion").Call(jen.Lit(version.GenVersion).Op("-").Qual(pathSgimpl, "MinVersion")),
		jen.Id("_").Op("=").Qual(pathSgimpl, "EnforceVersion").Call(jen.Qual(pathSgimpl, "MaxVersion").Op("-").Lit(version.GenVersion)),
	)
}
