package gen

import (
	"sort"

	"github.com/streamgen/streamgen/internal/topodesc"
	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/internal/unionfind"
	"github.com/streamgen/streamgen/spec"
)

// Describe renders the topology of prog in the spirit of Kafka Streams'
// Topology#describe: sub-topologies, each with its sources, processors (and
// the stores they use) and sinks. format is "text", "mermaid" or "dot"
// (internal/topodesc renders all three). The text is also embedded into
// generated code; an application's `describe` command parses it back and
// renders the same pictures, so it prints exactly what `streamgen describe`
// does in every format.
func Describe(prog *spec.Program, format string) (string, error) {
	return DescribeGraph(prog).Render(format)
}

// DescribeGraph is the topology of prog as the renderers see it.
func DescribeGraph(prog *spec.Program) *topodesc.Graph {
	return buildDescribeGraph(prog).export()
}

// dnode is one line of the description: a source, processor or sink.
type dnode struct {
	name      string
	kind      string // Source, Processor, Sink
	topics    []string
	extractor string
	stores    []string
	children  []*dnode
	parents   []*dnode
	sub       int
	order     int
	global    bool // the processor of a global table
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
	if i == 0 && n.Repartition != nil && (n.Op == spec.OpRepartition || n.Op == spec.OpGroupByKey || n.Op == spec.OpToTable) {
		return n.Repartition
	}
	return nil
}

func buildDescribeGraph(prog *spec.Program) *describeGraph {
	g := &describeGraph{}
	add := g.add
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
				// A table: Kafka Streams' source plus the processor that
				// materializes it (sgstream.TableSourceSuffix).
				p := add(n.Name+"-table-source", "Processor")
				p.stores = []string{n.Store.Name}
				p.global = n.Shape == spec.ShapeGlobalTable
				link(d, p)
				d = p
			}
			out[n] = d
			continue
		case n.Op == spec.OpWindowedBy || (n.Op == spec.OpGroupByKey && n.Repartition == nil):
			out[n] = out[n.Inputs[0]] // no node: the runtime only changes the handle's type
			continue
		case n.Op == spec.OpRepartition || (n.Op == spec.OpGroupByKey && n.Repartition != nil):
			out[n] = g.repartition(prog, n.Repartition, out[n.Inputs[0]], link)
			continue
		case n.Op == spec.OpGroupBy:
			sel := add(n.Repartition.Name, "Processor")
			link(out[n.Inputs[0]], sel)
			out[n] = g.repartition(prog, n.Repartition, sel, link)
			continue
		case n.Op == spec.OpTo:
			d := add(n.Name, "Sink")
			if n.Sink.Topic != nil {
				d.topics = []string{n.Sink.Topic.Name}
			} else {
				d.extractor = "<chosen per record>"
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
				link(g.repartition(prog, rp, out[in], link), d)
				continue
			}
			if p := out[in]; p != nil && !p.global { // a global table is looked up, not read
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

// repartition adds the sink and source of a repartition topic after from
// and returns the source.
func (g *describeGraph) repartition(prog *spec.Program, rp *spec.Repartition, from *dnode, link func(a, b *dnode)) *dnode {
	topic := toponame.Repartition(rp.Name)
	sink := g.add(toponame.RepartitionSink(rp.Name), topodesc.Sink)
	sink.topics = []string{topic}
	link(from, sink)
	src := g.add(toponame.RepartitionSource(rp.Name), topodesc.Source)
	src.topics = []string{topic}
	return src
}

func (g *describeGraph) add(name, kind string) *dnode {
	d := &dnode{name: name, kind: kind, order: len(g.nodes)}
	g.nodes = append(g.nodes, d)
	return d
}

// assignSubTopologies groups nodes connected by edges or shared stores.
func (g *describeGraph) assignSubTopologies() {
	sets := unionfind.New(len(g.nodes))
	find, union := sets.Find, sets.Union
	storeOwner := map[string]int{}
	global := map[string]bool{} // a global table's store joins no sub-topology
	for _, d := range g.nodes {
		if d.global {
			for _, s := range d.stores {
				global[s] = true
			}
		}
	}
	for _, d := range g.nodes {
		for _, c := range d.children {
			union(d.order, c.order)
		}
		for _, s := range d.stores {
			if global[s] && !d.global {
				continue
			}
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

// export converts the graph for the renderers, in sub-topology order.
// Stores of table sources are left out: the text, which the generated
// binary renders its pictures from, has never shown them (Kafka Streams
// shows a source's topics only), and every format must agree.
func (g *describeGraph) export() *topodesc.Graph {
	out := &topodesc.Graph{Global: make([]bool, len(g.subs))}
	for i, sub := range g.subs {
		var ns []*topodesc.Node
		for _, d := range sub {
			out.Global[i] = out.Global[i] || d.global
			n := &topodesc.Node{Name: d.name, Kind: d.kind, Topics: d.topics, Extractor: d.extractor}
			if d.kind == "Processor" {
				n.Stores = d.stores
			}
			for _, c := range d.children {
				n.Children = append(n.Children, c.name)
			}
			sort.Strings(n.Children)
			ns = append(ns, n)
		}
		out.Subs = append(out.Subs, ns)
	}
	out.Order()
	return out
}

// nodeStores lists the stores a node uses, in a fixed order.
func nodeStores(n *spec.Node) []*spec.Store {
	var out []*spec.Store
	if n.Store != nil {
		out = append(out, n.Store)
	}
	out = append(out, n.Stores...)
	if j := n.Join; j != nil {
		if j.Shape == spec.JoinStreamTable && len(n.Inputs) > 1 && n.Inputs[1].Store != nil {
			out = append(out, n.Inputs[1].Store) // the join looks the table up
		}
		for _, s := range []*spec.Store{j.ThisStore, j.OtherStore, j.OuterStore, j.SubscriptionStore} {
			if s != nil {
				out = append(out, s)
			}
		}
	}
	return out
}
