package docstest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/textdiff"
)

// walkthrough is what README.md's walkthrough shows: its shell blocks in
// order, the output shown after the replay, the changed signature of the
// mistake step and the diagnostic shown for it.
type walkthrough struct {
	shell     []fence
	replayOut string
	signature string
	diag      string
}

// signatureRE finds the mistake step's changed function in the prose.
var signatureRE = regexp.MustCompile("`(func UpperOrder\\([^`]*)`")

func readWalkthrough(t *testing.T) walkthrough {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	start, end := strings.Index(page, "## Walkthrough"), strings.Index(page, "## Commands")
	if start < 0 || end < start {
		t.Fatal("README.md: no ## Walkthrough section before ## Commands")
	}
	section := page[start:end]
	var w walkthrough
	for _, f := range fences(section) {
		switch {
		case f.lang == "sh":
			w.shell = append(w.shell, f)
		case f.lang == "json" && len(w.shell) == 3:
			w.replayOut = f.body
		case f.lang == "" && w.replayOut != "":
			w.diag = strings.TrimSpace(f.body)
		}
	}
	if m := signatureRE.FindStringSubmatch(section); m != nil {
		w.signature = m[1]
	}
	if len(w.shell) != 3 || w.replayOut == "" || w.signature == "" || w.diag == "" {
		t.Fatalf("README.md's walkthrough: found %d shell blocks, replay output %v, signature %q, diagnostic %q; want 3 blocks and the rest",
			len(w.shell), w.replayOut != "", w.signature, w.diag)
	}
	return w
}

// TestReadmeWalkthrough runs README.md's walkthrough as written, in a
// temporary directory outside this module: streamgen installed from this
// checkout, init, go mod tidy, go generate, go test, go build, the replay
// (whose output must be the page's) and the mistake step (whose diagnostic
// must be the page's). The one line it changes is the checkout's location
// (export STREAMGEN=...), which is this repository; the installed binary
// goes to a temporary GOBIN put first on PATH.
func TestReadmeWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("creates, generates, builds and runs a project outside the module")
	}
	w := readWalkthrough(t)
	checkout, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	env := append(os.Environ(), "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cwd := work
	var outs []string
	for _, f := range w.shell {
		script := regexp.MustCompile(`(?m)^export STREAMGEN=.*$`).ReplaceAllString(f.body, "export STREAMGEN="+shellQuote(checkout))
		var out string
		out, cwd = runShell(t, env, cwd, script, f.line)
		outs = append(outs, out)
	}
	if d := textdiff.Unified("README.md (replay output)", "replay", w.replayOut, outs[2]); d != "" {
		t.Errorf("the walkthrough's replay output differs from the page:\n%s", d)
	}

	src, err := os.ReadFile(filepath.Join(cwd, "orders.go"))
	if err != nil {
		t.Fatal(err)
	}
	sig := regexp.MustCompile(`(?m)^func UpperOrder\(.*\) \*Order`)
	if !sig.Match(src) {
		t.Fatalf("orders.go has no UpperOrder to change:\n%s", src)
	}
	if err := os.WriteFile(filepath.Join(cwd, "orders.go"), sig.ReplaceAll(src, []byte(w.signature)), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command("go", "generate")
	gen.Dir, gen.Env = cwd, env
	var stderr bytes.Buffer
	gen.Stderr = &stderr
	if err := gen.Run(); err == nil {
		t.Fatal("go generate with the wrong signature succeeded")
	}
	if first, _, _ := strings.Cut(stderr.String(), "\n"); first != w.diag {
		t.Errorf("the mistake step's diagnostic differs from the page:\npage: %s\ngot:  %s", w.diag, stderr.String())
	}
}

// runShell runs one of the page's shell blocks with bash -e in dir and
// returns its standard output and the directory it ended in.
func runShell(t *testing.T, env []string, dir, script string, line int) (string, string) {
	t.Helper()
	pwdFile := filepath.Join(t.TempDir(), "pwd")
	cmd := exec.Command("bash", "-e", "-c", script+"\npwd > "+shellQuote(pwdFile))
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("README.md:%d: the shell block failed: %v\n%s\n%s", line, err, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(pwdFile)
	if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), strings.TrimSpace(string(b))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
