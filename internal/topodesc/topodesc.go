// Package topodesc is the one renderer of topology descriptions: the text of
// Kafka Streams' Topology#describe, a Mermaid flowchart and a Graphviz dot
// graph. It imports only the standard library so that both the generator
// (`streamgen describe`) and the runtime (a generated binary's `describe`)
// use it. Both get their Graph from internal/topograph's Graph.Describe,
// which calls Order to lay it out as Kafka Streams does.
package topodesc

import (
	"fmt"
	"slices"
	"strings"
)

// Kinds of nodes.
const (
	Source    = "Source"
	Processor = "Processor"
	Sink      = "Sink"
)

// Formats lists the output formats, in the order help texts name them.
var Formats = []string{"text", "mermaid", "dot"}

// Node is one source, processor or sink.
type Node struct {
	Name string
	Kind string // Source, Processor or Sink
	// Topics are the topics a source reads or the (single) topic a sink
	// writes; empty for processors.
	Topics []string
	// Stores are the stores a processor uses.
	Stores []string
	// Extractor, on a sink without a fixed topic, says how the topic is
	// chosen (Kafka Streams prints the TopicNameExtractor's class there).
	Extractor string
	// Children are the names of the nodes this one forwards to, sorted.
	Children []string
}

// Graph is a topology split into sub-topologies, each a list of nodes in a
// fixed order (the order the text lists them in). Sub-topology i is numbered
// i, which is also the sub-topology part of its task ids.
type Graph struct {
	Subs [][]*Node
	// Global[i] marks sub-topology i as a global store's (a source and the
	// processor that fills the store; it runs no tasks). Global may be
	// shorter than Subs.
	Global []bool
}

// IsGlobal reports whether sub-topology i is a global store's.
func (g *Graph) IsGlobal(i int) bool { return i < len(g.Global) && g.Global[i] }

// Order sorts the nodes of every sub-topology, and every node's children,
// as Kafka Streams' TopologyDescription does: by the size of the sub-tree a
// node roots (itself plus, recursively, its children's sub-trees: a node
// reached by two paths counts twice), largest first, then by name. Sources
// therefore come before what they feed, and sinks last.
//
// Kafka Streams keeps each node's successor and predecessor lists in sets
// ordered by the same comparator, but fills them while the sizes still
// grow, so those two lists come out in an order that depends on Java's hash
// iteration; here they are in the comparator's order on the final sizes.
func (g *Graph) Order() {
	size := g.sizes()
	less := func(a, b string) int {
		if size[a] != size[b] {
			return size[b] - size[a]
		}
		return strings.Compare(a, b)
	}
	for _, sub := range g.Subs {
		slices.SortStableFunc(sub, func(a, b *Node) int { return less(a.Name, b.Name) })
		for _, n := range sub {
			slices.SortStableFunc(n.Children, less)
		}
	}
}

// sizes is the sub-tree size of every node (see Order).
func (g *Graph) sizes() map[string]int {
	children := map[string][]string{}
	for _, sub := range g.Subs {
		for _, n := range sub {
			children[n.Name] = n.Children
		}
	}
	size := map[string]int{}
	var of func(name string, depth int) int
	of = func(name string, depth int) int {
		if s, ok := size[name]; ok {
			return s
		}
		s := 1
		if depth < len(children) { // a cycle (never built) must not recurse forever
			for _, c := range children[name] {
				s += of(c, depth+1)
			}
		}
		size[name] = s
		return s
	}
	for name := range children {
		of(name, 0)
	}
	return size
}

// Render renders g in format ("text", "mermaid" or "dot"; "" is text).
func (g *Graph) Render(format string) (string, error) {
	switch format {
	case "text", "":
		return g.Text(), nil
	case "mermaid":
		return g.Mermaid(), nil
	case "dot":
		return g.Dot(), nil
	}
	return "", fmt.Errorf("streamgen: unknown describe format %q (want text, mermaid or dot)", format)
}

// parents maps each node name to the names of the nodes that forward to
// it, in the order Order gives nodes (nodes are visited in that order).
func (g *Graph) parents() map[string][]string {
	p := map[string][]string{}
	for _, sub := range g.Subs {
		for _, n := range sub {
			for _, c := range n.Children {
				p[c] = append(p[c], n.Name)
			}
		}
	}
	return p
}

