package typecheck

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/spec"
)

// generate runs the generator on the spec in dir, as `streamgen generate`
// does from inside it.
func generate(t *testing.T, dir string) (map[string][]byte, *gen.Checks) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, "streamgen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := spec.Parse("streamgen.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	files, checks, err := gen.GenerateChecked(prog, gen.Config{SpecPath: "streamgen.yaml", OmitTests: true})
	if err != nil {
		t.Fatal(err)
	}
	return files, checks
}

var goldenTags = []string{"-tags=goldenfail"}

// The fast path must decide the repository's cases by itself and say
// exactly what the full load says, diagnostics and all.
func TestFastPathAgreesWithFullLoad(t *testing.T) {
	for _, dir := range []string{"../../golden/err-wrong-signature", "../../golden/err-expression-types", "../../examples/ordercounts"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			abs, _ := filepath.Abs(dir)
			files, checks := generate(t, dir)
			in, err := readInputs(abs, files, checks, goldenTags)
			if err != nil {
				t.Fatal(err)
			}
			fast, err := fastCheck(in, &cache{})
			if err != nil {
				t.Fatalf("fast path: %v", err)
			}
			full, err := fullCheck(in)
			if err != nil {
				t.Fatalf("full load: %v", err)
			}
			got, want := report(in, fast), report(in, full)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("fast path reports\n%v\nfull load reports\n%v", got.err(), want.err())
			}
			if strings.HasPrefix(filepath.Base(dir), "err-") && len(got) == 0 {
				t.Fatalf("no diagnostics for %s", dir)
			}
		})
	}
}

// A second check of the same inputs is answered from the cache, with the
// same diagnostics; changing a user file misses it.
func TestCacheAnswersSameInputs(t *testing.T) {
	dir := "../../golden/err-wrong-signature"
	files, checks := generate(t, dir)
	opt := Options{BuildFlags: goldenTags, CacheDir: t.TempDir()}
	first := Check(dir, files, checks, opt)
	if first == nil {
		t.Fatal("no diagnostics")
	}
	results := filepath.Join(opt.CacheDir, "typecheck", "results")
	entries, err := os.ReadDir(results)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one cached result in %s, have %d (%v)", results, len(entries), err)
	}
	// Replace the cached answer: a hit must return it verbatim.
	fake := `[{"Pos":{"File":"streamgen.yaml","Line":1,"Col":1},"Msg":"from the cache"}]`
	if err := os.WriteFile(filepath.Join(results, entries[0].Name()), []byte(fake), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, files, checks, opt); err == nil || err.Error() != "streamgen.yaml:1:1: from the cache" {
		t.Fatalf("second check did not come from the cache: %v", err)
	}
	abs, _ := filepath.Abs(dir)
	in, err := readInputs(abs, files, checks, goldenTags)
	if err != nil {
		t.Fatal(err)
	}
	c := openCache(opt)
	before := c.resultKey(in)
	for i := range in.files {
		if in.files[i].user {
			in.files[i].src = append(in.files[i].src, "\n// edited\n"...)
		}
	}
	in.depsKey = ""
	if after := c.resultKey(in); after == before || after == "" {
		t.Fatalf("editing a user file kept the key %q", before)
	}
}

// A package the fast path cannot check alone (here an import without
// export data) is left to the full load, which still reports the
// user-function diagnostics.
func TestUndecidedFallsBackToFullLoad(t *testing.T) {
	dir := filepath.Join("testdata", "missingimport")
	files, checks := generate(t, dir)
	abs, _ := filepath.Abs(dir)
	in, err := readInputs(abs, files, checks, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fastCheck(in, &cache{}); !errors.Is(err, errUndecided) {
		t.Fatalf("fast path on a missing import: %v, want errUndecided", err)
	}
	err = Check(dir, files, checks, Options{NoCache: true})
	want := `streamgen.yaml:13:22: predicate of node "keep.filter1": function "Missing" is not defined in package missingimport; want func(key string, value string) bool`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestBuildTags(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"-tags=a,b"}, []string{"a", "b"}},
		{[]string{"--tags", "a b"}, []string{"a", "b"}},
		{[]string{"-race", "-tags=x"}, []string{"x"}},
		{[]string{"tags=x"}, nil},
	} {
		if got := buildTags(tc.flags); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("buildTags(%q) = %q, want %q", tc.flags, got, tc.want)
		}
	}
}
