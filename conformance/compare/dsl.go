package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// dslDoc is the page whose "Every DSL method" table answers each method of
// Kafka Streams' DSL, relative to the repository root.
const dslDoc = "docs/coming-from-kafka-streams.md"

// checkDSL compares the DSL methods the Kafka Streams jar has (the harness
// lists them by reflection) with the rows of dslDoc's table: a method
// without a row, or a row for a method the jar no longer has, is an error.
// It prints
//
//	dsl: <S> of <T> methods supported
//
// where a row whose answer starts "not supported" is not counted in S.
func (r *runner) checkDSL() {
	out, ok := r.harnessOutput("dsl-methods")
	if !ok {
		return
	}
	page, err := os.ReadFile(filepath.Join(r.root, dslDoc))
	if err != nil {
		r.errorf("%v", err)
		return
	}
	rows, err := dslRows(string(page))
	if err != nil {
		r.errorf("%s: %v", dslDoc, err)
		return
	}
	methods := jarMethods(string(out))
	for _, m := range slices.Sorted(maps.Keys(methods)) {
		if _, ok := rows[m]; !ok {
			r.errorf("%s: Kafka Streams' %s has no row in the \"Every DSL method\" table", dslDoc, m)
		}
	}
	supported := 0
	for _, m := range slices.Sorted(maps.Keys(rows)) {
		switch {
		case !methods[m]:
			r.errorf("%s: the \"Every DSL method\" table has a row for %s, which the Kafka Streams jar does not have", dslDoc, m)
		case !strings.HasPrefix(rows[m], "not supported"):
			supported++
		}
	}
	fmt.Printf("dsl: %d of %d methods supported\n", supported, len(methods))
}

// jarMethods parses the harness's "Class#method [deprecated]" lines.
func jarMethods(out string) map[string]bool {
	methods := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			methods[f[0]] = true
		}
	}
	return methods
}

// dslRowRE matches a table row "| `Class#method` … | answer |".
var dslRowRE = regexp.MustCompile("^\\| `([A-Za-z]+#[A-Za-z]+)`[^|]*\\| (.+) \\|$")

// dslRows reads the "Every DSL method" section of page: each method's
// answer, by "Class#method".
func dslRows(page string) (map[string]string, error) {
	_, section, ok := strings.Cut("\n"+page, "\n## Every DSL method\n")
	if !ok {
		return nil, fmt.Errorf(`no "## Every DSL method" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		m := dslRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			return nil, fmt.Errorf("two rows for %s", m[1])
		}
		rows[m[1]] = m[2]
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf(`the "Every DSL method" section has no rows`)
	}
	return rows, nil
}
