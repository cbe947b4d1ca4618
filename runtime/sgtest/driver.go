package sgtest

import (
	"log/slog"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// Driver runs one topology in process. Its methods work on raw bytes
// (sgstream.RawRecord); the functions of this package give typed access on
// top.
//
// Unlike TopologyTestDriver it runs several partitions: give a topic more
// than one partition and records are spread by Kafka's default partitioner
// (murmur2 of the key bytes), one task per sub-topology and partition.
type Driver struct {
	d engine.Driver
}

// GlobalPartition is the partition to name a global store by (KVStore,
// WindowStore, SessionStore): a global table's store is a full replica
// held by one global task, whatever the partition of the records.
const GlobalPartition = engine.GlobalPartition

// Opt configures a Driver.
type Opt interface{ apply(*engine.DriverConfig) }

type opt func(*engine.DriverConfig)

func (f opt) apply(c *engine.DriverConfig) { f(c) }

// New creates a driver for tp. Close it when done.
func New(tp *sgstream.Topology, opts ...Opt) (*Driver, error) {
	cfg := engine.DriverConfig{Partitions: map[string]int{}}
	for _, o := range opts {
		o.apply(&cfg)
	}
	d, err := (*engine.Handle)(tp).Topology().NewDriver(cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{d}, nil
}

// Pipe processes one input record, and everything it causes (repartition
// topics included), to completion, and commits. A negative Partition lets
// the driver choose one with Kafka's default partitioner; the driver
// assigns the offset.
func (d *Driver) Pipe(rec sgstream.RawRecord) error { return d.d.Pipe(rec) }

// AdvanceWallClock moves wall-clock time forward and fires the wall-clock
// punctuations that became due, in task order.
func (d *Driver) AdvanceWallClock(by time.Duration) error { return d.d.AdvanceWallClock(by) }

// Output returns and removes the records written to topic so far, in the
// order they were written.
func (d *Driver) Output(topic string) []sgstream.RawRecord { return d.d.Output(topic) }

// OutputAll returns and removes every record written so far, to any topic,
// in the order they were written.
func (d *Driver) OutputAll() []sgstream.RawRecord { return d.d.OutputAll() }

// OutputTopics lists the topics with unread output, sorted.
func (d *Driver) OutputTopics() []string { return d.d.OutputTopics() }

// Store returns a store of the task that owns partition of its
// sub-topology, or an error if that task has not run yet (KVStore and its
// siblings create the task instead).
func (d *Driver) Store(name string, partition int32) (sgstate.Store, error) {
	return d.d.Store(name, partition)
}

// Close closes every task's stores.
func (d *Driver) Close() error { return d.d.Close() }

// Stats counts what the driver's tasks did with the records they saw:
// processed, skipped or dead-lettered as bad input (and why), dropped by an
// operator (and how many of those were late for a closed window).
type Stats = engine.TaskStats

// Stats sums the counters of every task of the driver so far.
func (d *Driver) Stats() Stats {
	var s Stats
	for _, t := range d.d.Tasks() {
		ts := t.Stats()
		s.Processed += ts.Processed
		s.Skipped += ts.Skipped
		s.DeadLettered += ts.DeadLettered
		s.Dropped += ts.Dropped
		s.Late += ts.Late
		s.BadDeserialization += ts.BadDeserialization
		s.BadTimestamp += ts.BadTimestamp
	}
	return s
}

// Build builds the topology of appID with build, as the engine does, and
// creates a driver for it: what a generated NewTestDriver calls.
func Build(appID string, build func(*sgstream.Builder), opts ...Opt) (*Driver, error) {
	tp, err := sgstream.NewTopology(appID, build)
	if err != nil {
		return nil, err
	}
	return New(tp, opts...)
}

// TopicPartitions sets the partition count of a topic (default
// DefaultPartitions). Internal topics take the count of the topics that feed
// them unless set here.
func TopicPartitions(topic string, n int) Opt {
	return opt(func(c *engine.DriverConfig) { c.Partitions[topic] = n })
}

// DefaultPartitions sets the partition count of topics not set with
// TopicPartitions (default 1, as TopologyTestDriver).
func DefaultPartitions(n int) Opt {
	return opt(func(c *engine.DriverConfig) { c.DefaultPartitions = n })
}

// StateDir keeps stores on Pebble under dir, one directory per task and
// store as the Kafka engine lays them out (default: in-memory stores).
func StateDir(dir string) Opt { return opt(func(c *engine.DriverConfig) { c.StateDir = dir }) }

// Logger sets the logger (default: discard).
func Logger(l *slog.Logger) Opt { return opt(func(c *engine.DriverConfig) { c.Logger = l }) }

// WallClockStart sets the initial wall-clock time in ms (default 0).
func WallClockStart(ms int64) Opt {
	return opt(func(c *engine.DriverConfig) { c.WallClockStart = ms })
}

// ErrorPolicies sets the deserialization and processing policies and the
// dead-letter topic (default: fail, fail). A generated NewTestDriver sets
// the spec's; a later option overrides them.
func ErrorPolicies(deserialization, processing sgstream.Policy, deadLetterTopic string) Opt {
	return opt(func(c *engine.DriverConfig) {
		c.Deserialization, c.Processing, c.DeadLetterTopic = deserialization, processing, deadLetterTopic
	})
}

// InvalidTimestamps sets the policy for negative timestamps (default fail).
func InvalidTimestamps(p sgstream.TimestampPolicy) Opt {
	return opt(func(c *engine.DriverConfig) { c.InvalidTime = p })
}

// CacheMaxBytes gives the driver a record cache of n bytes, as a
// TopologyTestDriver test sets statestore.cache.max.bytes (default 0: every
// update is forwarded). The tasks of a partition share it. The driver
// commits, and so flushes the cache, after every record it processes, so
// only updates caused by one record are coalesced.
func CacheMaxBytes(n int64) Opt {
	return opt(func(c *engine.DriverConfig) { c.CacheMaxBytes = n })
}

// WindowEmitInterval throttles how often, in the driver's wall-clock time,
// an emit-on-close windowed aggregation scans for closed windows (Kafka's
// internal __emit.interval.ms.kstreams.windowed.aggregation__). The default, 0,
// is what TopologyTestDriver forces: a scan after every record. With an
// interval, only AdvanceWallClock lets the next scan run.
func WindowEmitInterval(d time.Duration) Opt {
	return opt(func(c *engine.DriverConfig) { c.WindowEmitInterval = d })
}

// OuterJoinEmitInterval is the same throttle for the unmatched records of
// left and outer stream-stream joins (Kafka's internal
// __emit.interval.ms.kstreams.outer.join.spurious.results.fix__; default 0, as
// TopologyTestDriver forces).
func OuterJoinEmitInterval(d time.Duration) Opt {
	return opt(func(c *engine.DriverConfig) { c.OuterJoinEmitInterval = d })
}
