// Package specfmt is `streamgen fmt`: it rewrites a spec file into one
// canonical layout without changing what it means.
//
// The layout:
//
//   - keys of fixed-key mappings (app, a topic, a field, a step's
//     operation...) in the order spec/schema.json lists them; in a step the
//     operation key comes first, then name and doc. Keys the schema does not
//     know stay after the known ones. Mappings of user names (records,
//     fields, topics, stores, enum values) keep the author's order.
//   - two-space indentation; list items indented under their key.
//   - the author's choice of flow ({a: b}) or block style is kept, except
//     that a flow mapping or list whose line would be longer than MaxWidth
//     columns is written in block style.
//   - one blank line between top-level sections, none elsewhere; no column
//     alignment.
//   - comments are kept, attached to the key or item they precede or
//     follow; quoting and block scalars are kept as written.
//
// Formatting is idempotent: Format(Format(x)) == Format(x).
package specfmt

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/streamgen/streamgen/spec"
	"go.yaml.in/yaml/v3"
)

// MaxWidth is the longest line a flow mapping or list may make before it is
// written in block style.
const MaxWidth = 120

var (
	rootOnce   sync.Once
	rootSchema *schema
	rootErr    error
)

func root() (*schema, error) {
	rootOnce.Do(func() { rootSchema, rootErr = buildSchema(spec.SchemaJSON) })
	return rootSchema, rootErr
}

// Format returns src in the canonical layout. src must be one YAML document
// holding a mapping; it need not be a valid spec.
func Format(src []byte) ([]byte, error) {
	sch, err := root()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errors.New("more than one YAML document: a spec is one document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("a spec is a YAML mapping")
	}
	top := doc.Content[0]
	var first *yaml.Node
	if len(top.Content) > 0 {
		first = top.Content[0]
	}
	walk(top, sch, 0)
	// A comment above the first key is the file's header: it stays on top
	// when the key moves.
	if first != nil && top.Content[0] != first && first.HeadComment != "" {
		doc.HeadComment = strings.TrimLeft(doc.HeadComment+"\n\n"+first.HeadComment, "\n")
		first.HeadComment = ""
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return sectionBreaks(b.Bytes()), nil
}

// walk normalises n, a node starting at column col, in place.
func walk(n *yaml.Node, s *schema, col int) {
	switch n.Kind {
	case yaml.MappingNode:
		type pair struct{ k, v *yaml.Node }
		pairs := make([]pair, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, pair{n.Content[i], n.Content[i+1]})
		}
		slices.SortStableFunc(pairs, func(a, b pair) int { return s.rank(a.k.Value) - s.rank(b.k.Value) })
		n.Content = n.Content[:0]
		for _, p := range pairs {
			n.Content = append(n.Content, p.k, p.v)
		}
		unflowIfLong(n, col)
		for _, p := range pairs {
			c := s.child(p.k.Value)
			if n.Style&yaml.FlowStyle != 0 {
				walk(p.v, c, col) // one line: only key order matters
				continue
			}
			if p.v.Style&yaml.FlowStyle != 0 || p.v.Kind == yaml.ScalarNode {
				walk(p.v, c, col+len(p.k.Value)+2)
			} else if p.v.Kind == yaml.SequenceNode {
				walk(p.v, c, col+2)
			} else {
				walk(p.v, c, col+2)
			}
		}
	case yaml.SequenceNode:
		var items *schema
		if s != nil {
			items = s.items
		}
		unflowIfLong(n, col)
		for _, it := range n.Content {
			walk(it, items, col+2)
		}
	}
}

// unflowIfLong turns a flow collection starting at column col into block
// style when its one-line form (plus the key or dash before it, which col
// accounts for) would pass MaxWidth.
func unflowIfLong(n *yaml.Node, col int) {
	if n.Style&yaml.FlowStyle == 0 {
		return
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return
	}
	line := strings.TrimRight(string(b), "\n")
	if strings.Contains(line, "\n") || col+len(line) > MaxWidth {
		n.Style &^= yaml.FlowStyle
	}
}

// sectionBreaks puts one blank line before each top-level key but the
// first, above the comment lines that lead into it; one-line entries that
// follow each other (version, package) stay together.
func sectionBreaks(src []byte) []byte {
	lines := strings.Split(string(src), "\n")
	var out []string
	lastKey := -1
	for _, line := range lines {
		topKey := line != "" && line[0] != ' ' && line[0] != '#' && line[0] != '-' && !strings.HasPrefix(line, "...")
		if topKey {
			// One-line entries in a row (version, package) stay together.
			oneLiners := lastKey == len(out)-1 && !strings.HasSuffix(line, ":")
			if lastKey >= 0 && !oneLiners {
				// Insert above the run of top-level comments just emitted.
				i := len(out)
				for i > 0 && strings.HasPrefix(out[i-1], "#") {
					i--
				}
				if i > 0 && out[i-1] != "" {
					out = slices.Insert(out, i, "")
				}
			}
			lastKey = len(out)
		}
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n"))
}
