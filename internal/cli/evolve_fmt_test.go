package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const countSpec = `version: 1
package: demo
app: {id: demo-app}
topics:
  in: {key: string, value: string}
  out: {key: string, value: int64}
topology:
  - name: c
    from: in
    steps:
      - group_by_key:
      - count: {store: counts}
      - to_stream:
      - to: out
`

func TestCheckAgainstFile(t *testing.T) {
	dir := writeSpec(t, strings.Replace(countSpec, "store: counts", "store: counts-v2", 1))
	if err := os.WriteFile(filepath.Join(dir, "old.yaml"), []byte(countSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, dir, "check", "-against", "old.yaml")
	if code != ExitProblem || !strings.Contains(out, `streamgen.yaml:12:24: breaking: store "counts" is renamed to "counts-v2"`) || !strings.HasSuffix(out, "1 breaking change\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	code, out, _ = run(t, dir, "check", "--against", "streamgen.yaml")
	if code != ExitOK || out != "no breaking changes\n" {
		t.Errorf("against itself: exit %d\n%s", code, out)
	}
	if code, _, stderr := run(t, dir, "check", "-against", "no-such-file-or-revision"); code != ExitIO || !strings.Contains(stderr, "neither a file nor a git revision") {
		t.Errorf("missing: exit %d %q", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, dir, "check", "-against", "bad.yaml"); code != ExitProblem || !strings.Contains(stderr, "the old spec bad.yaml does not parse") {
		t.Errorf("bad old spec: exit %d %q", code, stderr)
	}
}

func TestCheckAgainstGitRevision(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is needed for check -against <revision>: %v", err)
		}
		t.Skip("no git")
	}
	dir := writeSpec(t, countSpec)
	sub := filepath.Join(dir, "app")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "streamgen.yaml"), filepath.Join(sub, "streamgen.yaml")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "v1")
	newSpec := strings.NewReplacer("in: {key: string, value: string}", "in: {key: int64, value: string}",
		"out: {key: string,", "out: {key: int64,").Replace(countSpec)
	if err := os.WriteFile(filepath.Join(sub, "streamgen.yaml"), []byte(newSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, dir, "check", "-spec", "app/streamgen.yaml", "-against", "HEAD")
	if code != ExitProblem || !strings.Contains(out, `app/streamgen.yaml:5:3: breaking: topic "in": key type changes from string to int64`) {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if code, _, stderr := run(t, dir, "check", "-spec", "app/streamgen.yaml", "-against", "no-such-rev"); code != ExitIO || !strings.Contains(stderr, "neither a file nor a git revision") {
		t.Errorf("bad revision: exit %d %q", code, stderr)
	}
}

func TestFmt(t *testing.T) {
	messy := "package: demo\ntopology:\n- name: p\n  from: in\n  steps: [{to: out}]\nversion: 1   # the format\napp: {id: a}\ntopics: {in: {value: string, key: string}, out: {key: string, value: string}}\n"
	dir := writeSpec(t, messy)
	code, out, _ := run(t, dir, "fmt", "-d", "streamgen.yaml")
	if code != ExitProblem || !strings.Contains(out, "+++ streamgen.yaml (formatted)") {
		t.Errorf("fmt -d: exit %d\n%s", code, out)
	}
	code, printed, _ := run(t, dir, "fmt", "streamgen.yaml")
	if code != ExitOK || !strings.HasPrefix(printed, "version: 1 # the format\npackage: demo\napp: {id: a}\n") {
		t.Errorf("fmt: exit %d\n%s", code, printed)
	}
	if code, _, stderr := run(t, dir, "fmt", "-w", "streamgen.yaml"); code != ExitOK {
		t.Fatalf("fmt -w: exit %d %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "streamgen.yaml"))
	if string(b) != printed {
		t.Errorf("fmt -w wrote\n%s\nwant\n%s", b, printed)
	}
	if code, out, _ := run(t, dir, "fmt", "-d", "streamgen.yaml"); code != ExitOK || out != "" {
		t.Errorf("fmt -d after -w: exit %d\n%s", code, out)
	}
	if code, _, stderr := run(t, dir, "describe"); code != ExitOK {
		t.Errorf("the formatted spec does not load: exit %d %s", code, stderr)
	}
	if code, _, stderr := run(t, dir, "fmt", "missing.yaml"); code != ExitIO || stderr == "" {
		t.Errorf("missing file: exit %d", code)
	}
	if err := os.WriteFile(filepath.Join(dir, "list.yaml"), []byte("- a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, dir, "fmt", "list.yaml"); code != ExitProblem || !strings.Contains(stderr, "list.yaml: a spec is a YAML mapping") {
		t.Errorf("not a mapping: exit %d %q", code, stderr)
	}
	if code, _, _ := run(t, dir, "fmt", "-w"); code != ExitUsage {
		t.Errorf("-w without files: exit %d", code)
	}
}
