package gen

import (
	"strings"

	"github.com/streamgen/streamgen/internal/topodesc"
	"github.com/streamgen/streamgen/internal/topograph"
	"github.com/streamgen/streamgen/spec"
)

// Describe renders the topology of prog as Kafka Streams' Topology#describe
// does: sub-topologies, each with its sources, processors (and the stores
// they use) and sinks. format is "text", "mermaid" or "dot"
// (internal/topodesc renders all three). The text is also embedded into
// generated code; an application's `describe` command renders the graph
// its runtime builds, which is the same graph: both are built through
// internal/topograph's layouts.
func Describe(prog *spec.Program, format string) (string, error) {
	if err := nodeNameCollisions(prog).err(); err != nil {
		return "", err
	}
	return DescribeGraph(prog).Render(format)
}

// DescribeGraph is the topology of prog as the renderers see it.
func DescribeGraph(prog *spec.Program) *topodesc.Graph {
	g := TopologyGraph(prog)
	g.Finalise()
	return g.Describe()
}

// TopologyGraph is the structural graph the runtime builds for prog: the IR
// replayed through topograph's layouts with the names, stores and topics
// the generated code passes the runtime's operators (see the op_*.go
// emitters), in the order the generated code calls them.
func TopologyGraph(prog *spec.Program) *topograph.Graph {
	r := newReplay(prog)
	for _, n := range prog.Nodes {
		r.node(prog, n)
	}
	return r.g
}

func newReplay(prog *spec.Program) *replay {
	return &replay{g: topograph.New(prog.App.ID), out: map[*spec.Node]*topograph.Node{}, store: map[*spec.Node]string{}}
}

// replay holds, for every IR node replayed, the graph node its readers
// attach to and, for a table, the store it is looked up in ("" when it is
// not materialized), as the runtime's handles do.
type replay struct {
	g     *topograph.Graph
	out   map[*spec.Node]*topograph.Node
	store map[*spec.Node]string
}

// in is the graph node of n's i-th input.
func (r *replay) in(n *spec.Node, i int) *topograph.Node { return r.out[n.Inputs[i]] }

// repartitioned is the graph node n's i-th input is read from: through the
// repartition rp when it is set (topoGen.repartitioned).
func (r *replay) repartitioned(n *spec.Node, i int, rp *spec.Repartition) *topograph.Node {
	if rp == nil {
		return r.in(n, i)
	}
	_, src := r.g.Repartition(rp.Name, rp.Partitions, r.in(n, i))
	return src
}

// node replays one IR node as its emitter in opTable wires it.
func (r *replay) node(prog *spec.Program, n *spec.Node) {
	g := r.g
	switch n.Op {
	case spec.OpSource:
		r.source(n)
	case spec.OpTo:
		r.sink(prog, n)
	case spec.OpBranch:
		// added with its split
	case spec.OpSplit:
		var names []string
		for _, br := range n.Branches {
			names = append(names, br.Name)
		}
		split, outs := g.Split(n.Name, r.in(n, 0), names)
		for i, br := range n.Branches {
			r.out[br] = outs[i]
		}
		r.out[n] = split
	case spec.OpMerge:
		var ins []*topograph.Node
		for i := range n.Inputs {
			ins = append(ins, r.in(n, i))
		}
		r.out[n] = g.Add(n.Name, "merge", ins...)
	case spec.OpRepartition:
		_, r.out[n] = g.Repartition(n.Repartition.Name, n.Repartition.Partitions, r.in(n, 0))
	case spec.OpToTable:
		r.out[n] = g.Stateful(n.Name, "to_table", r.repartitioned(n, 0, n.Repartition), n.Store.Name)
		r.store[n] = n.Store.Name
	case spec.OpGroupByKey:
		r.out[n] = r.repartitioned(n, 0, n.Repartition)
	case spec.OpGroupBy:
		op := "select_key"
		if n.Inputs[0].Shape == spec.ShapeTable {
			op = "table_group_by"
		}
		_, _, r.out[n] = g.GroupBy(n.Repartition.Name, op, r.in(n, 0))
	case spec.OpWindowedBy:
		r.out[n] = r.in(n, 0) // windowing adds no node
	case spec.OpSuppress:
		r.out[n] = g.Suppress(n.Suppress.Name, r.in(n, 0))
	case spec.OpCount, spec.OpReduce, spec.OpAggregate:
		r.out[n] = g.Stateful(n.Name, string(n.Op), r.in(n, 0), n.Store.Name)
		r.store[n] = n.Store.Name
	case spec.OpCogroup:
		var ins []*topograph.Node
		for _, c := range n.Cogroup {
			ins = append(ins, r.out[c.Input])
		}
		r.out[n], _ = g.Cogroup(n.Name, "cogroup_aggregate", ins, n.Store.Name)
		r.store[n] = n.Store.Name
	case spec.OpJoin:
		r.join(n)
	case spec.OpProcess, spec.OpProcessValues:
		var stores []string
		for _, st := range n.Stores {
			stores = append(stores, st.Name)
		}
		r.out[n] = g.Process(n.Name, string(n.Op), r.in(n, 0), stores)
	default:
		// A one-node operator: filter, map, flat_map, peek, foreach,
		// to_stream... on a stream or a table.
		r.out[n] = g.Add(n.Name, string(n.Op), r.in(n, 0))
	}
}

