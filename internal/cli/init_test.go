package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitRefuses: init writes nothing and says why for a non-empty
// directory, a bad module path, a -replace that is not a streamgen
// checkout, and a development build without -version or -replace.
func TestInitRefuses(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"init", "-replace", "../..", full}, ExitUsage, "is not empty"},
		{[]string{"init", "-module", "Example.com/X", "-version", "v1.0.0", t.TempDir()}, ExitUsage, "is not a module path"},
		{[]string{"init", "-replace", t.TempDir(), t.TempDir()}, ExitUsage, "-replace"},
		{[]string{"init", t.TempDir()}, ExitUsage, "no release version"},
	} {
		var out, errb bytes.Buffer
		if code := Run(c.args, nil, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.msg) {
			t.Errorf("streamgen %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errb.String(), c.code, c.msg)
		}
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("the refused init wrote into %s: %v", full, entries)
	}
}

// TestInitWrites: with -version, go.mod requires that version, pins the
// generator as a tool and has no replace directive; the generated code is
// there; a second init (even with -force) overwrites nothing.
func TestInitWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop-orders")
	var out, errb bytes.Buffer
	if code := Run([]string{"init", "-version", "v1.2.3", dir}, nil, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"module example.com/shop-orders\n", "require github.com/streamgen/streamgen v1.2.3\n", "tool github.com/streamgen/streamgen/cmd/streamgen\n"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
	if strings.Contains(string(mod), "replace") {
		t.Errorf("go.mod has a replace directive without -replace:\n%s", mod)
	}
	for _, name := range []string{"streamgen_topology.go", "streamgen.schema.json", "deploy/kubernetes.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("init did not write %s: %v", name, err)
		}
	}
	if code := Run([]string{"init", "-force", "-version", "v1.2.3", dir}, nil, &out, &errb); code != ExitProblem || !strings.Contains(errb.String(), "exists") {
		t.Errorf("a second init -force: exit %d, %q; want exit %d naming a file that exists", code, errb.String(), ExitProblem)
	}
}
