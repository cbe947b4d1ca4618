package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/spec"
)

// specLinkRE finds a link to a spec file in the lines above a code block.
var specLinkRE = regexp.MustCompile(`\]\(([^)\s#]*streamgen\.yaml)\)`)

// specLines are the lines of a spec that carry meaning: trimmed, with
// trailing comments, blank lines and "..." elisions dropped.
func specLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if l == "" || l == "..." || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestSpecsShownInDocs: every YAML block in README.md and docs/*.md is a
// spec that generates, or an excerpt of a spec file it links to (or, with
// no link, of some spec in the repository) (the
// files under docs/examples and examples/ are generated, built and run by
// other tests). A block that is a whole spec and links to a file must
// equal that file. So no spec in the guide can drift from what works.
func TestSpecsShownInDocs(t *testing.T) {
	pages := guidePaths(t)
	checked := 0
	// anySpec holds the lines of every spec that other tests generate and
	// build, for excerpts that link no file.
	anySpec := map[string]bool{}
	for _, pattern := range []string{"examples/*/streamgen.yaml", "docs/examples/*/streamgen.yaml", "golden/full/streamgen.yaml"} {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range specLines(string(b)) {
				anySpec[l] = true
			}
		}
	}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, f := range fences(string(raw)) {
			if f.lang != "yaml" {
				continue
			}
			checked++
			where := rel + ":" + strconv.Itoa(f.line)
			var linked string
			for _, b := range f.before {
				if m := specLinkRE.FindStringSubmatch(b); m != nil {
					linked = filepath.Join(filepath.Dir(page), filepath.FromSlash(m[1]))
				}
			}
			whole := regexp.MustCompile(`(?m)^version:`).MatchString(f.body) && regexp.MustCompile(`(?m)^topology:`).MatchString(f.body)
			if whole {
				prog, err := spec.Parse("streamgen.yaml", []byte(f.body))
				if err != nil {
					t.Errorf("%s: the spec shown does not parse:\n%v", where, err)
					continue
				}
				if _, err := gen.Generate(prog, gen.Config{SpecPath: "streamgen.yaml", OmitTests: true}); err != nil {
					t.Errorf("%s: the spec shown does not generate:\n%v", where, err)
				}
			}
			if linked == "" {
				if !whole {
					for _, l := range specLines(f.body) {
						if !anySpec[l] {
							t.Errorf("%s: line %q of the excerpt is in no spec of the repository; link the streamgen.yaml it comes from", where, l)
						}
					}
				}
				continue
			}
			file, err := os.ReadFile(linked)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if whole {
				if strings.Join(specLines(string(file)), "\n") != strings.Join(specLines(f.body), "\n") {
					t.Errorf("%s: the spec shown differs from %s, which it links to", where, linked)
				}
				continue
			}
			have := map[string]bool{}
			for _, l := range specLines(string(file)) {
				have[l] = true
			}
			for _, l := range specLines(f.body) {
				if !have[l] {
					t.Errorf("%s: line %q of the excerpt is not in %s", where, l, linked)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("found %d YAML blocks in the guide; the scan is broken", checked)
	}
}
