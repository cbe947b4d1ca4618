package engine

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/streamgen/streamgen/internal/topodesc"
	"github.com/streamgen/streamgen/internal/topograph"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// NodeInfo describes one node of the graph: the structural node of
// internal/topograph, the one model the runtime, describe and the
// generator share.
type NodeInfo = topograph.Node

// SubTopology is a connected part of the graph; Kafka Streams runs one task
// per sub-topology and partition (topograph.Sub).
type SubTopology = topograph.Sub

// TopicSpec describes a topic the topology reads or writes.
type TopicSpec = topograph.Topic

// TopicRole says why the topology touches a topic (topograph.TopicRole).
type TopicRole = topograph.TopicRole

const (
	TopicExternal    = topograph.TopicExternal    // declared in the spec
	TopicRepartition = topograph.TopicRepartition // <app id>-<name>-repartition
	TopicChangelog   = topograph.TopicChangelog   // <app id>-<store>-changelog
	TopicInternal    = topograph.TopicInternal    // other internal topics (foreign-key joins)
	TopicGlobal      = topograph.TopicGlobal      // read as a global table by a global task
)

// Topology is a built topology as an engine sees it: its structure, and
// the tasks and test drivers that run it.
type Topology interface {
	// AppID is the application id the topology was built with.
	AppID() string
	// SubTopologies returns the sub-topologies in order; a sub-topology's
	// ID is the sub-topology part of its tasks' TaskIDs.
	SubTopologies() []*SubTopology
	// Nodes returns every node in creation order.
	Nodes() []*NodeInfo
	// Store returns the spec of a store, or nil.
	Store(name string) *StoreSpec
	// Topics returns every topic the topology touches, sorted by name.
	Topics() []*TopicSpec
	// Topic returns the spec of a topic, or nil.
	Topic(name string) *TopicSpec
	// SubTopologyOf returns the sub-topology that reads topic, or nil.
	SubTopologyOf(topic string) *SubTopology
	// PartitionsOf returns the partition count of topic: its fixed count,
	// or for an external topic external(topic), or for an internal topic
	// the count Kafka Streams would give it.
	PartitionsOf(topic string, external func(topic string) int) int
	// IsGlobal reports whether s is a global sub-topology: engines run it
	// as one task over all partitions, outside the consumer group, before
	// any other task processes records.
	IsGlobal(s *SubTopology) bool
	// Describe is the topology as Kafka Streams' Topology#describe shows it.
	Describe() *topodesc.Graph
	// NewTask builds a task for sub-topology id.Sub on partition
	// id.Partition.
	NewTask(id TaskID, cfg TaskConfig) (Task, error)
	// NewDriver creates an in-process test driver for the topology.
	NewDriver(cfg DriverConfig) (Driver, error)
}

// Handle is the representation of the public *sgstream.Topology, which is
// declared `type Topology engine.Handle`: an engine holding one converts
// it, (*engine.Handle)(tp).Topology(), and a user holding one sees an
// opaque value to pass to an engine.
type Handle struct{ t Topology }

// NewHandle wraps t; sgstream.NewTopology returns it converted.
func NewHandle(t Topology) *Handle { return &Handle{t: t} }

// Topology is the engine's view of the topology.
func (h *Handle) Topology() Topology { return h.t }

// Task runs one sub-topology for one partition. Process is called once per
// record; everything else once per commit, poll or lifetime.
type Task interface {
	ID() TaskID
	// Stats are the task's counters so far.
	Stats() TaskStats
	// Init opens the task's stores and initialises its stateful nodes.
	Init() error
	// Process runs one raw record through the task. Errors are handled by
	// the task's policies; an error is returned only under the fail policy
	// (or when the dead-letter write fails), and it names topic, partition
	// and offset.
	Process(raw *RawRecord) error
	// PunctuateWallClock fires the wall-clock punctuations that are due.
	PunctuateWallClock() error
	// FlushCaches forwards what the record cache holds back; the engine
	// calls it before it commits the Kafka transaction.
	FlushCaches() error
	// Commit makes the task's store writes durable and visible as
	// committed state, with the given changelog checkpoint.
	Commit(checkpoint map[string]int64) error
	// Abort drops the task's store writes since the last commit.
	Abort() error
	// UncommittedBytes approximates the memory the task's store writes
	// since the last commit hold (sgstate.UncommittedSizer).
	UncommittedBytes() int64
	// Close closes the task's processors and stores.
	Close() error
	// Store returns an open store of this task; Stores all of them by name.
	Store(name string) (sgstate.Store, error)
	Stores() map[string]sgstate.Store
	// StoreContext is the StoreContext of spec's store in the task,
	// without Dir: a changelog writer for logged, non-global stores that
	// sends to <app id>-<store>-changelog on the task's partition through
	// the task's collector, and the record-context timestamp.
	StoreContext(spec *StoreSpec, logger *slog.Logger) *sgstate.StoreContext
	// ForwardingNodes are the task's nodes that forward records, in the
	// order of ForwardCounts, which appends how many records each has
	// forwarded since the task was created. Call it on the goroutine that
	// processes the task.
	ForwardingNodes() []*NodeInfo
	ForwardCounts(dst []int64) []int64
	// Progress is the task's progress to commit with its offsets: the
	// partition times of what it has processed and its processor metadata,
	// including TaskConfig.Resume's where the task has not moved past it.
	Progress() Progress
}

// Driver is the in-process engine under runtime/sgtest's Driver: every
// piped record, and everything it causes, is processed to completion and
// committed before Pipe returns, as Kafka Streams' TopologyTestDriver does,
// over as many partitions as the topics have.
type Driver interface {
	// Pipe processes one input record, and everything it causes, to
	// completion. A negative Partition lets the driver choose one with
	// Kafka's default partitioner. The offset is assigned by the driver.
	Pipe(rec RawRecord) error
	// AdvanceWallClock moves wall-clock time forward and fires the
	// wall-clock punctuations that became due, in task order.
	AdvanceWallClock(by time.Duration) error
	// Output returns and removes the records written to topic so far, in
	// write order; OutputAll those of every topic.
	Output(topic string) []RawRecord
	OutputAll() []RawRecord
	// OutputTopics lists the topics with unread output, sorted.
	OutputTopics() []string
	// Store returns a store of the task that owns partition of its
	// sub-topology, or an error if that task has not run yet.
	Store(name string, partition int32) (sgstate.Store, error)
	// TaskStore is Store creating the task (with empty stores) when no
	// record reached it yet; a global store is its global task's.
	TaskStore(store string, partition int32) (sgstate.Store, error)
	// StorePartition is the partition whose task holds the serialized key
	// in store (GlobalPartition for a global store).
	StorePartition(store string, key []byte) (int32, error)
	// Partitions is the partition count of topic in this driver;
	// KeyPartition the partition Kafka's default partitioner picks for key.
	Partitions(topic string) int
	KeyPartition(topic string, key []byte) int32
	// Tasks returns the driver's tasks in creation order.
	Tasks() []Task
	// Close closes every task.
	Close() error
}

// CheckCopartitioned fails when the source topics of a sub-topology have
// different partition counts: their records could not meet in one task.
func CheckCopartitioned(s *SubTopology, partitions func(topic string) int) error {
	if len(s.Topics) < 2 {
		return nil
	}
	first := partitions(s.Topics[0])
	for _, t := range s.Topics[1:] {
		if n := partitions(t); n != first {
			return fmt.Errorf("streamgen: topics %q (%d partitions) and %q (%d partitions) are joined or merged in one sub-topology and must have the same number of partitions", s.Topics[0], first, t, n)
		}
	}
	return nil
}
