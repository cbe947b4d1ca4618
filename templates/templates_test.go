package templates

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/format"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/spec"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the templates")

// goldenData is what the golden files are rendered with.
var goldenData = Data{Module: "example.com/myorders", Name: "myorders", Version: "v0.0.0-00010101000000-000000000000", Replace: "../streamgen"}

// TestGolden keeps the rendered project equal to testdata/golden, so a
// change to a template shows as a diff of the files a user gets.
func TestGolden(t *testing.T) {
	files, err := Render(goldenData)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "golden")
	if *update {
		os.RemoveAll(dir)
		for name, b := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	seen := 0
	err = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		seen++
		got, ok := files[rel]
		if !ok {
			t.Errorf("%s is in testdata/golden but no template renders it", rel)
		} else if d := textdiff.Unified(p, rel+" (rendered)", string(want), string(got)); d != "" {
			t.Errorf("%s differs from its golden file (go test ./templates -update rewrites them):\n%s", rel, d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(files) {
		t.Errorf("the templates render %d files, testdata/golden has %d (go test ./templates -update)", len(files), seen)
	}
}

// TestRenderedFilesParse: the spec is a valid spec, the Go files are
// gofmt-formatted, the manifests are YAML and the dashboard is JSON.
func TestRenderedFilesParse(t *testing.T) {
	files, err := Render(goldenData)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b := files[name]
		switch {
		case name == "streamgen.yaml":
			if _, err := spec.Parse(name, b); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case strings.HasSuffix(name, ".go"):
			if f, err := format.Source(b); err != nil {
				t.Errorf("%s: %v", name, err)
			} else if !bytes.Equal(f, b) {
				t.Errorf("%s is not gofmt-formatted", name)
			}
		case strings.HasSuffix(name, ".yaml"):
			if docs := yamlDocs(t, name, b); len(docs) == 0 {
				t.Errorf("%s holds no YAML document", name)
			}
		case strings.HasSuffix(name, ".json"):
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// yamlDocs decodes every document of a multi-document YAML file.
func yamlDocs(t *testing.T, name string, b []byte) []map[string]any {
	t.Helper()
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err == io.EOF {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, doc)
	}
}
