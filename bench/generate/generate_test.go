// Package generate compares, on examples/ordercounts, what a user waits for
// at every edit: `go generate` (streamgen's type check included) against
// `go build` of the same package. The target is a ratio of at most 1.
//
//	go test ./bench/generate -run '^$' -bench . -benchtime 5x
//
// Each benchmark reports generate-s/op, build-s/op and their ratio
// generate/build. It is a benchmark, not a test: nothing here fails on time.
package generate

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// source is the example the issue measured.
const source = "../../examples/ordercounts"

// copyExample copies the example's files into a fresh directory inside the
// module (the generated code imports the runtime from it), named with a
// leading underscore so that ./... patterns skip it.
func copyExample(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp(".", "_ordercounts")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	entries, err := os.ReadDir(source)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		src, err := os.ReadFile(filepath.Join(source, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), src, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// goCmd runs the go command in dir and returns how long it took.
func goCmd(b *testing.B, dir string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go %v in %s: %v\n%s", args, dir, err, out)
	}
	return time.Since(start)
}

// measure runs edit (if any), then `go generate`, then `go build`, b.N
// times after one warm-up round, and reports the two and their ratio.
func measure(b *testing.B, edit func(dir string, i int)) {
	dir := copyExample(b)
	bin := filepath.Join(b.TempDir(), "ordercounts")
	goCmd(b, dir, "generate")
	goCmd(b, dir, "build", "-o", bin, ".")
	b.ResetTimer()
	var generate, build time.Duration
	for i := 0; i < b.N; i++ {
		if edit != nil {
			edit(dir, i)
		}
		generate += goCmd(b, dir, "generate")
		build += goCmd(b, dir, "build", "-o", bin, ".")
	}
	n := float64(b.N)
	b.ReportMetric(generate.Seconds()/n, "generate-s/op")
	b.ReportMetric(build.Seconds()/n, "build-s/op")
	b.ReportMetric(generate.Seconds()/build.Seconds(), "generate/build")
}

// BenchmarkWarm is the edit-free loop: generate answers from its cache.
func BenchmarkWarm(b *testing.B) { measure(b, nil) }

// BenchmarkEditedFunction edits the user's function file before each round
// (a comment that changes its content hash), so the check runs again on
// the fast path and the build recompiles the package.
func BenchmarkEditedFunction(b *testing.B) {
	measure(b, func(dir string, i int) {
		f, err := os.OpenFile(filepath.Join(dir, "ordercounts.go"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("// edit " + time.Now().String() + "\n"); err != nil {
			b.Fatal(err)
		}
	})
}