// Text renders the description as Kafka Streams' Topology#describe does,
// to the byte: the odd indentation of the first sub-topology line and the
// blank line after every sub-topology but a global store's are Kafka's.
func (g *Graph) Text() string {
	var b strings.Builder
	parents := g.parents()
	b.WriteString("Topologies:\n ")
	for i, sub := range g.Subs {
		if g.IsGlobal(i) {
			fmt.Fprintf(&b, "  Sub-topology: %d for global store (will not generate tasks)\n", i)
		} else {
			fmt.Fprintf(&b, "  Sub-topology: %d\n", i)
		}
		for _, n := range sub {
			switch {
			case n.Kind == Source:
				fmt.Fprintf(&b, "    Source: %s (topics: [%s])\n", n.Name, strings.Join(n.Topics, ", "))
			case n.Kind == Sink && n.Extractor != "":
				fmt.Fprintf(&b, "    Sink: %s (extractor class: %s)\n", n.Name, n.Extractor)
			case n.Kind == Sink:
				fmt.Fprintf(&b, "    Sink: %s (topic: %s)\n", n.Name, strings.Join(n.Topics, ", "))
			default:
				fmt.Fprintf(&b, "    Processor: %s (stores: [%s])\n", n.Name, strings.Join(n.Stores, ", "))
			}
			if len(n.Children) > 0 {
				fmt.Fprintf(&b, "      --> %s\n", strings.Join(n.Children, ", "))
			} else if n.Kind != Sink {
				b.WriteString("      --> none\n")
			}
			if ps := parents[n.Name]; len(ps) > 0 {
				fmt.Fprintf(&b, "      <-- %s\n", strings.Join(ps, ", "))
			} else if n.Kind != Source {
				b.WriteString("      <-- none\n")
			}
		}
		if !g.IsGlobal(i) {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// ParseText reads what Text writes. Source stores, which the text does not
// show, are lost; no picture draws them.
func ParseText(s string) (*Graph, error) {
	g := &Graph{}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "Topologies:" {
		return nil, fmt.Errorf("streamgen: topology description does not start with %q", "Topologies:")
	}
	var cur *Node
	for i, line := range lines[1:] {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		bad := func() (*Graph, error) {
			return nil, fmt.Errorf("streamgen: topology description line %d: cannot read %q", i+2, line)
		}
		list := func(open, close string) ([]string, bool) {
			j := strings.LastIndex(t, open)
			if j < 0 || !strings.HasSuffix(t, close) {
				return nil, false
			}
			inner := t[j+len(open) : len(t)-len(close)]
			if inner == "" {
				return nil, true
			}
			return strings.Split(inner, ", "), true
		}
		head := func(kind, open, close string) (*Node, bool) {
			rest := strings.TrimPrefix(t, kind+": ")
			j := strings.Index(rest, " (")
			if j < 0 {
				return nil, false
			}
			items, ok := list(open, close)
			if !ok {
				return nil, false
			}
			n := &Node{Name: rest[:j], Kind: kind}
			if kind == Processor {
				n.Stores = items
			} else {
				n.Topics = items
			}
			return n, true
		}
		switch {
		case strings.HasPrefix(t, "Sub-topology: "):
			g.Subs = append(g.Subs, nil)
			if strings.HasSuffix(t, " for global store (will not generate tasks)") {
				g.Global = append(g.Global, make([]bool, len(g.Subs)-len(g.Global))...)
				g.Global[len(g.Subs)-1] = true
			}
			cur = nil
			continue
		case strings.HasPrefix(t, "--> "):
			if cur == nil {
				return bad()
			}
			if rest := strings.TrimPrefix(t, "--> "); rest != "none" {
				cur.Children = strings.Split(rest, ", ")
			}
			continue
		case strings.HasPrefix(t, "<-- "):
			if cur == nil {
				return bad()
			}
			continue // parents follow from children
		}
		var n *Node
		var ok bool
		switch {
		case strings.HasPrefix(t, "Source: "):
			n, ok = head(Source, "(topics: [", "])")
		case strings.HasPrefix(t, "Sink: ") && strings.Contains(t, " (extractor class: "):
			n, ok = head(Sink, "(extractor class: ", ")")
			if ok {
				n.Extractor, n.Topics = strings.Join(n.Topics, ", "), nil
			}
		case strings.HasPrefix(t, "Sink: "):
			n, ok = head(Sink, "(topic: ", ")")
		case strings.HasPrefix(t, "Processor: "):
			n, ok = head(Processor, "(stores: [", "])")
		}
		if !ok || len(g.Subs) == 0 {
			return bad()
		}
		cur = n
		g.Subs[len(g.Subs)-1] = append(g.Subs[len(g.Subs)-1], n)
	}
	return g, nil
}

// ids gives every node, topic and store a distinct identifier made of
// letters, digits and '_', stable for a given graph: the name with other
// characters replaced, and a numeric suffix on a collision.
type ids struct {
	used map[string]bool
	of   map[string]string
}

func newIDs() *ids { return &ids{used: map[string]bool{}, of: map[string]string{}} }

func (x *ids) id(prefix, name string) string {
	key := prefix + "\x00" + name
	if id, ok := x.of[key]; ok {
		return id
	}
	var sb strings.Builder
	sb.WriteString(prefix)
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	id := sb.String()
	for i := 2; x.used[id]; i++ {
		id = fmt.Sprintf("%s_%d", sb.String(), i)
	}
	x.used[id] = true
	x.of[key] = id
	return id
}

// mermaidLabel escapes what Mermaid would read as markup inside a quoted
// label.
func mermaidLabel(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;").Replace(s)
}

// Mermaid renders a flowchart: one subgraph per sub-topology, topics as
// stadium shapes, stores as cylinders joined to their processors by dotted
// lines.
func (g *Graph) Mermaid() string {
	var b strings.Builder
	x := newIDs()
	b.WriteString("flowchart TD\n")
	for i, sub := range g.Subs {
		fmt.Fprintf(&b, "  subgraph sub%d [\"Sub-topology %d\"]\n", i, i)
		for _, n := range sub {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", x.id("n_", n.Name), mermaidLabel(n.Name))
		}
		b.WriteString("  end\n")
	}
	g.writeEdges(&b, x, edgeSyntax{
		topic:     func(id, name string) string { return fmt.Sprintf("  %s([\"%s\"])\n", id, mermaidLabel(name)) },
		store:     func(id, name string) string { return fmt.Sprintf("  %s[(\"%s\")]\n", id, mermaidLabel(name)) },
		edge:      "  %s --> %s\n",
		storeEdge: "  %s -.- %s\n",
	})
	return b.String()
}

// edgeSyntax is how a picture format declares topics and stores and draws
// the edges between them and the nodes.
type edgeSyntax struct {
	topic, store    func(id, name string) string
	edge, storeEdge string // formats of two IDs
}

// writeEdges declares every topic and store once and draws every edge, in
// the graph's order, so each format shows the same picture.
func (g *Graph) writeEdges(b *strings.Builder, x *ids, syn edgeSyntax) {
	topics, stores := map[string]bool{}, map[string]bool{}
	for _, sub := range g.Subs {
		for _, n := range sub {
			shown := n.Topics
			if n.Extractor != "" {
				shown = []string{n.Extractor} // the pictures draw the chooser as the topic
			}
			for _, t := range shown {
				if !topics[t] {
					topics[t] = true
					b.WriteString(syn.topic(x.id("t_", t), t))
				}
				if n.Kind == Source {
					fmt.Fprintf(b, syn.edge, x.id("t_", t), x.id("n_", n.Name))
				} else {
					fmt.Fprintf(b, syn.edge, x.id("n_", n.Name), x.id("t_", t))
				}
			}
			for _, s := range n.Stores {
				if !stores[s] {
					stores[s] = true
					b.WriteString(syn.store(x.id("s_", s), s))
				}
				fmt.Fprintf(b, syn.storeEdge, x.id("n_", n.Name), x.id("s_", s))
			}
			for _, c := range n.Children {
				fmt.Fprintf(b, syn.edge, x.id("n_", n.Name), x.id("n_", c))
			}
		}
	}
}

// dotQuote quotes s as a Graphviz ID.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// Dot renders a Graphviz digraph: one cluster per sub-topology, sources and
// sinks as rounded boxes, processors as boxes, topics as ellipses, stores
// as cylinders joined to their processors by dashed lines. Render it with
// `dot -Tsvg`.
func (g *Graph) Dot() string {
	var b strings.Builder
	x := newIDs()
	b.WriteString("digraph topology {\n")
	b.WriteString("  rankdir=TB;\n")
	b.WriteString("  graph [fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for i, sub := range g.Subs {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n", i)
		fmt.Fprintf(&b, "    label=%s;\n", dotQuote(fmt.Sprintf("Sub-topology %d", i)))
		b.WriteString("    style=rounded;\n")
		for _, n := range sub {
			style := "shape=box"
			if n.Kind != Processor {
				style = "shape=box, style=rounded"
			}
			fmt.Fprintf(&b, "    %s [label=%s, %s];\n", x.id("n_", n.Name), dotQuote(n.Name), style)
		}
		b.WriteString("  }\n")
	}
	g.writeEdges(&b, x, edgeSyntax{
		topic: func(id, name string) string {
			return fmt.Sprintf("  %s [label=%s, shape=ellipse];\n", id, dotQuote(name))
		},
		store: func(id, name string) string {
			return fmt.Sprintf("  %s [label=%s, shape=cylinder];\n", id, dotQuote(name))
		},
		edge:      "  %s -> %s;\n",
		storeEdge: "  %s -> %s [style=dashed, arrowhead=none];\n",
	})
	b.WriteString("}\n")
	return b.String()
}
