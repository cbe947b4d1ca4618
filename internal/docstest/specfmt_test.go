package docstest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/specfmt"
	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/templates"
)

// TestSpecsFormatted keeps every streamgen.yaml of the repository, and the
// starter spec of `streamgen init`, in `streamgen fmt`'s layout, so that
// running the formatter on a copied example changes nothing.
//
// The diagnostic cases golden/err-* are formatted too (only their lines
// and columns moved when they were); scripts/test.sh runs
// `streamgen fmt -d` over the same set.
func TestSpecsFormatted(t *testing.T) {
	var specs []string
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			switch e.Name() {
			case ".git", "node_modules", "target":
				return filepath.SkipDir
			}
			return nil
		}
		if e.Name() == "streamgen.yaml" {
			specs = append(specs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) < 50 {
		t.Fatalf("found %d specs; the walk is broken", len(specs))
	}
	for _, p := range specs {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkFormatted(t, strings.TrimPrefix(filepath.ToSlash(p), root+"/"), src)
	}
	files, err := templates.Render(templates.Data{Module: "example.com/x", Name: "x", Version: "v0.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	checkFormatted(t, "templates/project/streamgen.yaml.tmpl", files["streamgen.yaml"])
}

func checkFormatted(t *testing.T, name string, src []byte) {
	t.Helper()
	got, err := specfmt.Format(src)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if !bytes.Equal(got, src) {
		t.Errorf("%s is not formatted; run streamgen fmt -w %s:\n%s", name, name, textdiff.Unified(name, name+" (formatted)", string(src), string(got)))
	}
}
