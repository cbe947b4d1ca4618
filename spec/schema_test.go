package spec

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
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

// schema is a decoded JSON Schema node.
type schema = map[string]any

// loadSchema decodes schema.json and returns its $defs.
func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	var root schema
	if err := json.Unmarshal(SchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	defs, ok := root["$defs"].(map[string]any)
	if !ok {
		t.Fatal("schema.json has no $defs")
	}
	return defs
}

// schemaKeys returns the sorted keys a value schema allows in a mapping,
// following $ref and every alternative of oneOf. It fails the test when an
// object alternative admits keys it does not list, since the comparison
// with the parser would then prove nothing.
func schemaKeys(t *testing.T, defs map[string]any, where string, node schema) []string {
	t.Helper()
	if ref, ok := node["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		def, ok := defs[name].(map[string]any)
		if !ok {
			t.Fatalf("%s: unresolved $ref %q", where, ref)
		}
		return schemaKeys(t, defs, where, def)
	}
	seen := map[string]bool{}
	if props, ok := node["properties"].(map[string]any); ok || node["type"] == "object" {
		if node["additionalProperties"] != false {
			t.Errorf("%s: object schema without additionalProperties: false", where)
		}
		for k := range props {
			seen[k] = true
		}
	}
	alts, _ := node["oneOf"].([]any)
	for _, alt := range alts {
		if a, ok := alt.(map[string]any); ok && (a["$ref"] != nil || a["properties"] != nil || a["type"] == "object") {
			for _, k := range schemaKeys(t, defs, where, a) {
				seen[k] = true
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// oneOfRequired lists the single required key of each oneOf alternative of
// node, in order: how the schema says "exactly one of".
func oneOfRequired(t *testing.T, where string, node schema) []string {
	t.Helper()
	var out []string
	alts, _ := node["oneOf"].([]any)
	for _, alt := range alts {
		req, _ := alt.(map[string]any)["required"].([]any)
		if len(req) != 1 {
			t.Fatalf("%s: oneOf alternative %v, want one required key", where, alt)
		}
		out = append(out, req[0].(string))
	}
	return out
}

// TestOpTableMatchesSchema checks the parser's operation table against
// schema.json: the same operations in the same order, and for each the
// same keys (the op's keys, plus name where it may sit in the body).
func TestOpTableMatchesSchema(t *testing.T) {
	defs := loadSchema(t)
	step, _ := defs["step"].(map[string]any)
	props, _ := step["properties"].(map[string]any)
	if props == nil {
		t.Fatal("schema.json has no step properties")
	}
	if got, want := oneOfRequired(t, "step", step), opNames(); !slices.Equal(got, want) {
		t.Errorf("schema step operations (oneOf) = %v, want opTable's %v", got, want)
	}
	for k := range props {
		if k != "name" && k != "doc" && opByName[k] == nil {
			t.Errorf("schema has step %q, which opTable lacks", k)
		}
	}
	for _, d := range opTable {
		op := string(d.op)
		node, ok := props[op].(map[string]any)
		if !ok {
			t.Errorf("schema has no step %q", op)
			continue
		}
		want := slices.Clone(d.keys)
		if d.nameInBody {
			want = append(want, "name")
		}
		sort.Strings(want)
		if got := schemaKeys(t, defs, op, node); !slices.Equal(got, want) {
			t.Errorf("step %q: schema allows keys %v, opTable %v", op, got, want)
		}
		if d.resolve == nil {
			t.Errorf("step %q has no resolver", op)
		}
		if d.example != "" && !strings.HasPrefix(d.example, op+": {") {
			t.Errorf("step %q: example %q is not of this op", op, d.example)
		}
	}
}

// TestWindowKeysMatchSchema checks each window kind's keys against the
// schema, both in the shared window definition and in windowed_by.
func TestWindowKeysMatchSchema(t *testing.T) {
	defs := loadSchema(t)
	windowedBy := defs["step"].(map[string]any)["properties"].(map[string]any)["windowed_by"].(map[string]any)
	for _, where := range []struct {
		name string
		node schema
	}{{"$defs.window", defs["window"].(map[string]any)}, {"windowed_by", windowedBy}} {
		if got := oneOfRequired(t, where.name, where.node); !slices.Equal(got, windowKinds) {
			t.Errorf("%s: window kinds %v, want %v", where.name, got, windowKinds)
		}
		props := where.node["properties"].(map[string]any)
		for _, kind := range windowKinds {
			want := slices.Clone(windowKeys[WindowKind(kind)])
			sort.Strings(want)
			node, _ := props[kind].(map[string]any)
			if got := schemaKeys(t, defs, where.name+"."+kind, node); !slices.Equal(got, want) {
				t.Errorf("%s.%s: schema allows keys %v, parser %v", where.name, kind, got, want)
			}
		}
	}
}
