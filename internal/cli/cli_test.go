package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const demoSpec = `version: 1
package: demo
app: {id: demo-app}
topics:
  in: {key: string, value: string}
  out: {key: string, value: string}
topology:
  - name: p
    from: in
    steps:
      - filter: {expr: 'value != ""'}
      - to: out
`

func run(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errOut bytes.Buffer
	code := Run(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeSpec(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "streamgen.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGenerateCheckAndStaleFiles(t *testing.T) {
	dir := writeSpec(t, demoSpec)
	if code, _, stderr := run(t, dir, "generate", "-typecheck=false"); code != ExitOK {
		t.Fatalf("generate: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"streamgen_records.go", "streamgen_topology.go", "streamgen_driver.go"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s not written: %v", f, err)
		}
		if !bytes.HasPrefix(b, generatedHeader) {
			t.Errorf("%s lacks the generated header", f)
		}
	}
	if code, out, stderr := run(t, dir, "check", "-typecheck=false"); code != ExitOK || out != "" {
		t.Fatalf("check on fresh files: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	// Editing the spec without regenerating makes check fail with a diff
	// and the command to run.
	edited := strings.Replace(demoSpec, `value != ""`, `len(value) > 3`, 1)
	os.WriteFile(filepath.Join(dir, "streamgen.yaml"), []byte(edited), 0o644)
	code, out, stderr := run(t, dir, "check", "-typecheck=false")
	if code != ExitProblem {
		t.Fatalf("check on stale files: exit %d, want %d", code, ExitProblem)
	}
	if !strings.Contains(out, "-\t\treturn value != \"\"") || !strings.Contains(out, "+\t\treturn len(value) > 3") {
		t.Errorf("check diff does not show the change:\n%s", out)
	}
	if !strings.Contains(stderr, "run `go generate`") {
		t.Errorf("check does not say what to run: %q", stderr)
	}

	// A generated file the new output no longer produces is removed by
	// generate and reported by check; hand-written files are never touched.
	stale := filepath.Join(dir, "streamgen_old.go")
	os.WriteFile(stale, append(append([]byte{}, generatedHeader...), "\n\npackage demo\n"...), 0o644)
	mine := filepath.Join(dir, "mine.go")
	os.WriteFile(mine, []byte("package demo\n"), 0o644)
	if code, out, _ := run(t, dir, "check", "-typecheck=false"); code != ExitProblem || !strings.Contains(out, "streamgen_old.go") {
		t.Errorf("check does not report the stale generated file: exit %d\n%s", code, out)
	}
	if code, _, stderr := run(t, dir, "generate", "-typecheck=false"); code != ExitOK {
		t.Fatalf("generate: %s", stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("stale generated file survived generate")
	}
	if _, err := os.Stat(mine); err != nil {
		t.Error("generate removed a hand-written file")
	}
}

func TestInvalidSpecWritesNothing(t *testing.T) {
	dir := writeSpec(t, strings.Replace(demoSpec, "version: 1", "version: 2", 1))
	code, _, stderr := run(t, dir, "generate", "-typecheck=false")
	if code != ExitProblem {
		t.Fatalf("exit %d, want %d", code, ExitProblem)
	}
	if !strings.HasPrefix(stderr, "streamgen.yaml:1:10: ") {
		t.Errorf("diagnostic without position: %q", stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("generate wrote files despite errors: %v", entries)
	}
}

func TestDescribe(t *testing.T) {
	dir := writeSpec(t, demoSpec)
	code, out, _ := run(t, dir, "describe")
	want := "Topologies:\n   Sub-topology: 0\n    Source: in (topics: [in])\n"
	if code != ExitOK || !strings.HasPrefix(out, want) || !strings.Contains(out, "Sink: p (topic: out)") {
		t.Errorf("describe: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, dir, "describe", "-format", "mermaid")
	if code != ExitOK || !strings.HasPrefix(out, "flowchart TD\n") || !strings.Contains(out, `t_in(["in"])`) {
		t.Errorf("describe mermaid: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, dir, "describe", "--format", "dot")
	if code != ExitOK || !strings.HasPrefix(out, "digraph topology {\n") || !strings.Contains(out, `t_in -> n_in;`) {
		t.Errorf("describe dot: exit %d\n%s", code, out)
	}
	if code, _, _ := run(t, dir, "describe", "-format", "png"); code != ExitUsage {
		t.Errorf("unknown format: exit %d, want %d", code, ExitUsage)
	}
	// Node names the runtime would refuse are a spec problem, at the line.
	head, _, _ := strings.Cut(demoSpec, "  - name: p\n")
	dir = writeSpec(t, head+`  - name: r-repartition-source
    from: in
    steps:
      - filter: {expr: "true"}
  - name: q
    from: in
    steps:
      - repartition: {name: r}
      - to: out
`)
	if code, _, stderr := run(t, dir, "describe"); code != ExitProblem || !strings.Contains(stderr, `streamgen.yaml:15:9: topology node name "r-repartition-source"`) {
		t.Errorf("colliding node names: exit %d, want %d\n%s", code, ExitProblem, stderr)
	}
}

func TestUsageAndSchema(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := run(t, dir); code != ExitUsage || !strings.Contains(stderr, "Usage:") {
		t.Errorf("no args: exit %d %q", code, stderr)
	}
	if code, _, stderr := run(t, dir, "frobnicate"); code != ExitUsage || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d %q", code, stderr)
	}
	if code, out, _ := run(t, dir, "help"); code != ExitOK || !strings.Contains(out, "Exit codes:") {
		t.Errorf("help: exit %d", code)
	}
	if code, out, _ := run(t, dir, "generate", "-h"); code != ExitOK || !strings.Contains(out, "-spec") {
		t.Errorf("generate -h: exit %d %q", code, out)
	}
	if code, _, _ := run(t, dir, "generate", "extra"); code != ExitUsage {
		t.Errorf("extra argument: exit %d", code)
	}
	if code, _, stderr := run(t, dir, "generate"); code != ExitIO || !strings.Contains(stderr, "streamgen.yaml") {
		t.Errorf("missing spec: exit %d %q", code, stderr)
	}
	if code, out, _ := run(t, dir, "schema"); code != ExitOK || !strings.Contains(out, `"$schema"`) {
		t.Errorf("schema: exit %d", code)
	}
}

func TestSafeJoinRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../x.go", "/etc/passwd", "a/../../x.go"} {
		if _, err := safeJoin("out", name); err == nil {
			t.Errorf("safeJoin accepted %q", name)
		}
	}
	if p, err := safeJoin("out", "sub/x.go"); err != nil || p != filepath.Join("out", "sub", "x.go") {
		t.Errorf("safeJoin(sub/x.go) = %q, %v", p, err)
	}
}
