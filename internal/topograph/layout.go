package topograph

import (
	"fmt"

	"github.com/streamgen/streamgen/internal/toponame"
)

// The node layouts of the operators: which nodes each adds, their names,
// edges, topics and stores. The runtime's operators call them and attach
// their typed processors to the nodes returned; gen replays the IR through
// them. Table arguments come with the store the table is looked up in ("" when
// it is not materialized), which a lookup joins the table's sub-topology by.

// Source adds a node reading topic t.
func (g *Graph) Source(name string, t Topic) *Node {
	n := g.Add(name, OpSource)
	g.AddTopic(t)
	g.Read(n, t.Name)
	return n
}

// TableSource adds a source that materializes topic t in store.
func (g *Graph) TableSource(name string, t Topic, store string) *Node {
	n := g.Add(name, OpTableSource)
	g.AddTopic(t)
	g.Use(n, store)
	g.Read(n, t.Name)
	return n
}

// GlobalTableSource adds the source of a global table: a sub-topology of
// its own, which no other node joins (lookups go through the task's global
// store, not through a store of the graph).
func (g *Graph) GlobalTableSource(name string, t Topic, store string) *Node {
	t.Role = TopicGlobal
	n := g.Add(name, OpGlobalTableSource)
	g.AddTopic(t)
	g.Use(n, store)
	g.Read(n, t.Name)
	return n
}

// Sink adds a node writing topic t.
func (g *Graph) Sink(name string, t Topic, from *Node) *Node {
	n := g.Add(name, OpSink, from)
	g.AddTopic(t)
	g.Write(n, t.Name)
	return n
}

// DynamicSink adds a node writing each record to one of topics.
func (g *Graph) DynamicSink(name string, topics []Topic, from *Node) *Node {
	n := g.Add(name, OpDynamicSink, from)
	for _, t := range topics {
		g.AddTopic(t)
		g.Write(n, t.Name)
	}
	return n
}

// Repartition adds the sink <name>-sink writing the repartition topic
// <app id>-<name>-repartition and the source <name>-source reading it back
// (Kafka Streams' repartition(Repartitioned.as(name))).
func (g *Graph) Repartition(name string, partitions int, from *Node) (sink, source *Node) {
	t := Topic{Name: g.InternalTopic(toponame.Repartition(name)), Role: TopicRepartition, Partitions: partitions}
	sink = g.Sink(toponame.RepartitionSink(name), t, from)
	source = g.Source(toponame.RepartitionSource(name), t)
	return sink, source
}

// GroupBy adds the key selection name (op select_key on a stream,
// table_group_by on a table) and the repartition through which it groups.
func (g *Graph) GroupBy(name, op string, from *Node) (sel, sink, source *Node) {
	sel = g.Add(name, op, from)
	sink, source = g.Repartition(name, 0, sel)
	return sel, sink, source
}

// Stateful adds a node that keeps its state in store: an aggregation,
// to_table, a windowed aggregation.
func (g *Graph) Stateful(name, op string, from *Node, store string) *Node {
	n := g.Add(name, op, from)
	g.Use(n, store)
	return n
}

// Process adds a Processor API step using stores.
func (g *Graph) Process(name, op string, from *Node, stores []string) *Node {
	n := g.Add(name, op, from)
	g.Use(n, stores...)
	return n
}

// SuppressStore is the buffer store of the suppression called name.
func SuppressStore(name string) string { return toponame.SuppressStore(name) }

// Suppress adds a suppression and its buffer store.
func (g *Graph) Suppress(name string, from *Node) *Node {
	return g.Stateful(name, "suppress", from, SuppressStore(name))
}

// StreamJoinStores are the stores of the stream-stream join called name:
// the window stores of each side's records and, for left and outer joins,
// the store of records still unmatched.
func StreamJoinStores(name string, outer bool) (this, other, unmatched string) {
	this, other = name+"-this", name+"-other"
	if outer {
		unmatched = name + "-outer"
	}
	return this, other, unmatched
}

// StreamJoin adds a stream-stream join of left and right with its stores
// (outer: a left or outer join).
func (g *Graph) StreamJoin(name string, left, right *Node, outer bool) *Node {
	n := g.Add(name, "join", left, right)
	this, other, unmatched := StreamJoinStores(name, outer)
	g.Use(n, this, other, unmatched)
	return n
}

// StreamTableJoin adds a stream-table join. The table is a parent so that
// the join runs in the table's sub-topology, where the stores it looks up
// are open.
func (g *Graph) StreamTableJoin(name string, stream, table *Node, tableStore string) *Node {
	n := g.Add(name, "join", stream, table)
	g.Use(n, tableStore)
	return n
}

// StreamGlobalJoin adds a stream-global table join: the global table is no
// parent (it is looked up through the task's global store).
func (g *Graph) StreamGlobalJoin(name string, stream *Node) *Node {
	return g.Add(name, "join", stream)
}

// TableJoin adds a table-table join looking both sides up, materialized in
// store unless it is "".
func (g *Graph) TableJoin(name string, left, right *Node, leftStore, rightStore, store string) *Node {
	n := g.Add(name, "join", left, right)
	g.Use(n, leftStore, rightStore, store)
	return n
}

// Cogroup adds the node of every input, <name>-cogroup-agg-<i>, each
// writing store, and the merge node name that passes their updates on
// (Kafka's KTablePassThrough) and which the table hangs off.
func (g *Graph) Cogroup(name, op string, inputs []*Node, store string) (merge *Node, aggs []*Node) {
	for i, in := range inputs {
		aggs = append(aggs, g.Stateful(fmt.Sprintf("%s-cogroup-agg-%d", name, i), op, in, store))
	}
	merge = g.Add(name, "cogroup_merge", aggs...)
	g.Use(merge, store)
	return merge, aggs
}
