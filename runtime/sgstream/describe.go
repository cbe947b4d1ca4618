package sgstream

import (
	"slices"

	"github.com/streamgen/streamgen/internal/topodesc"
	"github.com/streamgen/streamgen/internal/toponame"
)

// Ops the description treats specially (NodeInfo.Op).
const (
	OpSink              = "sink"
	OpDynamicSink       = "dynamic_sink"
	OpTableSource       = "table_source"
	OpGlobalTableSource = "global_table_source"
)

// DynamicSinkExtractor is what the description prints for the topic of a
// sink whose topic is chosen per record (where Kafka Streams prints the
// class of the TopicNameExtractor).
const DynamicSinkExtractor = "<chosen per record>"

// TableSourceSuffix names the processor that materializes a table source:
// Kafka Streams describes builder.table(topic, Consumed.as(name)) as the
// source name and the processor name + "-table-source", and so does this.
const TableSourceSuffix = "-table-source"

// Describe is the topology as Kafka Streams' Topology#describe shows it,
// built from the graph this topology runs: the same sub-topologies with the
// same numbers (which are the sub-topology part of the task ids), the same
// nodes, and internal topics by their raw names (without the application
// id), as Kafka Streams prints them. A generated binary's `describe`
// renders it, and `streamgen describe` must render the same (golden tests
// compare them).
func (tp *Topology) Describe() *topodesc.Graph {
	g := &topodesc.Graph{Subs: make([][]*topodesc.Node, len(tp.subs)), Global: make([]bool, len(tp.subs))}
	out := make([]*topodesc.Node, len(tp.nodes)) // the node a NodeInfo's children hang off
	add := func(sub int, n *topodesc.Node) *topodesc.Node {
		g.Subs[sub] = append(g.Subs[sub], n)
		return n
	}
	for _, n := range tp.nodes {
		var d *topodesc.Node
		switch {
		case n.Op == OpTableSource || n.Op == OpGlobalTableSource:
			src := add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Source, Topics: tp.rawTopics(n.Reads)})
			d = add(n.Sub, &topodesc.Node{Name: n.Name + TableSourceSuffix, Kind: topodesc.Processor, Stores: sortedSet(n.Stores)})
			src.Children = []string{d.Name}
			g.Global[n.Sub] = n.Op == OpGlobalTableSource
		case len(n.Reads) > 0:
			d = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Source, Topics: tp.rawTopics(n.Reads)})
		case n.Op == OpDynamicSink:
			d = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Sink, Extractor: DynamicSinkExtractor})
		case n.Op == OpSink:
			d = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Sink, Topics: tp.rawTopics(n.Writes)})
		default:
			d = add(n.Sub, &topodesc.Node{Name: n.Name, Kind: topodesc.Processor, Stores: sortedSet(n.Stores)})
		}
		out[n.ID] = d
		for _, p := range n.Parents {
			if !slices.Contains(out[p].Children, d.Name) {
				out[p].Children = append(out[p].Children, d.Name)
			}
		}
	}
	g.Order()
	return g
}

// rawTopics names topics as a topology does: internal topics without the
// application id.
func (tp *Topology) rawTopics(topics []string) []string {
	out := make([]string, len(topics))
	for i, t := range topics {
		out[i] = t
		if ts := tp.topics[t]; ts != nil && ts.Role != TopicExternal && ts.Role != TopicGlobal {
			out[i] = toponame.Raw(tp.appID, t)
		}
	}
	return out
}

// sortedSet is names sorted without duplicates (Kafka Streams keeps a
// processor's stores in a set).
func sortedSet(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
