package sgstream

import (
	"fmt"
	"sort"
	"time"

	"github.com/streamgen/streamgen/internal/topograph"
	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// NodeInfo describes one node of the graph: the structural node of
// internal/topograph, the one model the runtime, describe and the
// generator share.
type NodeInfo = topograph.Node

// StoreKind is the shape of a store.
type StoreKind int

const (
	KeyValueStore StoreKind = iota
	WindowStore
	SessionStore
)

// StoreSpec is what the builder knows about a store; the StoreProvider of
// the driver or engine turns it into a sgstate.Store for each task.
type StoreSpec struct {
	Name             string
	Kind             StoreKind
	InMemory         bool
	Logged           bool
	Retention        time.Duration // window and session stores
	WindowSize       time.Duration // window stores
	RetainDuplicates bool          // stream-stream join stores
	// Custom builds a user-written store; nil for built-in stores.
	Custom func() sgstate.Store
	// Fingerprint identifies the key/value schema stored, so a Pebble store
	// written by an incompatible topology is refused on open.
	Fingerprint string
	// Cached puts the store behind the task's record cache when the task
	// has one (TaskConfig.CacheMaxBytes): DSL tables and aggregations set
	// it, as Kafka Streams caches Materialized stores by default. Only
	// key-value stores are cached; windowed aggregations forward every
	// update whatever the cache (see docs/semantics.md).
	Cached bool
}

// TopicRole says why the topology touches a topic (topograph.TopicRole).
type TopicRole = topograph.TopicRole

const (
	TopicExternal    = topograph.TopicExternal    // declared in the spec
	TopicRepartition = topograph.TopicRepartition // <app id>-<name>-repartition
	TopicChangelog   = topograph.TopicChangelog   // <app id>-<store>-changelog
	TopicInternal    = topograph.TopicInternal    // other internal topics (foreign-key joins)
	TopicGlobal      = topograph.TopicGlobal      // read as a global table by a global task
)

// TopicSpec describes a topic the topology reads or writes.
type TopicSpec = topograph.Topic

// Builder collects the nodes of a topology. Generated code receives one
// from the runtime and calls the operator functions with it.
type Builder struct {
	appID string
	task  *Task // nil while the topology is only being described
	// g is the structural graph: nodes, their stores and topics. The
	// operators lay their nodes out through it (topograph's layouts).
	g       *topograph.Graph
	stores  map[string]*StoreSpec
	sources map[string]*sourceEntry
	inits   []nodeInit
	errs    []error
	// counters are the forward counters of this task's nodes (metrics.go).
	counters []nodeCounter
}

type nodeInit struct {
	node int
	fn   func(t *Task) error
}

type sourceEntry struct {
	node    int
	topic   string
	process func(t *Task, raw *RawRecord) error
	// partitionTime is the largest timestamp read from the topic (Kafka
	// Streams' partition time), valid when hasPartitionTime. It lives
	// here, where Process already is, rather than in a map by topic the
	// task would look up twice per record.
	partitionTime    int64
	hasPartitionTime bool
}

func newBuilder(appID string, t *Task) *Builder {
	return &Builder{
		appID:   appID,
		task:    t,
		g:       topograph.New(appID),
		stores:  map[string]*StoreSpec{},
		sources: map[string]*sourceEntry{},
	}
}

// AppID is the application id: the consumer group and the prefix of every
// internal topic.
func (b *Builder) AppID() string { return b.appID }

// Task is the task the builder builds for, or nil when the topology is only
// being described. Operators capture it in the nodes they create.
func (b *Builder) Task() *Task { return b.task }

// AddNode registers a node and returns its info. Names are unique; a
// duplicate is a build error (generated code never makes one).
func (b *Builder) AddNode(name, op string, parents ...*NodeInfo) *NodeInfo {
	return b.g.Add(name, op, parents...)
}

// Graph is the structural graph being built, for operators that lay out
// their nodes with topograph.
func (b *Builder) Graph() *topograph.Graph { return b.g }

// AddStore declares a store used by node n. A store may be shared by
// several nodes (a join's two sides, a table and its value getters); those
// nodes then belong to one sub-topology.
func (b *Builder) AddStore(n *NodeInfo, spec StoreSpec) {
	b.declareStore(spec)
	b.g.Use(n, spec.Name)
}

// declareStore records the spec of a store whose use the graph already
// knows (a layout recorded it), or that no node uses yet (AddStateStore).
func (b *Builder) declareStore(spec StoreSpec) {
	if old, ok := b.stores[spec.Name]; ok {
		if old.Kind != spec.Kind {
			b.Errorf("store %q declared twice with different kinds", spec.Name)
		}
		return
	}
	s := spec
	b.stores[spec.Name] = &s
}

// UseStore records that node n reads a store declared elsewhere.
func (b *Builder) UseStore(n *NodeInfo, name string) { b.g.Use(n, name) }

// AddTopic declares a topic (merging what is known about it).
func (b *Builder) AddTopic(spec TopicSpec) *TopicSpec { return b.g.AddTopic(spec) }

// RepartitionTopic is the full name of the repartition topic called name.
func (b *Builder) RepartitionTopic(name string) string {
	return toponame.Full(b.appID, toponame.Repartition(name))
}

// InternalTopic is the full name of an internal topic called name.
func (b *Builder) InternalTopic(name string) string { return toponame.Full(b.appID, name) }

// OnInit registers fn to run when a task that owns node n initialises,
// after its stores are available. Stateful nodes fetch their stores here.
func (b *Builder) OnInit(n *NodeInfo, fn func(t *Task) error) {
	b.inits = append(b.inits, nodeInit{node: n.ID, fn: fn})
}

// AddSource registers how raw records of topic reach node n.
func (b *Builder) AddSource(n *NodeInfo, topic string, process func(t *Task, raw *RawRecord) error) {
	if _, dup := b.sources[topic]; dup {
		b.Errorf("topic %q is read by two source nodes", topic)
	}
	b.g.Read(n, topic)
	b.sources[topic] = &sourceEntry{node: n.ID, topic: topic, process: process}
}

// Errorf records a build error; NewTopology reports them all.
func (b *Builder) Errorf(format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf("streamgen: topology: "+format, args...))
}

