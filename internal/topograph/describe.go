package topograph

import (
	"slices"

	"github.com/streamgen/streamgen/internal/topodesc"
	"github.com/streamgen/streamgen/internal/toponame"
)

// DynamicSinkExtractor is what the description prints for the topic of a
// sink whose topic is chosen per record (where Kafka Streams prints the
// class of the TopicNameExtractor).
const DynamicSinkExtractor = "<chosen per record>"

// TableSourceSuffix names the processor that materializes a table source:
// Kafka Streams describes builder.table(topic, Consumed.as(name)) as the
// source name and the processor name + "-table-source", and so does this.
const TableSourceSuffix = "-table-source"

// Describe is the graph as Kafka Streams' Topology#describe shows it: the
// sub-topologies of Finalise with their numbers (the sub-topology part of
// the task ids), every node, and internal topics by their raw names
// (without the application id), as Kafka Streams prints them. Finalise must
// have run.
func (g *Graph) Describe() *topodesc.Graph {
	d := &topodesc.Graph{Subs: make([][]*topodesc.Node, len(g.Subs)), Global: make([]bool, len(g.Subs))}
	out := make([]*topodesc.Node, len(g.Nodes)) // the node a Node's children hang off
	add := func(sub int, n *topodesc.Node) *topodesc.Node {
		d.Subs[sub] = append(d.Subs[sub], n)
		return n
	}
	for _, n := range g.Nodes {
		var dn *topodesc.Node
		switch {
		case n.Op == OpTableSource || n.Op == OpGlobalTableSource:
			src := add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Source, Topics: g.rawTopics(n.Reads)})
			dn = add(n.Sub, &topodesc.Node{Name: n.Name + TableSourceSuffix, Kind: topodesc.Processor, Stores: sortedSet(n.Stores)})
			src.Children = []string{dn.Name}
			d.Global[n.Sub] = n.Op == OpGlobalTableSource
		case len(n.Reads) > 0:
			dn = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Source, Topics: g.rawTopics(n.Reads)})
		case n.Op == OpDynamicSink:
			dn = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Sink, Extractor: DynamicSinkExtractor})
		case n.Op == OpSink:
			dn = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Sink, Topics: g.rawTopics(n.Writes)})
		default:
			dn = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Processor, Stores: sortedSet(n.Stores)})
		}
		out[n.ID] = dn
		for _, p := range n.Parents {
			if !slices.Contains(out[p].Children, dn.Name) {
				out[p].Children = append(out[p].Children, dn.Name)
			}
		}
	}
	d.Order()
	return d
}

// rawTopics names topics as a topology does: internal topics without the
// application id.
func (g *Graph) rawTopics(topics []string) []string {
	out := make([]string, len(topics))
	for i, t := range topics {
		out[i] = t
		if ts := g.Topics[t]; ts != nil && ts.Role != TopicExternal && ts.Role != TopicGlobal {
			out[i] = toponame.Raw(g.AppID, t)
		}
	}
	return out
}
