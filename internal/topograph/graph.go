// Package topograph is the one structural model of a topology: the untyped
// graph of nodes, stores and topics that the runtime builds and runs, with
// its sub-topologies and their numbers, and the node layout of every
// composite operator. The runtime (sgstream) builds it while it wires its
// typed processors onto the nodes the layouts return; the generator (gen)
// builds it by replaying the spec's IR through the same layouts for
// `streamgen describe`. So grouping, numbering, naming and layouts have one
// source, and the two descriptions cannot drift apart.
//
// It imports only the standard library and the other stdlib-only leaves
// (topodesc, toponame, unionfind), so that gen, which must not import the
// runtime, can use it.
package topograph

import (
	"fmt"
	"sort"

	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/internal/unionfind"
)

// Ops the description and the layouts treat specially (Node.Op).
const (
	OpSource            = "source"
	OpSink              = "sink"
	OpDynamicSink       = "dynamic_sink"
	OpTableSource       = "table_source"
	OpGlobalTableSource = "global_table_source"
)

// Node is one node of the graph: what is known about it regardless of its
// Go types, enough to compute sub-topologies, assign tasks, open stores,
// name things in errors and describe the topology.
type Node struct {
	ID      int
	Name    string
	Op      string
	Parents []int
	// Peers are nodes this one must run in the same task with although no
	// record flows between them: a foreign-key join's processors that look
	// the other side's table up. They join sub-topologies as parents do but
	// are no edge of the description.
	Peers  []int
	Reads  []string // topics a source node reads (full names)
	Writes []string // topics a sink node writes (full names)
	Stores []string // stores the node uses
	Sub    int      // sub-topology index, set by Finalise
}

// TopicRole says why the topology touches a topic.
type TopicRole int

const (
	TopicExternal    TopicRole = iota // declared in the spec
	TopicRepartition                  // <app id>-<name>-repartition
	TopicChangelog                    // <app id>-<store>-changelog
	TopicInternal                     // other internal topics (foreign-key joins)
	TopicGlobal                       // read as a global table by a global task
)

// Topic describes a topic the topology reads or writes.
type Topic struct {
	Name       string
	Role       TopicRole
	Partitions int // 0 = not fixed
	// Windowed is set when keys written to the topic are windowed (their
	// partition is chosen from the base key, as Kafka Streams'
	// WindowedStreamPartitioner does).
	Windowed bool
}

// Sub is a connected part of the graph; Kafka Streams runs one task per
// sub-topology and partition, so ID is the sub-topology part of task ids.
type Sub struct {
	ID     int
	Nodes  []int
	Topics []string // source topics, sorted
	Stores []string // sorted
}

// Graph is a topology under construction, and once Finalise ran, its
// sub-topologies.
type Graph struct {
	AppID  string
	Nodes  []*Node
	Topics map[string]*Topic
	Subs   []*Sub
	byName map[string]*Node
	// Errs are the structural errors found while building (a duplicate
	// node name); the runtime reports them with its own.
	Errs []error
}

// New starts the graph of application appID, which prefixes the full names
// of internal topics.
func New(appID string) *Graph {
	return &Graph{AppID: appID, Topics: map[string]*Topic{}, byName: map[string]*Node{}}
}

// Add adds a node with the given parents (nil parents are skipped, so a
// layout may pass an optional input). Names are unique; a duplicate is
// recorded in Errs (generated code never makes one).
func (g *Graph) Add(name, op string, parents ...*Node) *Node {
	n := &Node{ID: len(g.Nodes), Name: name, Op: op}
	for _, p := range parents {
		if p != nil {
			n.Parents = append(n.Parents, p.ID)
		}
	}
	if _, dup := g.byName[name]; dup {
		g.Errs = append(g.Errs, fmt.Errorf("duplicate node name %q", name))
	}
	g.Nodes = append(g.Nodes, n)
	g.byName[name] = n
	return n
}

// Node returns the node called name, or nil.
func (g *Graph) Node(name string) *Node { return g.byName[name] }

// AddTopic declares a topic, merging what is known about it: a fixed
// partition count and windowed keys stick, and an internal role wins over
// external.
func (g *Graph) AddTopic(t Topic) *Topic {
	if old, ok := g.Topics[t.Name]; ok {
		if t.Partitions != 0 {
			old.Partitions = t.Partitions
		}
		old.Windowed = old.Windowed || t.Windowed
		if t.Role != TopicExternal {
			old.Role = t.Role
		}
		return old
	}
	s := t
	g.Topics[t.Name] = &s
	return &s
}

// Use records that node n uses store (declared or not: the stores' typed
// specs are the runtime's business). Stores shared by nodes put them in one
// sub-topology.
func (g *Graph) Use(n *Node, stores ...string) {
	for _, s := range stores {
		if s != "" {
			n.Stores = append(n.Stores, s)
		}
	}
}

// Read marks n as the source of topic.
func (g *Graph) Read(n *Node, topic string) {
	if !contains(n.Reads, topic) {
		n.Reads = append(n.Reads, topic)
	}
}

// Write marks n as a sink writing topic.
func (g *Graph) Write(n *Node, topic string) {
	if !contains(n.Writes, topic) {
		n.Writes = append(n.Writes, topic)
	}
}

// InternalTopic is the full name of the internal topic with raw name raw.
func (g *Graph) InternalTopic(raw string) string { return toponame.Full(g.AppID, raw) }

// Finalise groups the nodes into sub-topologies: nodes connected by parent
// edges, peers or shared stores run together. Groups are numbered in order
// of their first node, as Kafka Streams numbers sub-topologies in the
// order their first node was added.
func (g *Graph) Finalise() []*Sub {
	sets := unionfind.New(len(g.Nodes))
	storeOwner := map[string]int{}
	for _, n := range g.Nodes {
		for _, p := range n.Parents {
			sets.Union(n.ID, p)
		}
		for _, p := range n.Peers {
			sets.Union(n.ID, p)
		}
		for _, s := range n.Stores {
			if o, ok := storeOwner[s]; ok {
				sets.Union(n.ID, o)
			} else {
				storeOwner[s] = n.ID
			}
		}
	}
	index := map[int]*Sub{}
	g.Subs = nil
	for _, n := range g.Nodes {
		r := sets.Find(n.ID)
		s, ok := index[r]
		if !ok {
			s = &Sub{ID: len(g.Subs)}
			index[r] = s
			g.Subs = append(g.Subs, s)
		}
		n.Sub = s.ID
		s.Nodes = append(s.Nodes, n.ID)
		s.Topics = append(s.Topics, n.Reads...)
		s.Stores = append(s.Stores, n.Stores...)
	}
	for _, s := range g.Subs {
		sort.Strings(s.Topics)
		s.Stores = sortedSet(s.Stores)
	}
	return g.Subs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortedSet is names sorted without duplicates (Kafka Streams keeps a
// processor's stores in a set).
func sortedSet(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	j := 0
	for i, s := range out {
		if i == 0 || s != out[j-1] {
			out[j] = s
			j++
		}
	}
	return out[:j]
}
