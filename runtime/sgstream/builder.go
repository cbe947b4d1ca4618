package sgstream

import (
	"fmt"
	"slices"
	"sort"

	"github.com/streamgen/streamgen/internal/topograph"
	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// nodeInfo describes one node of the graph: the structural node of
// internal/topograph, the one model the runtime, describe and the
// generator share.
type nodeInfo = topograph.Node

// StoreSpec is a store as the topology declares it (AddStateStore, or an
// operator): its Name and Kind; InMemory keeps it off Pebble, Logged gives
// it a changelog; Retention (window and session stores), WindowSize (window
// stores) and RetainDuplicates (stream-stream join stores) shape a time
// store; Custom builds a user-written store instead of a built-in one;
// Fingerprint identifies the schema stored, so a Pebble store written by an
// incompatible topology is refused on open; Cached puts a key-value store
// behind the task's record cache, as DSL tables and aggregations are.
type StoreSpec = engine.StoreSpec

// StoreKind is the shape of a store.
type StoreKind = engine.StoreKind

// The store kinds.
const (
	KeyValueStore = engine.KeyValueStore
	WindowStore   = engine.WindowStore
	SessionStore  = engine.SessionStore
)

// Builder collects the nodes of a topology. Generated code receives one
// from the runtime and calls the operator functions with it.
type Builder struct {
	appID string
	task  *task // nil while the topology is only being described
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
	fn   func(t *task) error
}

type sourceEntry struct {
	node    int
	topic   string
	process func(t *task, raw *RawRecord) error
	// partitionTime is the largest timestamp read from the topic (Kafka
	// Streams' partition time), valid when hasPartitionTime. It lives
	// here, where Process already is, rather than in a map by topic the
	// task would look up twice per record.
	partitionTime    int64
	hasPartitionTime bool
}

func newBuilder(appID string, t *task) *Builder {
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

// addNode registers a node and returns its info. Names are unique; a
// duplicate is a build error (generated code never makes one).
func (b *Builder) addNode(name, op string, parents ...*nodeInfo) *nodeInfo {
	return b.g.Add(name, op, parents...)
}

// addStore declares a store used by node n. A store may be shared by
// several nodes (a join's two sides, a table and its value getters); those
// nodes then belong to one sub-topology.
func (b *Builder) addStore(n *nodeInfo, spec StoreSpec) {
	b.declareStore(spec)
	b.g.Use(n, spec.Name)
}

// declareStore records the spec of a store whose use the graph already
// knows (a layout recorded it), or that no node uses yet (AddStateStore).
func (b *Builder) declareStore(spec StoreSpec) {
	if old, ok := b.stores[spec.Name]; ok {
		if old.Kind != spec.Kind {
			b.errorf("store %q declared twice with different kinds", spec.Name)
		}
		return
	}
	s := spec
	b.stores[spec.Name] = &s
}

// useStore records that node n reads a store declared elsewhere.
func (b *Builder) useStore(n *nodeInfo, name string) { b.g.Use(n, name) }

// addTopic declares a topic (merging what is known about it).
func (b *Builder) addTopic(spec engine.TopicSpec) *engine.TopicSpec { return b.g.AddTopic(spec) }

// repartitionTopic is the full name of the repartition topic called name.
func (b *Builder) repartitionTopic(name string) string {
	return toponame.Full(b.appID, toponame.Repartition(name))
}

// internalTopic is the full name of an internal topic called name.
func (b *Builder) internalTopic(name string) string { return toponame.Full(b.appID, name) }

// onInit registers fn to run when a task that owns node n initialises,
// after its stores are available. Stateful nodes fetch their stores here.
func (b *Builder) onInit(n *nodeInfo, fn func(t *task) error) {
	b.inits = append(b.inits, nodeInit{node: n.ID, fn: fn})
}

// addSource registers how raw records of topic reach node n.
func (b *Builder) addSource(n *nodeInfo, topic string, process func(t *task, raw *RawRecord) error) {
	if _, dup := b.sources[topic]; dup {
		b.errorf("topic %q is read by two source nodes", topic)
	}
	b.g.Read(n, topic)
	b.sources[topic] = &sourceEntry{node: n.ID, topic: topic, process: process}
}

// errorf records a build error; NewTopology reports them all.
func (b *Builder) errorf(format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf("streamgen: topology: "+format, args...))
}

// Topology is a built topology: what NewTopology returns and an engine
// runs (runtime/sgkafka's New, runtime/sgtest's New). It is opaque: the
// structure engines read, and the tasks that run it, are theirs
// (runtime/internal/engine).
type Topology engine.Handle

// topology is a built topology: its build function and its structure
// (engine.Topology).
type topology struct {
	appID  string
	build  func(*Builder)
	graph  *topograph.Graph
	nodes  []*nodeInfo
	subs   []*engine.SubTopology
	stores map[string]*StoreSpec
	topics map[string]*engine.TopicSpec
}

// NewTopology runs build once to learn the topology's structure and
// validates it: every build error is reported, joined.
func NewTopology(appID string, build func(*Builder)) (*Topology, error) {
	tp, err := newTopology(appID, build)
	if err != nil {
		return nil, err
	}
	return (*Topology)(engine.NewHandle(tp)), nil
}

// AppID is the application id the topology was built with.
func (h *Topology) AppID() string { return h.engine().AppID() }

// engine is the topology behind the handle.
func (h *Topology) engine() *topology { return (*engine.Handle)(h).Topology().(*topology) }

func newTopology(appID string, build func(*Builder)) (*topology, error) {
	if appID == "" {
		return nil, fmt.Errorf("streamgen: topology: empty application id")
	}
	b := newBuilder(appID, nil)
	build(b)
	if errs := b.buildErrors(); len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	tp := &topology{appID: appID, build: build, graph: b.g, nodes: b.g.Nodes, stores: b.stores, topics: b.g.Topics}
	tp.subs = b.g.Finalise()
	return tp, nil
}

// AppID is the application id the topology was built with.
func (tp *topology) AppID() string { return tp.appID }

// SubTopologies returns the sub-topologies in order.
func (tp *topology) SubTopologies() []*engine.SubTopology { return tp.subs }

// Nodes returns every node in creation order.
func (tp *topology) Nodes() []*nodeInfo { return tp.nodes }

// Store returns the spec of a store, or nil.
func (tp *topology) Store(name string) *StoreSpec { return tp.stores[name] }

// Topics returns every topic the topology touches, sorted by name.
func (tp *topology) Topics() []*engine.TopicSpec {
	out := make([]*engine.TopicSpec, 0, len(tp.topics))
	for _, t := range tp.topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Topic returns the spec of a topic, or nil.
func (tp *topology) Topic(name string) *engine.TopicSpec { return tp.topics[name] }

// Writes reports whether the topology writes topic's format: a sink names
// it, as its fixed topic or as one it may choose per record, or a table
// reads it, since a table's store holds its values encoded with the
// topic's serdes (as a Kafka Streams source table's store uses its source
// serdes). The runtime binds a registry-format side's own schema only
// where the app writes it: a table of a registry topic needs its schema
// under the topic's subject as a sink does.
func (h *Topology) Writes(topic string) bool {
	for _, n := range h.engine().nodes {
		if slices.Contains(n.Writes, topic) {
			return true
		}
		if (n.Op == opTableSource || n.Op == opGlobalTableSource) && slices.Contains(n.Reads, topic) {
			return true
		}
	}
	return false
}

// SubTopologyOf returns the sub-topology that reads topic, or nil.
func (tp *topology) SubTopologyOf(topic string) *engine.SubTopology {
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
	info *nodeInfo
	out  *fanout[K, V]
}

// to attaches a child node that receives every record of the stream.
// Operator implementations use it; generated code does not.
func (s Stream[K, V]) to(n recordNode[K, V]) { s.out.add(n) }

// newStream creates a stream handle whose records are whatever is forwarded
// to the returned node. Operator implementations use it to create outputs.
func newStream[K, V any](b *Builder, info *nodeInfo) (Stream[K, V], recordNode[K, V]) {
	f := &fanout[K, V]{}
	b.countForwards(info, &f.n)
	return Stream[K, V]{b: b, info: info, out: f}, f
}

// recordNode is anything that receives typed records: every operator's processing
// step implements it.
type recordNode[K, V any] interface {
	Process(r Record[K, V]) error
}

// fanout forwards a record to every child, in the order they were added
// (Kafka Streams forwards depth-first in topology order).
type fanout[K, V any] struct {
	// children are the children's Process functions: most children are
	// NodeFuncs, and calling the function itself saves the interface call
	// into nodeFunc.Process for every record and node.
	children []func(Record[K, V]) error
	// n counts the records forwarded: a plain int, because only the task's
	// goroutine touches it (task.ForwardCounts reads it there too).
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
func (f *fanout[K, V]) add(n recordNode[K, V]) {
	if fn, ok := n.(nodeFunc[K, V]); ok {
		f.children = append(f.children, fn)
	} else {
		f.children = append(f.children, n.Process)
	}
}

// nodeFunc adapts a function to Node.
type nodeFunc[K, V any] func(r Record[K, V]) error

// Process calls f.
func (f nodeFunc[K, V]) Process(r Record[K, V]) error { return f(r) }

// PartitionsOf returns the partition count of topic: its fixed count, or
// for an external topic external(topic), or for an internal topic without
// a fixed count the count Kafka Streams would give it: that of the topics it
// is co-partitioned with in the sub-topology that reads it, else the largest
// count among the source topics of the sub-topology that writes it.
func (tp *topology) PartitionsOf(topic string, external func(topic string) int) int {
	return tp.partitionsOf(topic, external, map[string]bool{})
}

func (tp *topology) partitionsOf(topic string, external func(string) int, seen map[string]bool) int {
	ts := tp.topics[topic]
	if ts != nil && ts.Partitions > 0 {
		return ts.Partitions
	}
	if ts == nil || ts.Role == engine.TopicExternal || ts.Role == engine.TopicGlobal || seen[topic] {
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
