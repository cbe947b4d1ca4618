package sgrun

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgapp"
)

// TestStoreMemoryBytesFlag checks --store-memory-bytes: unset is 0 (no
// budget), the environment is its default, the flag wins, and a budget
// below the minimum or an unparsable environment value fails with exit 2
// naming them.
func TestStoreMemoryBytesFlag(t *testing.T) {
	app := &sgapp.App{ID: "demo", Build: countBuild("in", "out")}
	var stderr bytes.Buffer
	unsetMemoryEnv(t)
	f, err := parseRunFlags(app, []string{"--embedded"}, &stderr)
	if err != nil || f.storeMemoryBytes != 0 {
		t.Fatalf("unset: %v, %v", f, err)
	}
	t.Setenv("STREAMGEN_STORE_MEMORY_BYTES", "268435456")
	if f, err = parseRunFlags(app, []string{"--embedded"}, &stderr); err != nil || f.storeMemoryBytes != 256<<20 {
		t.Fatalf("from the environment: %v, %v", f, err)
	}
	if f, err = parseRunFlags(app, []string{"--embedded", "--store-memory-bytes", "1073741824"}, &stderr); err != nil || f.storeMemoryBytes != 1<<30 {
		t.Fatalf("flag over the environment: %v, %v", f, err)
	}
	for _, c := range []struct{ env, arg, want string }{
		{"", "1048576", "--store-memory-bytes 1048576: streamgen: state store memory budget 1048576 bytes is below the minimum of 33554432 (32 MiB) (0 for no budget)"},
		{"", "-1", "--store-memory-bytes -1"},
		{"lots", "", "STREAMGEN_STORE_MEMORY_BYTES"},
	} {
		unsetMemoryEnv(t)
		if c.env != "" {
			t.Setenv("STREAMGEN_STORE_MEMORY_BYTES", c.env)
		}
		args := []string{"--embedded"}
		if c.arg != "" {
			args = append(args, "--store-memory-bytes", c.arg)
		}
		var stdout, stderr bytes.Buffer
		code := RunContext(context.Background(), app, args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v (env %q): exit %d, stderr %q, want exit 2 and %q", args, c.env, code, stderr.String(), c.want)
		}
	}
}

// unsetMemoryEnv unsets STREAMGEN_STORE_MEMORY_BYTES until the test ends.
func unsetMemoryEnv(t *testing.T) {
	t.Setenv("STREAMGEN_STORE_MEMORY_BYTES", "") // restores it afterwards
	os.Unsetenv("STREAMGEN_STORE_MEMORY_BYTES")
}
