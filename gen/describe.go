package gen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamgen/streamgen/internal/unionfind"
	"github.com/streamgen/streamgen/spec"
)

// Describe renders the topology of prog in the spirit of Kafka Streams'
// Topology#describe: sub-topologies, each with its sources, processors (and
// the stores they use) and sinks. format is "text" or "mermaid". The text is
// also embedded into generated code so an application's `describe` command
// prints exactly what `streamgen describe` does.
func Describe(prog *spec.Program, format string) (string, error) {
	g := buildDescribeGraph(prog)
	switch format {
	case "text", "":
		return g.text(), nil
	case "mermaid":
		return g.mermaid(), nil
	}
	return "", fmt.Errorf("streamgen: unknown describe format %q (want text or mermaid)", format)
}

// dnode is one line of the description: a source, processor or sink.
type dnode struct {
	name     string
	kind     string // Source, Processor, Sink
	topics   []string
	stores   []string
	children []*dnode
	parents  []*dnode
	sub      int
	order    int
}

type describeGraph struct {
	nodes []*dnode
	subs  [][]*dnode
}

// inputRepartition is the repartition topic a node reads its i-th input
// through, or nil; a repartition starts a new sub-topology.
func inputRepartition(n *spec.Node, i int) *spec.Repartition {
	if j := n.Join; j != nil {
		switch {
		case i == 0 && j.ThisRepartition != nil:
			return j.ThisRepartition
		case i == 1 && j.OtherRepartition != nil:
			return j.OtherRepartition
		case i == 0 && n.Repartition != nil:
			return n.Repartition
		}
		return nil
	}
	if i == 0 && n.Repartition != nil && (n.Op == spec.OpRepartition || n.Op == spec.OpGroupBy || n.Op == spec.OpGroupByKey || n.Op == spec.OpToTable) {
		return n.Repartition
	}
	return nil
}

func buildDescribeGraph(prog *spec.Program) *describeGraph {
	g := &describeGraph{}
	add := func(name, kind string) *dnode {
		d := &dnode{name: name, kind: kind, order: len(g.nodes)}
		g.nodes = append(g.nodes, d)
		return d
	}
	link := func(from, to *dnode) {
		from.children = append(from.children, to)
		to.parents = append(to.parents, from)
	}
	// out maps an IR node to the description node its readers attach to.
	out := map[*spec.Node]*dnode{}
	for _, n := range prog.Nodes {
		switch {
		case n.Op == spec.OpSource:
			d := add(n.Name, "Source")
			d.topics = []string{n.Topic.Name}
			if n.Store != nil {
				d.stores = []string{n.Store.Name}
			}
			out[n] = d
			continue
		case n.Op == spec.OpTo:
			d := add(n.Name, "Sink")
			if n.Sink.Topic != nil {
				d.topics = []string{n.Sink.Topic.Name}
			} else {
				d.topics = []string{"<chosen per record>"}
			}
			for _, in := range n.Inputs {
				link(out[in], d)
			}
			out[n] = d
			continue
		}
		d := add(n.Name, "Processor")
		for _, s := range nodeStores(n) {
			d.stores = append(d.stores, s.Name)
		}
		for i, in := range n.Inputs {
			if rp := inputRepartition(n, i); rp != nil {
				topic := prog.App.ID + "-" + rp.Name + "-repartition"
				sink := add(rp.Name+"-sink", "Sink")
				sink.topics = []string{topic}
				link(out[in], sink)
				src := add(rp.Name+"-source", "Source")
				src.topics = []string{topic}
				link(src, d)
				continue
			}
			if p := out[in]; p != nil {
				link(p, d)
			}
		}
		for _, c := range n.Cogroup {
			if p := out[c.Input]; p != nil && p != d {
				link(p, d)
			}
		}
		out[n] = d
	}
	g.assignSubTopologies()
	return g
}

