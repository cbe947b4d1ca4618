package golden_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/spec"
)

// schemaGoldens are the committed outputs of `streamgen schema <format>`:
// the spec they come from and the generator function behind the command.
var schemaGoldens = []struct {
	spec, out string
	print     func(*spec.Program) ([]byte, error)
}{
	{"jsonschema/streamgen.yaml", "jsonschema/schema.jsonschema.json", gen.JSONSchemas},
	{"avro/streamgen.yaml", "avro/schema.avsc.json", gen.AvroSchemas},
	{"protobuf/streamgen.yaml", "protobuf/schema.proto", gen.Protos},
}

// TestSchemaGolden checks `streamgen schema` output against the committed
// files (-update rewrites them), so a change to a record schema other
// teams generate code from shows in review.
func TestSchemaGolden(t *testing.T) {
	for _, g := range schemaGoldens {
		src, err := os.ReadFile(g.spec)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := spec.Parse(filepath.Base(g.spec), src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.print(prog)
		if err != nil {
			t.Fatalf("%s: %v", g.spec, err)
		}
		if *update {
			if err := os.WriteFile(g.out, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, _ := os.ReadFile(g.out)
		if d := textdiff.Unified(g.out, g.out+" (regenerated)", string(want), string(got)); d != "" {
			t.Errorf("%s is stale; run %s\n%s", g.out, fixCmd, d)
		}
	}
}
