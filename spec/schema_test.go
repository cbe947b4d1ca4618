package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		t.Fatalf("schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("compile schema.json: %v", err)
	}
	return sch
}

// yamlToJSON converts a YAML document to the value the validator expects.
func yamlToJSON(src []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// moduleRoot walks up from the package directory to go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the spec package")
		}
		dir = parent
	}
}

// specFiles lists the spec files the schema must accept: every *.yaml under
// examples/, golden/, conformance/ and docs/ (except failing cases, whose
// directory holds stderr.txt) plus spec/testdata.
func specFiles(t *testing.T) []string {
	root := moduleRoot(t)
	var files []string
	for _, dir := range []string{"examples", "golden", "conformance", "docs", "spec/testdata"} {
		base := filepath.Join(root, dir)
		if _, err := os.Stat(base); err != nil {
			continue
		}
		err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return nil
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), "stderr.txt")); err == nil {
				return nil
			}
			files = append(files, path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func TestSchemaAcceptsSpecs(t *testing.T) {
	sch := compileSchema(t)
	files := specFiles(t)
	testdata := 0
	for _, f := range files {
		if strings.Contains(filepath.ToSlash(f), "spec/testdata/") {
			testdata++
		}
	}
	if testdata == 0 {
		t.Fatal("no spec files found in spec/testdata")
	}
	root := moduleRoot(t)
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := yamlToJSON(src)
			if err != nil {
				t.Fatalf("not YAML: %v", err)
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("schema rejects %s:\n%v", rel, err)
			}
		})
	}
}

func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	base := "version: 1\napp: {id: a}\ntopics: {in: {key: string, value: string}}\ntopology:\n  - name: p\n    from: in\n    steps:\n"
	for name, src := range map[string]string{
		"unknown top-level key": "version: 1\napp: {id: a}\ntopology: []\nextra: 1\n",
		"wrong version":         "version: 2\napp: {id: a}\ntopology: [{name: p, from: in, steps: [{to: out}]}]\n",
		"two ops in a step":     base + "      - {filter: {fn: F}, map_values: {fn: G}}\n",
		"no op in a step":       base + "      - {name: x}\n",
		"fn and expr":           base + "      - filter: {fn: F, expr: \"true\"}\n",
		"bad duration":          base + "      - windowed_by: {tumbling: {size: five}}\n",
		"unknown op key":        base + "      - filter: {fn: F, store: s}\n",
		"bad pipeline name":     "version: 1\napp: {id: a}\ntopology: [{name: \"a b\", from: in, steps: [{to: out}]}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			v, err := yamlToJSON([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(v); err == nil {
				t.Errorf("schema accepts:\n%s", src)
			}
		})
	}
}

// TestSchemaMatchesParser checks that the step operations the parser knows
// are exactly those the schema describes.
func TestSchemaMatchesParser(t *testing.T) {
	var s struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON, &s); err != nil {
		t.Fatal(err)
	}
	props := s.Defs["step"].Properties
	for _, op := range stepOps {
		if _, ok := props[op]; !ok {
			t.Errorf("schema has no step %q", op)
		}
	}
	if got, want := len(props), len(stepOps)+2; got != want {
		t.Errorf("schema step has %d properties, want %d (ops + name + doc): %v", got, want, fmt.Sprint(len(props)))
	}
}
