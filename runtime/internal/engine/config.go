package engine

import (
	"log/slog"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstate"
)

// Collector receives what a task writes: output, repartition and internal
// topic records. The test driver captures them; the Kafka engine produces
// them inside the open transaction.
type Collector interface {
	// Send writes a record. partition < 0 lets the collector choose with
	// Kafka's default partitioner applied to partitionKey (the key bytes,
	// or the base key of a windowed key). key, value and partitionKey are
	// read during the call only (sinks pass views of strings and of
	// their encoding buffers): a collector copies what it keeps.
	Send(topic string, partition int32, key, value []byte, timestamp int64, headers []Header, partitionKey []byte) error
}

// StoreProvider opens the stores of a task. The test driver and the Kafka
// engine implement it (in memory or on Pebble, logged to changelogs).
type StoreProvider interface {
	OpenStore(t Task, spec *StoreSpec) (sgstate.Store, error)
}

// GlobalStoreProvider is implemented by store providers that host global
// stores (the test driver and the Kafka engine). Tasks reach global stores
// through it rather than through their own stores, because a global store
// belongs to the global task and is shared, read-only, by every task.
type GlobalStoreProvider interface {
	GlobalStore(name string) (sgstate.Store, error)
}

// TaskConfig is what a task needs from its environment.
type TaskConfig struct {
	Collector       Collector
	Stores          StoreProvider
	Logger          *slog.Logger
	Deserialization Policy
	Processing      Policy
	DeadLetterTopic string
	InvalidTime     TimestampPolicy
	// Now returns wall-clock time in ms (default time.Now); the test driver
	// replaces it to advance wall-clock time by hand.
	Now func() int64
	// CacheMaxBytes is the task's record cache (its share of Kafka Streams'
	// statestore.cache.max.bytes). 0, the test driver's setting, disables
	// it: every update is forwarded. With a cache, updates to a cached
	// store are coalesced per key and forwarded when the cache flushes:
	// on eviction and in FlushCaches, which the engine must call before it
	// commits the Kafka transaction (Commit calls it too). Window and
	// session stores are not cached: windowed aggregations forward every
	// update regardless.
	CacheMaxBytes int64
	// WindowEmitInterval is the wall-clock throttle of EmitOnClose windowed
	// aggregations: they scan their store for closed windows at most once
	// per interval (Kafka's internal config
	// __emit.interval.ms.kstreams.windowed.aggregation__). The zero value
	// means DefaultWindowEmitInterval, Kafka's 1000 ms, which is what an
	// engine wants; NoEmitThrottle means an interval of 0 (scan after every
	// record), which TopologyTestDriver forces and the test driver sets.
	WindowEmitInterval time.Duration
	// OuterJoinEmitInterval is the same throttle for the emission of
	// unmatched left/outer stream-stream join records (Kafka's
	// __emit.interval.ms.kstreams.outer.join.spurious.results.fix__): zero
	// means DefaultOuterJoinEmitInterval (1000 ms), NoEmitThrottle means 0.
	OuterJoinEmitInterval time.Duration
	// Resume is the progress the task's last owner committed with its
	// offsets (the engine reads it from the group's committed offset
	// metadata); the zero value starts from nothing known.
	Resume Progress
}

// Progress is a task's processing progress beyond its offsets: what Kafka
// Streams commits in the metadata of each source partition's offset
// (TopicPartitionMetadata), so that a task resumed on any instance, with
// or without its local state, continues with it: stream time is known
// before the first record, and an emit-on-close aggregation does not emit
// again the windows it emitted before the move.
type Progress struct {
	// PartitionTimes are the task's partition times by source topic (the
	// largest timestamp read from the topic's partition); a topic the task
	// has read nothing from is absent.
	PartitionTimes map[string]int64
	// Processor is the processor metadata: an emit-on-close windowed
	// aggregation's last emitted window close time, keyed by its store
	// name, as Kafka Streams keys it.
	Processor map[string]int64
}

// NoEmitThrottle, as TaskConfig.WindowEmitInterval or
// OuterJoinEmitInterval, sets the throttle to 0. It is negative because the
// zero value of the fields must keep Kafka's default for engines that do not
// set them.
const NoEmitThrottle time.Duration = -1

// DefaultWindowEmitInterval is how often, in wall-clock time, an
// EmitOnClose aggregation scans its store for closed windows, unless
// TaskConfig.WindowEmitInterval says otherwise: Kafka's internal config
// __emit.interval.ms.kstreams.windowed.aggregation__ defaults to 1000 ms.
// The test driver uses 0 (scan after every record), as TopologyTestDriver
// does.
const DefaultWindowEmitInterval = time.Second

// DefaultOuterJoinEmitInterval is how often, in wall-clock time, a left or
// outer stream-stream join scans its outer store for records whose window
// closed, unless TaskConfig.OuterJoinEmitInterval says otherwise: Kafka's
// internal config __emit.interval.ms.kstreams.outer.join.spurious.results.fix__
// defaults to 1000 ms. The test driver uses 0 (scan whenever one may be
// due), the setting Kafka's own join tests use.
const DefaultOuterJoinEmitInterval = time.Second

// DriverConfig configures a test driver (Topology.NewDriver). The zero
// value is a driver with one partition per topic, in-memory stores, no
// logging, wall-clock time 0, fail policies and no record cache, as
// TopologyTestDriver. Tests set it through runtime/sgtest's options.
type DriverConfig struct {
	// Partitions are partition counts by topic. Internal topics take the
	// count of the topics that feed them unless set here.
	Partitions map[string]int
	// DefaultPartitions is the count of topics not in Partitions (default 1).
	DefaultPartitions int
	// StateDir keeps stores on Pebble under it (default: in memory).
	StateDir string
	// Logger defaults to discarding.
	Logger *slog.Logger
	// WallClockStart is the initial wall-clock time in ms (default 0).
	WallClockStart int64
	// Deserialization and Processing are the error policies (default
	// fail), DeadLetterTopic where PolicyDeadLetter writes.
	Deserialization, Processing Policy
	DeadLetterTopic             string
	// InvalidTime is the policy for negative timestamps (default fail).
	InvalidTime TimestampPolicy
	// CacheMaxBytes is the record cache (TopologyTestDriver's
	// statestore.cache.max.bytes; default 0: every update is forwarded).
	// The tasks of one partition share the budget, as the stores of
	// TopologyTestDriver's one task share its cache. The driver commits,
	// and so flushes the cache, after every record it processes.
	CacheMaxBytes int64
	// WindowEmitInterval and OuterJoinEmitInterval are the emit throttles
	// of TaskConfig. The zero value is the 0 TopologyTestDriver forces (no
	// throttle); a positive interval throttles by the driver's wall clock,
	// which only AdvanceWallClock moves.
	WindowEmitInterval, OuterJoinEmitInterval time.Duration
}
