package specfmt

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFormat: whatever Format accepts, it formats to a fixed point.
func FuzzFormat(f *testing.F) {
	for _, pattern := range []string{"../../examples/*/streamgen.yaml", "../../spec/testdata/*.yaml"} {
		m, _ := filepath.Glob(pattern)
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("version: 1 # v\napp: {id: a} # x\n# foot\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		once, err := Format(src)
		if err != nil {
			return
		}
		twice, err := Format(once)
		if err != nil {
			t.Fatalf("formatted output does not format: %v\n%s", err, once)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent:\n--- once\n%s\n--- twice\n%s", once, twice)
		}
	})
}
