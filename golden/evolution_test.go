package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/evolve"
	"github.com/streamgen/streamgen/spec"
)

// TestEvolution runs the evolution check (`streamgen check -against`) on
// every golden/evolution/<case>/{old.yaml,new.yaml} and compares the report
// with want.txt (-update rewrites it). Cases named safe-* must report no
// breaking change, every other case at least one unless named warn-*.
func TestEvolution(t *testing.T) {
	dirs, err := filepath.Glob("evolution/*/new.yaml")
	if err != nil || len(dirs) < 10 {
		t.Fatalf("found %d evolution cases: %v", len(dirs), err)
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			parse := func(file string) *spec.Program {
				src, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				prog, err := spec.Parse(file, src)
				if err != nil {
					t.Fatalf("%s does not parse:\n%v", file, err)
				}
				return prog
			}
			r := evolve.Compare(parse("old.yaml"), parse("new.yaml"))
			switch {
			case strings.HasPrefix(name, "safe-") || strings.HasPrefix(name, "warn-"):
				if r.Breaking() {
					t.Errorf("a safe change is reported as breaking:\n%s", r)
				}
				if strings.HasPrefix(name, "safe-") && len(r.Changes) > 0 {
					t.Errorf("a safe change has warnings:\n%s", r)
				}
			default:
				if !r.Breaking() {
					t.Errorf("no breaking change found:\n%s", r)
				}
			}
			compareGolden(t, filepath.Join(dir, "want.txt"), r.String())
		})
	}
}
