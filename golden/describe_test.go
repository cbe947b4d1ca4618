package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/spec"
)

// describeExts maps each describe format to the extension of its golden.
var describeExts = map[string]string{"text": "txt", "mermaid": "mmd", "dot": "dot"}

// TestDescribe keeps golden/describe/<example>.{txt,mmd,dot} equal to what
// `streamgen describe` prints for every example. -update rewrites the
// goldens. golden/runtimedescribe pins what it prints to the runtime.
func TestDescribe(t *testing.T) {
	specs, err := filepath.Glob("../examples/*/streamgen.yaml")
	if err != nil || len(specs) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, p := range specs {
		name := filepath.Base(filepath.Dir(p))
		t.Run(name, func(t *testing.T) {
			prog, err := spec.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for format, ext := range describeExts {
				got, err := gen.Describe(prog, format)
				if err != nil {
					t.Fatal(err)
				}
				compareGolden(t, filepath.Join("describe", name+"."+ext), got)
			}
		})
	}
}

// compareGolden compares got with the golden file at path, or writes it
// under -update.
func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./golden -run %s -update`)", err, t.Name())
	}
	if d := textdiff.Unified(path, path+" (got)", string(want), got); d != "" {
		t.Errorf("%s is stale (run `go test ./golden -run %s -update`):\n%s", path, strings.SplitN(t.Name(), "/", 2)[0], d)
	}
}

// TestExampleReadmes keeps the ```mermaid block of every
// examples/<name>/README.md equal to `streamgen describe -format mermaid`
// of that example; -update rewrites the block in place.
func TestExampleReadmes(t *testing.T) {
	specs, err := filepath.Glob("../examples/*/streamgen.yaml")
	if err != nil || len(specs) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, p := range specs {
		dir := filepath.Dir(p)
		readme := filepath.Join(dir, "README.md")
		t.Run(filepath.Base(dir), func(t *testing.T) {
			prog, err := spec.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			want, err := gen.Describe(prog, "mermaid")
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(readme)
			if err != nil {
				t.Fatalf("every example needs a README.md with its picture: %v", err)
			}
			const open, close = "```mermaid\n", "\n```"
			s := string(b)
			i := strings.Index(s, open)
			if i < 0 {
				t.Fatalf("%s has no ```mermaid block", readme)
			}
			j := strings.Index(s[i+len(open)-1:], close)
			if j < 0 {
				t.Fatalf("%s: the ```mermaid block is not closed", readme)
			}
			start, end := i+len(open), i+len(open)-1+j+1
			got := s[start:end]
			if got == want {
				return
			}
			if *update {
				if err := os.WriteFile(readme, []byte(s[:start]+want+s[end:]), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			t.Errorf("%s: the mermaid picture is stale (run `go test ./golden -run TestExampleReadmes -update`):\n%s", readme, textdiff.Unified("README.md", "describe -format mermaid", got, want))
		})
	}
}