// source replays a stream, table or global table source (topoGen.source).
func (r *replay) source(n *spec.Node) {
	t := n.Topic
	topic := topograph.Topic{Name: t.Name, Partitions: t.Partitions}
	switch t.Kind {
	case spec.TopicTable:
		r.out[n] = r.g.TableSource(n.Name, topic, t.Store.Name)
		r.store[n] = t.Store.Name
	case spec.TopicGlobalTable:
		r.out[n] = r.g.GlobalTableSource(n.Name, topic, t.Store.Name)
	default:
		r.out[n] = r.g.Source(n.Name, topic)
	}
}

// sink replays To, or ToDynamic with the topics it may choose from
// (topoGen.sink).
func (r *replay) sink(prog *spec.Program, n *spec.Node) {
	in := n.Inputs[0]
	windowed := keyWindow(in) != nil
	if t := n.Sink.Topic; t != nil {
		r.out[n] = r.g.Sink(n.Name, topograph.Topic{Name: t.Name, Windowed: windowed}, r.in(n, 0))
		return
	}
	var topics []topograph.Topic
	for _, name := range dynamicTopics(prog, in) {
		topics = append(topics, topograph.Topic{Name: name, Windowed: windowed})
	}
	r.out[n] = r.g.DynamicSink(n.Name, topics, r.in(n, 0))
}

// join replays a join of its shape after the repartitions of its sides
// (topoGen.join).
func (r *replay) join(n *spec.Node) {
	j, g := n.Join, r.g
	if j.Shape == spec.JoinStreamStream {
		left := r.repartitioned(n, 0, j.ThisRepartition)
		right := r.repartitioned(n, 1, j.OtherRepartition)
		r.out[n] = g.StreamJoin(streamJoinName(n), j.StoreName, left, right, j.Kind == spec.JoinLeft, j.Kind == spec.JoinOuter)
		return
	}
	rp := j.ThisRepartition
	if rp == nil {
		rp = n.Repartition
	}
	left, right := r.repartitioned(n, 0, rp), r.in(n, 1)
	lstore, rstore := r.store[n.Inputs[0]], r.store[n.Inputs[1]]
	result := ""
	if n.Store != nil {
		result = n.Store.Name
	}
	switch j.Shape {
	case spec.JoinStreamTable:
		r.out[n] = g.StreamTableJoin(joinName(n), left, right, rstore)
		if j.HasTableGrace {
			g.Use(r.out[n], joinName(n)+"-Buffer") // sgstream.GraceBufferStore
		}
	case spec.JoinStreamGlobal:
		r.out[n] = g.StreamGlobalJoin(n.Name, left)
	case spec.JoinTableTable:
		r.out[n] = g.TableJoin(joinName(n), left, right, lstore, rstore, result)
		r.store[n] = result
	case spec.JoinForeignKey:
		r.out[n] = g.ForeignKeyJoin(fkJoinName(n), left, right, lstore, rstore, result).Result
		r.store[n] = result
	}
}

// joinName is the name a stream-table or table-table join is built with:
// its own name when the step has one, which Kafka Streams names the join's
// processors after, else the node's.
func joinName(n *spec.Node) string {
	if n.Join.Name != "" {
		return n.Join.Name
	}
	return n.Name
}

// streamJoinName is the name a stream-stream join is built with: its step
// name, which every stream-stream join has (its processors, and its stores
// unless it has a store name, are named after it).
func streamJoinName(n *spec.Node) string { return n.Join.Name }

// fkJoinName is the name a foreign-key join is built with: its
// subscription store is <name>-subscriptions.
func fkJoinName(n *spec.Node) string {
	return strings.TrimSuffix(n.Join.SubscriptionStore.Name, "-subscriptions")
}
