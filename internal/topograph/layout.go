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

// OpRepartitionFilter is the op of the filter before a stream's
// repartition sink: Kafka Streams' KStreamFilter that passes every record,
// kept so that the graph is Kafka's; it has no processor of its own.
const OpRepartitionFilter = "repartition_filter"

// Repartition routes a stream through the repartition topic
// <app id>-<name>-repartition as Kafka Streams' KStreamImpl does for
// repartition(), a key-changing grouping and a join: a filter
// <name>-repartition-filter, the sink <name>-repartition-sink and the
// source <name>-repartition-source reading the topic back.
func (g *Graph) Repartition(name string, partitions int, from *Node) (sink, source *Node) {
	t := Topic{Name: g.InternalTopic(toponame.Repartition(name)), Role: TopicRepartition, Partitions: partitions}
	filter := g.Add(toponame.RepartitionFilter(name), OpRepartitionFilter, from)
	sink = g.Sink(toponame.RepartitionSink(name), t, filter)
	source = g.Source(toponame.RepartitionSource(name), t)
	return sink, source
}

// GroupBy adds the key selection name (op select_key on a stream,
// table_group_by on a table) and the repartition through which it groups:
// a stream's, or a table's <name>-sink and <name>-source (Kafka Streams'
// KGroupedTable, which has no filter).
func (g *Graph) GroupBy(name, op string, from *Node) (sel, sink, source *Node) {
	sel = g.Add(name, op, from)
	if op == "select_key" {
		sink, source = g.Repartition(name, 0, sel)
		return sel, sink, source
	}
	t := Topic{Name: g.InternalTopic(toponame.Repartition(name)), Role: TopicRepartition}
	sink = g.Sink(toponame.TableRepartitionSink(name), t, sel)
	source = g.Source(toponame.TableRepartitionSource(name), t)
	return sel, sink, source
}

// Split adds a split and its branches as Kafka Streams'
// split(Named.as("<name>-")) with Branched.as(branch) names them: the split
// processor "<name>-" and each branch "<name>-<branch>".
func (g *Graph) Split(name string, from *Node, branches []string) (split *Node, outs []*Node) {
	split = g.Add(name+"-", "split", from)
	for _, br := range branches {
		outs = append(outs, g.Add(name+"-"+br, "branch", split))
	}
	return split, outs
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

// StreamJoinStores are the stores of a stream-stream join: the window
// stores of each side's records and, for left and outer joins, the store of
// records still unmatched. By default they are named after the join name:
// <name>-this, <name>-other and <name>-outer. With storeName set they have
// the names Kafka Streams gives them for StreamJoined.withStoreName(storeName)
// (KStreamImplJoin, OuterStreamJoinStoreFactory): each window store is named
// after its side's join processor plus "-store", and the unmatched store
// <storeName>-left-shared-join-store for a left join,
// <storeName>-outer-shared-join-store for an outer one.
func StreamJoinStores(name, storeName string, leftJoin, outerJoin bool) (this, other, unmatched string) {
	if storeName == "" {
		this, other = name+"-this", name+"-other"
		if leftJoin || outerJoin {
			unmatched = name + "-outer"
		}
		return this, other, unmatched
	}
	thisJoin, otherJoin := streamJoinSuffixes(leftJoin, outerJoin)
	this, other = storeName+thisJoin+"-store", storeName+otherJoin+"-store"
	switch {
	case outerJoin:
		unmatched = storeName + "-outer-shared-join-store"
	case leftJoin:
		unmatched = storeName + "-left-shared-join-store"
	}
	return this, other, unmatched
}

// streamJoinSuffixes are the suffixes of a stream-stream join's two join
// processors: "-this-join" and "-other-join", with "-outer" before the side
// that emits unmatched records (the right side of a left join, both of an
// outer join), as KStreamImplJoin names them.
func streamJoinSuffixes(leftJoin, outerJoin bool) (thisJoin, otherJoin string) {
	thisJoin, otherJoin = "-this-join", "-other-join"
	if outerJoin {
		thisJoin = "-outer-this-join"
	}
	if leftJoin || outerJoin {
		otherJoin = "-outer-other-join"
	}
	return thisJoin, otherJoin
}

// StreamJoin adds a stream-stream join of left and right as Kafka
// Streams' KStreamImplJoin lays it out: each side is written to its window
// store (<name>-this-windowed, <name>-other-windowed), then joined with the
// other side's store (<name>-this-join, <name>-other-join; see
// streamJoinSuffixes), and <name>-merge merges the two. storeName names the
// stores (StreamJoinStores); leftJoin and outerJoin say which kind it is.
// It returns the merge, which the joined stream hangs off.
func (g *Graph) StreamJoin(name, storeName string, left, right *Node, leftJoin, outerJoin bool) *Node {
	this, other, unmatched := StreamJoinStores(name, storeName, leftJoin, outerJoin)
	thisW := g.Stateful(name+"-this-windowed", "join_this_windowed", left, this)
	otherW := g.Stateful(name+"-other-windowed", "join_other_windowed", right, other)
	thisJoin, otherJoin := streamJoinSuffixes(leftJoin, outerJoin)
	tj := g.Add(name+thisJoin, "join_this", thisW)
	g.Use(tj, other, unmatched)
	oj := g.Add(name+otherJoin, "join_other", otherW)
	g.Use(oj, this, unmatched)
	return g.Add(name+"-merge", "join_merge", tj, oj)
}

// StreamTableJoin adds a stream-table join. The table is no parent (its
// updates never reach the join, and Kafka Streams draws no edge) but a
// peer, so that the join runs in the table's sub-topology, where the
// stores it looks up are open.
func (g *Graph) StreamTableJoin(name string, stream, table *Node, tableStore string) *Node {
	n := g.Add(name, "join", stream)
	n.Peers = append(n.Peers, table.ID)
	g.Use(n, tableStore)
	return n
}

// StreamGlobalJoin adds a stream-global table join: the global table is no
// parent (it is looked up through the task's global store).
func (g *Graph) StreamGlobalJoin(name string, stream *Node) *Node {
	return g.Add(name, "join", stream)
}

// TableJoin adds a table-table join as Kafka Streams' KTableImpl does: an
// update of the left table looks the right one up in <name>-join-this, an
// update of the right table looks the left one up in <name>-join-other,
// and both feed the merge node name, materialized in store unless it is "".
// It returns the merge, which the joined table hangs off.
func (g *Graph) TableJoin(name string, left, right *Node, leftStore, rightStore, store string) *Node {
	this := g.Add(name+"-join-this", "table_join_this", left)
	g.Use(this, rightStore)
	other := g.Add(name+"-join-other", "table_join_other", right)
	g.Use(other, leftStore)
	merge := g.Add(name, "table_join_merge", this, other)
	g.Use(merge, store)
	return merge
}

// Cogroup adds the node of every input, <name>-cogroup-agg-<i>, each
// writing store, and the merge node name that passes their updates on
// (Kafka's KTablePassThrough) and which the table hangs off.
func (g *Graph) Cogroup(name, op string, inputs []*Node, store string) (merge *Node, aggs []*Node) {
	for i, in := range inputs {
		aggs = append(aggs, g.Stateful(fmt.Sprintf("%s-cogroup-agg-%d", name, i), op, in, store))
	}
	// The merge uses no store: Kafka Streams' KTablePassThrough reads the
	// aggregations' store through their value getters.
	merge = g.Add(name, "cogroup_merge", aggs...)
	return merge, aggs
}
