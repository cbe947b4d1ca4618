package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/spec"
)

// schemaPrinters are the record schema formats of `streamgen schema
// <format>`: each prints the schemas of every record of a spec,
// deterministically. A format listed in schemaFormats without a printer
// is refused as not built yet.
var schemaPrinters = map[string]func(*spec.Program) ([]byte, error){
	"jsonschema": gen.JSONSchemas,
	"avro":       gen.AvroSchemas,
	"protobuf":   gen.Protos,
}

// schemaFormats are the formats `streamgen schema` knows, in help order.
var schemaFormats = []string{"avro", "protobuf", "jsonschema"}

const schemaHelp = `usage: streamgen schema                       print the JSON Schema of the spec format
       streamgen schema <format> [flags] [spec]  print the schemas of the spec's records

Formats: avro (a JSON object of .avsc schemas keyed by schema_name), protobuf (one .proto file with every record's message), jsonschema (a JSON object of draft-07 documents keyed by
schema_name). The output is what the app registers in a schema registry for its topics in that format,
so other teams can generate their own code from the same source of truth. spec defaults to -spec.
`

// runSchema is `streamgen schema`: without a format, the JSON Schema of
// the spec format itself (for editors); with one, the record schemas.
func runSchema(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		stdout.Write(spec.SchemaJSON)
		return ExitOK
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprint(stdout, schemaHelp)
		return ExitOK
	}
	format := args[0]
	known := false
	for _, f := range schemaFormats {
		known = known || f == format
	}
	if !known {
		fmt.Fprintf(stderr, "streamgen schema: unknown format %q, want %s\n", format, strings.Join(schemaFormats, ", "))
		return ExitUsage
	}
	var c commonFlags
	fs := newFlagSet("schema "+format, "Prints the "+format+" schemas of the spec's records.", stderr, stdout, &c)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	switch fs.NArg() {
	case 0:
	case 1:
		c.spec = fs.Arg(0)
	default:
		fmt.Fprintf(stderr, "streamgen schema %s: want one spec, got %q\n", format, fs.Args())
		return ExitUsage
	}
	print := schemaPrinters[format]
	if print == nil {
		fmt.Fprintf(stderr, "streamgen schema: the %s format is not built yet in this version (see docs/formats.md)\n", format)
		return ExitProblem
	}
	prog, code := load(&c, stderr)
	if prog == nil {
		return code
	}
	out, err := print(prog)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen schema %s: %v\n", format, err)
		return ExitProblem
	}
	stdout.Write(out)
	return ExitOK
}
