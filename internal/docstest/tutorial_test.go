package docstest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/spec"
)

// fence is one fenced code block of a Markdown page.
type fence struct {
	lang   string
	body   string
	line   int      // 1-based line of the opening fence
	before []string // the non-empty lines just above the fence, nearest last
}

// fences splits a Markdown page into its fenced code blocks.
func fences(page string) []fence {
	var out []fence
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		open, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		f := fence{lang: strings.TrimSpace(open), line: i + 1}
		for j := i - 1; j >= 0 && len(f.before) < 3; j-- {
			if strings.TrimSpace(lines[j]) != "" {
				f.before = append([]string{lines[j]}, f.before...)
			}
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		f.body = strings.Join(body, "\n") + "\n"
		out = append(out, f)
	}
	return out
}

const tutorialDir = "docs/examples/adclicks"

// TestTutorialFilesMatchExample keeps the files docs/tutorial.md tells the
// reader to write equal to docs/examples/adclicks, which the other tests
// generate, build and replay.
func TestTutorialFilesMatchExample(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	fileRE := regexp.MustCompile("^`examples/adclicks/([^`]+)`")
	seen := map[string]bool{}
	for _, f := range fences(string(page)) {
		if len(f.before) == 0 {
			continue
		}
		m := fileRE.FindStringSubmatch(f.before[len(f.before)-1])
		if m == nil {
			continue
		}
		name := m[1]
		seen[name] = true
		want, err := os.ReadFile(filepath.Join(root, tutorialDir, name))
		if err != nil {
			t.Errorf("docs/tutorial.md:%d shows %s, which %s does not have: %v", f.line, name, tutorialDir, err)
			continue
		}
		if d := textdiff.Unified(tutorialDir+"/"+name, "docs/tutorial.md", string(want), f.body); d != "" {
			t.Errorf("docs/tutorial.md:%d differs from %s/%s:\n%s", f.line, tutorialDir, name, d)
		}
	}
	for _, name := range []string{"streamgen.yaml", "adclicks.go", "input.jsonl"} {
		if !seen[name] {
			t.Errorf("docs/tutorial.md no longer shows examples/adclicks/%s", name)
		}
	}
}

// TestTutorialRunsOnEmbeddedBroker follows docs/tutorial.md: it builds the
// application, runs the page's `./adclicks run --embedded ...` command
// word for word and compares stdout with the output the page shows; then
// it makes the page's two-minute window change and checks the replay output
// the page shows for it.
func TestTutorialRunsOnEmbeddedBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tutorial application and runs it on the embedded broker")
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := fences(string(raw))
	var runArgs []string
	var outputs []string // json blocks that follow the run command, in order
	for _, f := range blocks {
		if f.lang == "sh" {
			for _, l := range strings.Split(f.body, "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "./adclicks run "); ok {
					runArgs = strings.Fields(rest)
				}
			}
			continue
		}
		if f.lang == "json" && runArgs != nil && strings.Contains(f.body, `"topic":"clicked"`) {
			outputs = append(outputs, f.body)
		}
	}
	if runArgs == nil || len(outputs) != 2 {
		t.Fatalf("docs/tutorial.md: found run command %q and %d output blocks; want the command and 2 outputs", runArgs, len(outputs))
	}

	src := filepath.Join(root, tutorialDir)
	exe := filepath.Join(t.TempDir(), "adclicks")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	input, err := os.ReadFile(filepath.Join(src, "input.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "input.jsonl"), input, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, exe, append([]string{"run"}, runArgs...)...)
	run.Dir = work
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("./adclicks run %s: %v\n%s", strings.Join(runArgs, " "), err, stderr.String())
	}
	if d := textdiff.Unified("docs/tutorial.md", "./adclicks run", outputs[0], stdout.String()); d != "" {
		t.Errorf("the tutorial's run output differs from what the page shows:\n%s\nstderr:\n%s", d, stderr.String())
	}

	// Step 7: the two-minute window, built in a scratch copy under testdata
	// (inside the module, ignored by ./...).
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	scratch, err := os.MkdirTemp("testdata", "tutorial-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	specSrc, err := os.ReadFile(filepath.Join(src, "streamgen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const oneMinute, twoMinutes = "window: {before: 1m, after: 1m, grace: 10s}", "window: {before: 2m, after: 2m, grace: 10s}"
	if !bytes.Contains(specSrc, []byte(oneMinute)) || !strings.Contains(string(raw), "`"+twoMinutes+"`") {
		t.Fatalf("the tutorial's window change (%q → %q) no longer matches the spec or the page", oneMinute, twoMinutes)
	}
	changed := bytes.Replace(specSrc, []byte(oneMinute), []byte(twoMinutes), 1)
	prog, err := spec.Parse("streamgen.yaml", changed)
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(prog, gen.Config{SpecPath: "streamgen.yaml", OmitTests: true})
	if err != nil {
		t.Fatal(err)
	}
	files["adclicks.go"], err = os.ReadFile(filepath.Join(src, "adclicks.go"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(scratch, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe2 := filepath.Join(t.TempDir(), "adclicks2m")
	build = exec.Command("go", "build", "-o", exe2, ".")
	build.Dir = scratch
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build (two-minute window): %v\n%s", err, out)
	}
	replay := exec.Command(exe2, "replay", "--strict")
	replay.Stdin = bytes.NewReader(input)
	got, err := replay.Output()
	if err != nil {
		t.Fatalf("replay (two-minute window): %v", err)
	}
	if d := textdiff.Unified("docs/tutorial.md", "replay with 2m", outputs[1], string(got)); d != "" {
		t.Errorf("the tutorial's two-minute output differs from what the page shows:\n%s", d)
	}
}
