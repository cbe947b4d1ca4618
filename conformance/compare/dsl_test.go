package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDSLRows reads the real page: its table must parse, hold the methods
// every Kafka Streams 4.x has, and say "not supported" only with a reason.
func TestDSLRows(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", dslDoc))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := dslRows(string(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"KStream#filter", "KTable#join", "KGroupedStream#windowedBy", "TimeWindows#ofSizeAndGrace"} {
		if rows[m] == "" {
			t.Errorf("no row for %s", m)
		}
	}
	for m, answer := range rows {
		if strings.HasPrefix(answer, "not supported") && !strings.HasPrefix(answer, "not supported: ") {
			t.Errorf("%s: %q gives no reason or workaround", m, answer)
		}
	}
}

// TestDSLRowsErrors checks that a page without the section, or with a
// method twice, is refused rather than read as empty.
func TestDSLRowsErrors(t *testing.T) {
	for name, page := range map[string]string{
		"no section": "# t\n\n| `KStream#map` | `map` |\n",
		"duplicate":  "# t\n\n## Every DSL method\n\n| `KStream#map` | `map` |\n| `KStream#map` | again |\n",
		"no rows":    "# t\n\n## Every DSL method\n\ntext\n\n## Next\n\n| `KStream#map` | `map` |\n",
	} {
		if _, err := dslRows(page); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	rows, err := dslRows("## Every DSL method\n\n| `KStream#map` (x) | `map: {…}` |\n\n## Other\n\n| `Topology#describe` | d |\n")
	if err != nil || len(rows) != 1 || rows["KStream#map"] != "`map: {…}`" {
		t.Errorf("rows = %v, %v", rows, err)
	}
	if m := jarMethods("A#b\nA#c deprecated\n\n"); len(m) != 2 || !m["A#c"] {
		t.Errorf("jarMethods = %v", m)
	}
}