// assignSubTopologies groups nodes connected by edges or shared stores.
func (g *describeGraph) assignSubTopologies() {
	sets := unionfind.New(len(g.nodes))
	find, union := sets.Find, sets.Union
	storeOwner := map[string]int{}
	for _, d := range g.nodes {
		for _, c := range d.children {
			union(d.order, c.order)
		}
		for _, s := range d.stores {
			if o, ok := storeOwner[s]; ok {
				union(d.order, o)
			} else {
				storeOwner[s] = d.order
			}
		}
	}
	index := map[int]int{}
	for _, d := range g.nodes {
		r := find(d.order)
		id, ok := index[r]
		if !ok {
			id = len(g.subs)
			index[r] = id
			g.subs = append(g.subs, nil)
		}
		d.sub = id
		g.subs[id] = append(g.subs[id], d)
	}
}

func names(ds []*dnode) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.name
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func (g *describeGraph) text() string {
	var b strings.Builder
	b.WriteString("Topologies:\n")
	for i, sub := range g.subs {
		fmt.Fprintf(&b, "   Sub-topology: %d\n", i)
		for _, d := range sub {
			switch d.kind {
			case "Source":
				fmt.Fprintf(&b, "    Source: %s (topics: [%s])\n", d.name, strings.Join(d.topics, ", "))
			case "Sink":
				fmt.Fprintf(&b, "    Sink: %s (topic: %s)\n", d.name, strings.Join(d.topics, ", "))
			default:
				fmt.Fprintf(&b, "    Processor: %s (stores: [%s])\n", d.name, strings.Join(d.stores, ", "))
			}
			if len(d.children) > 0 {
				fmt.Fprintf(&b, "      --> %s\n", names(d.children))
			} else if d.kind != "Sink" {
				b.WriteString("      --> none\n")
			}
			if len(d.parents) > 0 {
				fmt.Fprintf(&b, "      <-- %s\n", names(d.parents))
			} else if d.kind != "Source" {
				b.WriteString("      <-- none\n")
			}
		}
	}
	return b.String()
}

// mermaid renders a flowchart: topics as stadium shapes, stores as
// cylinders, one subgraph per sub-topology.
func (g *describeGraph) mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	id := func(prefix, name string) string {
		var sb strings.Builder
		sb.WriteString(prefix)
		for _, r := range name {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				sb.WriteRune(r)
			} else {
				sb.WriteByte('_')
			}
		}
		return sb.String()
	}
	topics := map[string]bool{}
	stores := map[string]bool{}
	for i, sub := range g.subs {
		fmt.Fprintf(&b, "  subgraph sub%d [Sub-topology %d]\n", i, i)
		for _, d := range sub {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", id("n_", d.name), d.name)
		}
		b.WriteString("  end\n")
	}
	for _, d := range g.nodes {
		for _, t := range d.topics {
			if !topics[t] {
				topics[t] = true
				fmt.Fprintf(&b, "  %s([\"%s\"])\n", id("t_", t), t)
			}
			if d.kind == "Source" {
				fmt.Fprintf(&b, "  %s --> %s\n", id("t_", t), id("n_", d.name))
			} else {
				fmt.Fprintf(&b, "  %s --> %s\n", id("n_", d.name), id("t_", t))
			}
		}
		for _, s := range d.stores {
			if !stores[s] {
				stores[s] = true
				fmt.Fprintf(&b, "  %s[(\"%s\")]\n", id("s_", s), s)
			}
			fmt.Fprintf(&b, "  %s -.- %s\n", id("n_", d.name), id("s_", s))
		}
		for _, c := range d.children {
			fmt.Fprintf(&b, "  %s --> %s\n", id("n_", d.name), id("n_", c.name))
		}
	}
	return b.String()
}

// nodeStores lists the stores a node uses, in a fixed order.
func nodeStores(n *spec.Node) []*spec.Store {
	var out []*spec.Store
	if n.Store != nil {
		out = append(out, n.Store)
	}
	out = append(out, n.Stores...)
	if j := n.Join; j != nil {
		for _, s := range []*spec.Store{j.ThisStore, j.OtherStore, j.OuterStore, j.SubscriptionStore} {
			if s != nil {
				out = append(out, s)
			}
		}
	}
	return out
}
