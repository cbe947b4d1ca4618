package serde

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/spec"
)

var update = flag.Bool("update", false, "regenerate the committed streamgen_records.go files")

// TestGeneratedUpToDate regenerates every committed generated file of this
// benchmark (the benchmark record and both evolution schemas) with the
// generator of this module and fails if any differs, so the benchmark can
// never measure stale code.
func TestGeneratedUpToDate(t *testing.T) {
	for _, dir := range []string{".", "evolution/v1", "evolution/v2"} {
		prog, err := spec.ParseFile(filepath.Join(dir, "streamgen.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		files, err := gen.Generate(prog, gen.Config{OmitVersionMarkers: true, OmitTests: true, SpecPath: "streamgen.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		const name = "streamgen_records.go"
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, files[name], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(files[name])); diff != "" {
			t.Errorf("%s is stale; run go test ./bench/serde -run TestGeneratedUpToDate -update (-want +got):\n%s", path, diff)
		}
	}
}
