package evolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/spec"
)

func prim(k spec.TypeKind) *spec.Type { return &spec.Type{Kind: k} }

// TestReadable pins which scalar changes the serdes read old bytes with
// (see serdes/read.go): integers into any integer type whose range holds
// them, integers and floats into floats, str and bin both ways.
func TestReadable(t *testing.T) {
	for _, c := range []struct {
		w, r  spec.TypeKind
		ok    bool
		lossy bool
	}{
		{spec.KindInt32, spec.KindInt64, true, false},
		{spec.KindInt64, spec.KindInt32, false, false},
		{spec.KindUint32, spec.KindInt64, true, false},
		{spec.KindUint64, spec.KindInt64, false, false},
		{spec.KindInt32, spec.KindUint32, false, false},
		{spec.KindUint32, spec.KindUint64, true, false},
		{spec.KindInt64, spec.KindTimestamp, true, false},
		{spec.KindTimestamp, spec.KindDuration, true, false},
		{spec.KindEnum, spec.KindInt32, true, false},
		{spec.KindInt64, spec.KindEnum, false, false},
		{spec.KindInt64, spec.KindFloat64, true, false},
		{spec.KindFloat32, spec.KindFloat64, true, false},
		{spec.KindFloat64, spec.KindFloat32, true, true},
		{spec.KindFloat64, spec.KindInt64, false, false},
		{spec.KindString, spec.KindBytes, true, false},
		{spec.KindBytes, spec.KindString, true, false},
		{spec.KindBool, spec.KindInt32, false, false},
		{spec.KindString, spec.KindInt64, false, false},
	} {
		ok, lossy := readable(prim(c.w), prim(c.r))
		if ok != c.ok || (lossy != "") != c.lossy {
			t.Errorf("%s → %s: ok=%v lossy=%q, want ok=%v lossy=%v", c.w, c.r, ok, lossy, c.ok, c.lossy)
		}
	}
}

func parse(t *testing.T, name, src string) *spec.Program {
	t.Helper()
	p, err := spec.Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const base = `version: 1
package: p
app: {id: a}
records:
  K:
    fields:
      id: {id: 1, type: string}
  V:
    fields:
      n: {id: 1, type: int32}
      s: {id: 2, type: "optional<string>"}
topics:
  in: {key: K, value: V}
  out: {key: K, value: int64}
topology:
  - name: c
    from: in
    steps:
      - group_by_key:
      - count: {store: counts}
      - to_stream:
      - to: out
`

// TestKeysAreStrict: a key record may not even gain an optional field (its
// bytes, and so its partition and store slot, would change), while a value
// record may.
func TestKeysAreStrict(t *testing.T) {
	old := parse(t, "old.yaml", base)
	keyed := parse(t, "new.yaml", strings.Replace(base, "      id: {id: 1, type: string}\n", "      id: {id: 1, type: string}\n      region: {id: 2, type: \"optional<string>\"}\n", 1))
	r := Compare(old, keyed)
	if !r.Breaking() || !strings.Contains(r.String(), `store "counts": key type K changes its fields`) {
		t.Errorf("key record change not reported:\n%s", r)
	}
	valued := parse(t, "new.yaml", strings.Replace(base, "      s: {id: 2, type: \"optional<string>\"}\n", "      s: {id: 2, type: \"optional<string>\"}\n      t: {id: 3, type: \"optional<string>\"}\n", 1))
	if r := Compare(old, valued); len(r.Changes) != 0 {
		t.Errorf("adding an optional value field reported:\n%s", r)
	}
	optional := parse(t, "new.yaml", strings.Replace(base, `n: {id: 1, type: int32}`, `n: {id: 1, type: "optional<int64>"}`, 1))
	if r := Compare(old, optional); r.Breaking() {
		t.Errorf("int32 → optional<int64> reported as breaking:\n%s", r)
	}
}

func TestSameSpecReportsNothing(t *testing.T) {
	p := parse(t, "s.yaml", base)
	if r := Compare(p, parse(t, "s.yaml", base)); len(r.Changes) != 0 || r.String() != "no breaking changes\n" {
		t.Errorf("identical specs: %s", r)
	}
}

// TestRepoSpecsAgainstThemselves: every spec of the repository compared
// with itself, and with a copy whose positions all moved, reports nothing
// — no rename is made up from a node order or a position.
func TestRepoSpecsAgainstThemselves(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../examples/*/streamgen.yaml", "../../golden/*/streamgen.yaml",
		"../../docs/examples/*/streamgen.yaml", "../../conformance/scenarios/*/streamgen.yaml"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		old, err := spec.Parse("old.yaml", src)
		if err != nil {
			continue // an error case
		}
		n++
		moved, err := spec.Parse("new.yaml", append([]byte("# moved\n\n"), src...))
		if err != nil {
			t.Fatal(err)
		}
		if r := Compare(old, moved); len(r.Changes) != 0 {
			t.Errorf("%s against itself:\n%s", f, r)
		}
	}
	if n < 40 {
		t.Errorf("only %d specs compared", n)
	}
}

func TestKeepName(t *testing.T) {
	for _, c := range []struct {
		old, new string
		derived  bool
		want     string
	}{
		{"fk-subscriptions", "fk2-subscriptions", true, `"fk" (the step name that makes "fk-subscriptions")`},
		{"fk-subscription-registration", "fk2-subscription-registration", true, `"fk" (the step name that makes "fk-subscription-registration")`},
		{"orders-by-user", "orders-per-user", false, `"orders-by-user"`},
		{"a-store", "b-store", false, `"a-store"`},
		{"a-store", "b-store", true, `"a" (the step name that makes "a-store")`},
	} {
		if got := keepName(c.old, c.new, c.derived); got != c.want {
			t.Errorf("keepName(%q, %q) = %s, want %s", c.old, c.new, got, c.want)
		}
	}
}
