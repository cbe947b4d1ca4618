package docstest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/textdiff"
	"github.com/streamgen/streamgen/spec"
)

var update = flag.Bool("update", false, "rewrite docs/examples/*/output.jsonl from the replay output")

// root is the repository root, relative to this package's directory.
const root = "../.."

// schemaKeys collects every property name declared anywhere in the JSON
// Schema: the keys of each "properties" object, recursively.
func schemaKeys(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for k := range props {
				into[k] = true
			}
		}
		for _, child := range x {
			schemaKeys(child, into)
		}
	case []any:
		for _, child := range x {
			schemaKeys(child, into)
		}
	}
}

// TestSpecReferenceCoversSchema fails when a key the spec format accepts
// is not documented: the reference must name it in backticks (`key`,
// `key:` or `{key: …}`) or in the first cell of a table row.
func TestSpecReferenceCoversSchema(t *testing.T) {
	var schema any
	if err := json.Unmarshal(spec.SchemaJSON, &schema); err != nil {
		t.Fatalf("spec/schema.json: %v", err)
	}
	keys := map[string]bool{}
	schemaKeys(schema, keys)
	if len(keys) < 50 {
		t.Fatalf("found only %d keys in the schema; the walk is broken", len(keys))
	}
	ref, err := os.ReadFile(filepath.Join(root, "docs", "spec-reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(ref)
	var missing []string
	for k := range keys {
		q := regexp.QuoteMeta(k)
		inTicks := regexp.MustCompile("`" + q + "(`|:)")
		inRow := regexp.MustCompile(`(?m)^\|\s*` + q + `\s*\|`)
		if !inTicks.MatchString(doc) && !inRow.MatchString(doc) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/spec-reference.md does not mention these keys of spec/schema.json: %s", strings.Join(missing, ", "))
	}
}

// examples lists the directories of docs/examples that hold a spec.
func examples(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, "docs", "examples", "*", "streamgen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, p := range m {
		dirs = append(dirs, filepath.Dir(p))
	}
	sort.Strings(dirs)
	if len(dirs) < 4 {
		t.Fatalf("found %d specs under docs/examples, want at least 4", len(dirs))
	}
	return dirs
}

// summaryRE matches the line replay ends with when records were dropped or
// skipped: an example may drop records on purpose (late ones, null keys).
var summaryRE = regexp.MustCompile(`(?m)^[\w.-]+ replay: (sequence -?\d+: )?\d+ (bad record|record|malformed input line)s? .*\n`)

// withoutSummary is stderr without replay's summary lines.
func withoutSummary(stderr string) string { return summaryRE.ReplaceAllString(stderr, "") }

// TestExamplesReplay builds every docs example and runs its replay
// command on input.jsonl; the output must equal output.jsonl.
func TestExamplesReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every docs example")
	}
	bin := t.TempDir()
	for _, dir := range examples(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			exe := filepath.Join(bin, name)
			build := exec.Command("go", "build", "-o", exe, ".")
			build.Dir = dir
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build in %s: %v\n%s", dir, err, out)
			}
			in, err := os.Open(filepath.Join(dir, "input.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var stdout, stderr bytes.Buffer
			run := exec.Command(exe, "replay", "--strict")
			run.Stdin, run.Stdout, run.Stderr = in, &stdout, &stderr
			if err := run.Run(); err != nil {
				t.Fatalf("%s replay: %v\n%s", name, err, stderr.String())
			}
			if rest := withoutSummary(stderr.String()); rest != "" {
				t.Errorf("%s replay wrote to stderr:\n%s", name, rest)
			}
			wantPath := filepath.Join(dir, "output.jsonl")
			if *update {
				if err := os.WriteFile(wantPath, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if d := textdiff.Unified(wantPath, "replay output", string(want), stdout.String()); d != "" {
				t.Errorf("replay of %s differs (-want +got); if the change is intended, run go test ./internal/docstest -run TestExamplesReplay -update and review the diff:\n%s", name, d)
			}
		})
	}
}

// linkRE matches the target of a Markdown link: [text](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// guidePaths lists the user guide's pages: README.md and docs/*.md.
func guidePaths(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(pages, filepath.Join(root, "README.md"))
}

// TestGuideLinks checks that relative links in README.md and docs/*.md
// point at files or directories that exist.
func TestGuideLinks(t *testing.T) {
	pages := guidePaths(t)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, m[1])
			}
		}
	}
}
