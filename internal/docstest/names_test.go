package docstest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/cli"
	"github.com/streamgen/streamgen/templates"
)

// commandSet is a command line's vocabulary: its subcommands and, for
// each, the flags it accepts (without dashes).
type commandSet map[string]map[string]bool

// flagLineRE matches a flag in the output of flag.PrintDefaults.
var flagLineRE = regexp.MustCompile(`(?m)^  -([a-zA-Z0-9][a-zA-Z0-9-]*)`)

// usageCommandRE matches a command in a usage text: "  name  what it does".
var usageCommandRE = regexp.MustCompile(`(?m)^  (?:streamgen )?([a-z]+) `)

// parseUsage reads the commands of a usage text and asks each for its flags.
func parseUsage(usage string, flagsOf func(cmd string) string) commandSet {
	set := commandSet{}
	for _, m := range usageCommandRE.FindAllStringSubmatch(usage, -1) {
		cmd := m[1]
		set[cmd] = map[string]bool{"h": true, "help": true}
		for _, f := range flagLineRE.FindAllStringSubmatch(flagsOf(cmd), -1) {
			set[cmd][f[1]] = true
		}
	}
	return set
}

// streamgenCommands derives the streamgen command's vocabulary from its help.
func streamgenCommands(t *testing.T) commandSet {
	var out bytes.Buffer
	cli.Run([]string{"help"}, nil, &out, &out)
	set := parseUsage(out.String(), func(cmd string) string {
		var b bytes.Buffer
		cli.Run([]string{cmd, "-h"}, nil, &b, &b)
		return b.String()
	})
	for _, want := range []string{"init", "generate", "check", "describe", "fmt", "schema"} {
		if set[want] == nil {
			t.Fatalf("streamgen help lists %v, not %q: the parsing is broken", set, want)
		}
	}
	if !set["init"]["replace"] || !set["check"]["against"] {
		t.Fatalf("streamgen's flags came out as %v: the parsing is broken", set)
	}
	return set
}