// Topology is a built topology: its build function and its structure.
type Topology struct {
	appID  string
	build  func(*Builder)
	graph  *topograph.Graph
	nodes  []*NodeInfo
	subs   []*SubTopology
	stores map[string]*StoreSpec
	topics map[string]*TopicSpec
}

// SubTopology is a connected part of the graph; Kafka Streams runs one task
// per sub-topology and partition (topograph.Sub).
type SubTopology = topograph.Sub

// NewTopology runs build once to learn the topology's structure and
// validates it.
func NewTopology(appID string, build func(*Builder)) (*Topology, error) {
	if appID == "" {
		return nil, fmt.Errorf("streamgen: topology: empty application id")
	}
	b := newBuilder(appID, nil)
	build(b)
	if errs := b.buildErrors(); len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	tp := &Topology{appID: appID, build: build, graph: b.g, nodes: b.g.Nodes, stores: b.stores, topics: b.g.Topics}
	tp.subs = b.g.Finalise()
	return tp, nil
}

// AppID is the application id the topology was built with.
func (tp *Topology) AppID() string { return tp.appID }

// SubTopologies returns the sub-topologies in order.
func (tp *Topology) SubTopologies() []*SubTopology { return tp.subs }

// Nodes returns every node in creation order.
func (tp *Topology) Nodes() []*NodeInfo { return tp.nodes }

// Store returns the spec of a store, or nil.
func (tp *Topology) Store(name string) *StoreSpec { return tp.stores[name] }

