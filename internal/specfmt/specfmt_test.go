package specfmt

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/spec"
	"go.yaml.in/yaml/v3"
)

// repoSpecs lists every spec file in the repository.
func repoSpecs(t *testing.T) []string {
	t.Helper()
	var all []string
	for _, pattern := range []string{
		"../../examples/*/streamgen.yaml",
		"../../golden/*/streamgen.yaml",
		"../../docs/examples/*/streamgen.yaml",
		"../../conformance/scenarios/*/streamgen.yaml",
		"../../gen/testdata/*/streamgen.yaml",
		"../../bench/serde/streamgen.yaml",
		"../../bench/serde/evolution/*/streamgen.yaml",
		"../../spec/testdata/*.yaml",
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, m...)
	}
	if len(all) < 50 {
		t.Fatalf("found only %d spec files", len(all))
	}
	return all
}

// TestIdempotent: fmt(fmt(x)) == fmt(x) for every spec in the repository.
func TestIdempotent(t *testing.T) {
	for _, p := range repoSpecs(t) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		once, err := Format(src)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		twice, err := Format(once)
		if err != nil {
			t.Errorf("%s: formatting the formatted file: %v", p, err)
			continue
		}
		if d := textdiff.Unified("fmt(x)", "fmt(fmt(x))", string(once), string(twice)); d != "" {
			t.Errorf("%s: not idempotent:\n%s", p, d)
		}
	}
}

// comments lists every comment line of a YAML document, sorted.
func comments(t *testing.T, src []byte) []string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var visit func(n *yaml.Node)
	visit = func(n *yaml.Node) {
		for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
			for _, l := range strings.Split(c, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					out = append(out, l)
				}
			}
		}
		for _, c := range n.Content {
			visit(c)
		}
	}
	visit(&doc)
	slices.Sort(out)
	return out
}

// rawComments counts the comment lines of a file's text, for files whose
// comments the YAML library might drop unseen.
func rawComments(src []byte) int {
	n := 0
	for _, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			n++
		}
	}
	return n
}

// TestCommentsKept: every comment of every spec survives formatting.
func TestCommentsKept(t *testing.T) {
	for _, p := range repoSpecs(t) {
		src, _ := os.ReadFile(p)
		out, err := Format(src)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if a, b := comments(t, src), comments(t, out); !slices.Equal(a, b) {
			t.Errorf("%s: comments changed:\n%s", p, textdiff.Unified("before", "after", strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n"))
		}
		if rawComments(src) != rawComments(out) {
			t.Errorf("%s: %d comment lines before, %d after", p, rawComments(src), rawComments(out))
		}
	}
}

// TestSemanticsUnchanged: the IR of fmt(x) equals the IR of x, positions
// aside, for every spec that parses.
func TestSemanticsUnchanged(t *testing.T) {
	parsed := 0
	for _, p := range repoSpecs(t) {
		src, _ := os.ReadFile(p)
		want, err := spec.Parse("streamgen.yaml", src)
		if err != nil {
			continue // an error case of the goldens
		}
		parsed++
		out, err := Format(src)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		got, err := spec.Parse("streamgen.yaml", out)
		if err != nil {
			t.Errorf("%s: the formatted spec does not parse:\n%v\n%s", p, err, out)
			continue
		}
		if d := irDiff(reflect.ValueOf(want), reflect.ValueOf(got), "Program", map[[2]uintptr]bool{}); d != "" {
			t.Errorf("%s: formatting changed the IR: %s", p, d)
		}
	}
	if parsed < 40 {
		t.Errorf("only %d specs parsed", parsed)
	}
}

var posType = reflect.TypeOf(spec.Pos{})

// irDiff compares two IR values, ignoring every spec.Pos and following
// pointers once (the IR is a graph with shared nodes).
func irDiff(a, b reflect.Value, path string, seen map[[2]uintptr]bool) string {
	if a.Type() == posType {
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil on one side"
			}
			return ""
		}
		k := [2]uintptr{a.Pointer(), b.Pointer()}
		if seen[k] {
			return ""
		}
		seen[k] = true
		return irDiff(a.Elem(), b.Elem(), path, seen)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil on one side"
			}
			return ""
		}
		if a.Elem().Type() != b.Elem().Type() {
			return fmt.Sprintf("%s: %s vs %s", path, a.Elem().Type(), b.Elem().Type())
		}
		return irDiff(a.Elem(), b.Elem(), path, seen)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if d := irDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name, seen); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d vs %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := irDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), seen); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d entries vs %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if d := irDiff(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k), seen); d != "" {
				return d
			}
		}
		return ""
	case reflect.Func:
		return ""
	}
	if a.CanInterface() && !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface())
	}
	return ""
}

// TestLayout shows the canonical layout: schema key order (operation first
// in a step), user-named entries in the author's order, flow style kept,
// a blank line between sections, the file's header comment on top.
func TestLayout(t *testing.T) {
	src := `# head
topology:
  - steps:
      - doc: Keep big ones.
        filter: {expr: "value > 10"}   # inline
      - to: out
    from: in
    name: p
version: 1
app: {id: a}
topics:
  zeta: {value: string, key: string}
  alpha:
    partitions: 2
    value: string
    key: string
`
	want := `# head

version: 1
app: {id: a}

topics:
  zeta: {key: string, value: string}
  alpha:
    key: string
    value: string
    partitions: 2

topology:
  - name: p
    from: in
    steps:
      - filter: {expr: "value > 10"} # inline
        doc: Keep big ones.
      - to: out
`
	got, err := Format([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d := textdiff.Unified("want", "got", want, string(got)); d != "" {
		t.Error(d)
	}
}

func TestLongFlowBecomesBlock(t *testing.T) {
	long := strings.Repeat("x", 100)
	src := "version: 1\napp: {id: a, on_start: [" + long + "]}\n"
	got, err := Format([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := "version: 1\n\napp:\n  id: a\n  on_start: [" + long + "]\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRefusesNonSpecs(t *testing.T) {
	for _, src := range []string{"", "- a\n", "a: [\n", "a: 1\n---\nb: 2\n"} {
		if _, err := Format([]byte(src)); err == nil {
			t.Errorf("Format(%q) accepted it", src)
		}
	}
}

// TestModelineStaysFirst: the yaml-language-server modeline that points an
// editor at `streamgen schema`'s output must stay the file's first line,
// even when the key under it moves.
func TestModelineStaysFirst(t *testing.T) {
	const modeline = "# yaml-language-server: $schema=streamgen.schema.json"
	for _, src := range []string{
		modeline + "\nversion: 1\napp: {id: a}\n",
		modeline + "\napp: {id: a}\nversion: 1\n",
		modeline + "\n\napp: {id: a}\nversion: 1\n",
	} {
		got, err := Format([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(got), modeline+"\n") {
			t.Errorf("Format(%q) =\n%s", src, got)
		}
	}
}
