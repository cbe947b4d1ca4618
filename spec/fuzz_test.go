package spec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics and that every failure is a
// non-empty Diagnostics whose positions point into the file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, c := range errCases {
		f.Add([]byte(c.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		prog, err := Parse("f.yaml", src)
		if err == nil {
			if prog == nil || prog.App == nil || prog.Version != 1 {
				t.Fatalf("no error but program is incomplete: %+v", prog)
			}
			return
		}
		if prog != nil {
			t.Fatalf("program returned with an error")
		}
		var ds Diagnostics
		if !errors.As(err, &ds) {
			t.Fatalf("error is %T, want Diagnostics", err)
		}
		if len(ds) == 0 {
			t.Fatal("empty Diagnostics")
		}
		for _, d := range ds {
			if d.Pos.File != "f.yaml" || d.Pos.Line < 1 || d.Pos.Col < 1 || d.Msg == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
	})
}