// appCommands derives a generated binary's vocabulary from its help: it
// builds the tutorial's example and asks it.
func appCommands(t *testing.T) commandSet {
	exe := filepath.Join(t.TempDir(), "app")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = filepath.Join(root, tutorialDir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help, _ := exec.Command(exe, "help").CombinedOutput()
	set := parseUsage(string(help), func(cmd string) string {
		out, _ := exec.Command(exe, cmd, "-h").CombinedOutput()
		return string(out)
	})
	if !set["run"]["metrics-addr"] || !set["replay"]["strict"] || !set["describe"]["format"] {
		t.Fatalf("the generated binary's flags came out as %v: the parsing is broken", set)
	}
	return set
}

// metricNames derives the metric names the runtime exports from its
// source: the names given to desc (the engine's collector) and the Name of
// each histogram, under the streamgen namespace; histograms also export
// _bucket, _sum and _count series. The runtime's own build tags
// (streamgen_nokfake) share the prefix, so the names of its //go:build
// lines count as known words too.
func metricNames(t *testing.T) map[string]bool {
	names := map[string]bool{}
	descRE := regexp.MustCompile(`\bdesc\("([a-z0-9_]+)"`)
	histRE := regexp.MustCompile(`Namespace: metricsNamespace, Name: "([a-z0-9_]+)"`)
	tagRE := regexp.MustCompile(`(?m)^//go:build .*?\b(streamgen_[a-z0-9_]+)`)
	err := filepath.WalkDir(filepath.Join(root, "runtime"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range descRE.FindAllStringSubmatch(string(b), -1) {
			names["streamgen_"+m[1]] = true
		}
		for _, m := range tagRE.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		for _, m := range histRE.FindAllStringSubmatch(string(b), -1) {
			for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
				names["streamgen_"+m[1]+suffix] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !names["streamgen_commits_total"] || !names["streamgen_task_process_latency_seconds_bucket"] {
		t.Fatalf("found metrics %v: the source walk is broken", names)
	}
	return names
}

// guidePages are the pages the names test reads, by the name it reports.
func guidePages(t *testing.T) map[string]string {
	pages := map[string]string{}
	for _, p := range guidePaths(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages[strings.TrimPrefix(filepath.ToSlash(p), root+"/")] = string(b)
	}
	files, err := templates.Render(templates.Data{Module: "example.com/myorders", Name: "myorders", Version: "v0.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if strings.HasSuffix(name, ".md") {
			pages["templates/project/"+name+".tmpl"] = string(b)
		}
	}
	return pages
}

// snippet is a piece of a page that may hold a command line.
type snippet struct {
	line int
	text string
}

// codeSpanRE matches an inline code span.
var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// commandSnippets returns the inline code spans outside fences and every
// line of the shell-like fenced blocks (sh, bash, console and unlabelled).
func commandSnippets(page string) []snippet {
	var out []snippet
	lang, inFence := "", false
	for i, l := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "```"); ok {
			inFence, lang = !inFence, strings.TrimSpace(rest)
			continue
		}
		switch {
		case !inFence:
			for _, m := range codeSpanRE.FindAllStringSubmatch(l, -1) {
				out = append(out, snippet{i + 1, m[1]})
			}
		case lang == "" || lang == "sh" || lang == "bash" || lang == "console":
			out = append(out, snippet{i + 1, l})
		}
	}
	return out
}

// binaryRE is how the guide runs a generated binary: ./name, or <app>.
var binaryRE = regexp.MustCompile(`^(\./[a-z0-9-]+|<app>|<binary>)$`)

// isStreamgen reports whether a word runs the streamgen command.
func isStreamgen(w string) bool {
	return w == "streamgen" || strings.HasSuffix(w, "/cmd/streamgen") || strings.Contains(w, "/cmd/streamgen@")
}

// checkWords checks one command line: a streamgen or generated-binary
// subcommand must exist, and so must every flag given to it. It returns
// what is wrong.
func checkWords(words []string, sg, app commandSet) []string {
	var bad []string
	for i := 0; i+1 < len(words); i++ {
		set, what := sg, "streamgen"
		switch {
		case isStreamgen(words[i]):
		case binaryRE.MatchString(words[i]) || (words[i] == "." && i > 1 && words[i-1] == "run" && words[i-2] == "go"):
			set, what = app, "the generated binary"
		default:
			continue
		}
		sub := words[i+1]
		if strings.ContainsAny(sub[:1], "-<[|$") {
			continue
		}
		flags, ok := set[sub]
		if !ok {
			bad = append(bad, what+" has no subcommand "+sub)
			continue
		}
		for _, w := range words[i+2:] {
			if strings.ContainsAny(w[:1], "|;&#<>") {
				break
			}
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			name = strings.TrimRight(name, ".,)]")
			if strings.HasPrefix(w, "-") && name != "" && !flags[name] {
				bad = append(bad, what+" "+sub+" has no flag "+w)
			}
		}
	}
	return bad
}

// flagRowRE matches a table row that documents a flag: | `--name` | ...
var flagRowRE = regexp.MustCompile("(?m)^\\|\\s*`--([a-z0-9-]+)`")

// metricRE matches a metric name of the runtime's namespace.
var metricRE = regexp.MustCompile(`streamgen_[a-z0-9_]*[a-z0-9]`)

// TestGuideNamesExist fails when README.md, docs/*.md or the README that
// `streamgen init` writes names a streamgen subcommand, a generated
// binary's subcommand, a flag of either, or a metric that the code does
// not have. Subcommands and flags come from the commands' own help (the
// flag sets), metrics from the runtime's metric definitions.
//
// Rules: in code spans and shell blocks, the word after `streamgen` (or
// …/cmd/streamgen, go tool streamgen) is a streamgen subcommand and every
// -flag after it one of that subcommand's; likewise after ./name, <app>
// and `go run .` for a generated binary. A table row whose first cell is
// `--flag` documents a generated binary's flag. Every streamgen_… word
// that is not a file name (streamgen_*.go) is a metric the runtime
// exports, except streamgen_kafka_*, the franz-go client's own metrics.
func TestGuideNamesExist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated binary to ask it for its flags")
	}
	sg, app, metrics := streamgenCommands(t), appCommands(t), metricNames(t)
	appFlags := map[string]bool{}
	for _, flags := range app {
		for f := range flags {
			appFlags[f] = true
		}
	}
	pages := guidePages(t)
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	rows, mentions := 0, 0
	for _, name := range names {
		page := pages[name]
		for _, s := range commandSnippets(page) {
			text, _, _ := strings.Cut(s.text, " #") // a shell comment
			for _, msg := range checkWords(strings.Fields(text), sg, app) {
				t.Errorf("%s:%d: %s (in %q)", name, s.line, msg, s.text)
			}
		}
		for _, m := range flagRowRE.FindAllStringSubmatchIndex(page, -1) {
			rows++
			if f := page[m[2]:m[3]]; !appFlags[f] {
				t.Errorf("%s:%d: a table documents --%s, which no subcommand of the generated binary has", name, lineOf(page, m[0]), f)
			}
		}
		for _, m := range metricRE.FindAllStringIndex(page, -1) {
			w, next := page[m[0]:m[1]], byte(' ')
			if m[1] < len(page) {
				next = page[m[1]]
			}
			if next == '.' && strings.HasPrefix(page[m[1]:], ".go") || next == '*' || strings.HasPrefix(w, "streamgen_kafka") {
				continue
			}
			mentions++
			if !metrics[w] {
				t.Errorf("%s:%d: names the metric %s, which the runtime does not export", name, lineOf(page, m[0]), w)
			}
		}
	}
	if rows < 10 || mentions < 10 {
		t.Fatalf("checked %d flag rows and %d metric mentions; the page scanning is broken", rows, mentions)
	}
}

func lineOf(page string, off int) int { return strings.Count(page[:off], "\n") + 1 }

// TestCheckWordsCatches: the command rules report what they should.
func TestCheckWordsCatches(t *testing.T) {
	sg := commandSet{"generate": {"spec": true}}
	app := commandSet{"run": {"embedded": true}}
	for line, want := range map[string]string{
		"streamgen generate -spec s.yaml":             "",
		"go tool streamgen generate -nope":            "streamgen generate has no flag -nope",
		"go run github.com/x/cmd/streamgen@v1 frob":   "streamgen has no subcommand frob",
		"./shout run --embedded --until-idle=2s":      "the generated binary run has no flag --until-idle=2s",
		"go run . replay < in.jsonl":                  "the generated binary has no subcommand replay",
		"./shout run --embedded | streamgen generate": "",
	} {
		got := strings.Join(checkWords(strings.Fields(line), sg, app), "; ")
		if got != want {
			t.Errorf("checkWords(%q) = %q, want %q", line, got, want)
		}
	}
}
