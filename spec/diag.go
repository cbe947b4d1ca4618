package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Diagnostic is one problem in a spec file.
type Diagnostic struct {
	Pos Pos
	Msg string // lowercase, no trailing period, identifiers quoted
	// Hint is an optional remedy for a frequent mistake, printed after a
	// blank line below the diagnostic.
	Hint string
}

// String formats the diagnostic as file:line:col: message, followed by the
// hint (indented, after a blank line) when there is one.
func (d Diagnostic) String() string {
	s := d.Pos.String() + ": " + d.Msg
	if d.Hint != "" {
		s += "\n\n\t" + strings.ReplaceAll(d.Hint, "\n", "\n\t") + "\n"
	}
	return s
}

// Diagnostics is every problem found in one run. It implements error.
type Diagnostics []Diagnostic

// Error prints one diagnostic per line, sorted by position then message.
func (ds Diagnostics) Error() string {
	s := slices.Clone(ds)
	s.Sort()
	var b strings.Builder
	for i, d := range s {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// Sort orders the diagnostics by file, line, column, then message.
func (ds Diagnostics) Sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
}

// docURL is where remedies point. It is relative to the repository so that
// no hostname is baked into diagnostics.
const docURL = "docs/spec-reference.md"

func (p *parser) errf(pos Pos, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// hintf attaches a remedy to the most recent diagnostic.
func (p *parser) hintf(format string, args ...any) {
	if len(p.diags) > 0 {
		p.diags[len(p.diags)-1].Hint = fmt.Sprintf(format, args...)
	}
}

// didYouMean returns ` (did you mean "x"?)` when one candidate is close to
// s, or "".
func didYouMean(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD || (d == bestD && c < best && best != "") {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len(s)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