// Topics returns every topic the topology touches, sorted by name.
func (tp *Topology) Topics() []*TopicSpec {
	out := make([]*TopicSpec, 0, len(tp.topics))
	for _, t := range tp.topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Topic returns the spec of a topic, or nil.
func (tp *Topology) Topic(name string) *TopicSpec { return tp.topics[name] }

// SubTopologyOf returns the sub-topology that reads topic, or nil.
func (tp *Topology) SubTopologyOf(topic string) *SubTopology {
	for _, s := range tp.subs {
		for _, t := range s.Topics {
			if t == topic {
				return s
			}
		}
	}
	return nil
}

// buildErrors are the graph's structural errors and the operators' own.
func (b *Builder) buildErrors() []error {
	var errs []error
	for _, err := range b.g.Errs {
		errs = append(errs, fmt.Errorf("streamgen: topology: %w", err))
	}
	return append(errs, b.errs...)
}

// Stream is a typed handle on a KStream while the topology is built.
type Stream[K, V any] struct {
	b    *Builder
	info *NodeInfo
	out  *fanout[K, V]
}

// Info is the node that produces the stream.
func (s Stream[K, V]) Info() *NodeInfo { return s.info }

// Builder is the builder the stream belongs to.
func (s Stream[K, V]) Builder() *Builder { return s.b }

// To attaches a child node that receives every record of the stream.
// Operator implementations use it; generated code does not.
func (s Stream[K, V]) To(n Node[K, V]) { s.out.add(n) }

// NewStream creates a stream handle whose records are whatever is forwarded
// to the returned node. Operator implementations use it to create outputs.
func NewStream[K, V any](b *Builder, info *NodeInfo) (Stream[K, V], Node[K, V]) {
	f := &fanout[K, V]{}
	b.countForwards(info, &f.n)
	return Stream[K, V]{b: b, info: info, out: f}, f
}

// Node is anything that receives typed records: every operator's processing
// step implements it.
type Node[K, V any] interface {
	Process(r Record[K, V]) error
}

// fanout forwards a record to every child, in the order they were added
// (Kafka Streams forwards depth-first in topology order).
type fanout[K, V any] struct {
	// children are the children's Process functions: most children are
	// NodeFuncs, and calling the function itself saves the interface call
	// into NodeFunc.Process for every record and node.
	children []func(Record[K, V]) error
	// n counts the records forwarded: a plain int, because only the task's
	// goroutine touches it (Task.ForwardCounts reads it there too).
	n int64
}

func (f *fanout[K, V]) Process(r Record[K, V]) error {
	f.n++
	for _, c := range f.children {
		if err := c(r); err != nil {
			return err
		}
	}
	return nil
}

// add appends a child.
func (f *fanout[K, V]) add(n Node[K, V]) {
	if fn, ok := n.(NodeFunc[K, V]); ok {
		f.children = append(f.children, fn)
	} else {
		f.children = append(f.children, n.Process)
	}
}

// NodeFunc adapts a function to Node.
type NodeFunc[K, V any] func(r Record[K, V]) error

// Process calls f.
func (f NodeFunc[K, V]) Process(r Record[K, V]) error { return f(r) }

// PartitionsOf returns the partition count of topic: its fixed count, or
// for an external topic external(topic), or for an internal topic without
// a fixed count the count Kafka Streams would give it: that of the topics it
// is co-partitioned with in the sub-topology that reads it, else the largest
// count among the source topics of the sub-topology that writes it.
func (tp *Topology) PartitionsOf(topic string, external func(topic string) int) int {
	return tp.partitionsOf(topic, external, map[string]bool{})
}

func (tp *Topology) partitionsOf(topic string, external func(string) int, seen map[string]bool) int {
	ts := tp.topics[topic]
	if ts != nil && ts.Partitions > 0 {
		return ts.Partitions
	}
	if ts == nil || ts.Role == TopicExternal || ts.Role == TopicGlobal || seen[topic] {
		return external(topic)
	}
	seen[topic] = true
	best := 0
	if reader := tp.SubTopologyOf(topic); reader != nil {
		for _, other := range reader.Topics {
			if other != topic {
				best = max(best, tp.partitionsOf(other, external, seen))
			}
		}
	}
	if best == 0 {
		for _, n := range tp.nodes {
			if !containsString(n.Writes, topic) {
				continue
			}
			for _, src := range tp.subs[n.Sub].Topics {
				if src != topic {
					best = max(best, tp.partitionsOf(src, external, seen))
				}
			}
		}
	}
	if best == 0 {
		return external(topic)
	}
	return best
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
