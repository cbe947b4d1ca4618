package sgtest

import (
	"log/slog"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// Driver runs one topology in process. Pipe, Output, OutputAll,
// OutputTopics, AdvanceWallClock, Store, Tasks and Close work on raw bytes
// and come from the engine it embeds; the functions of this package give
// typed access on top.
//
// Unlike TopologyTestDriver it runs several partitions: give a topic more
// than one partition and records are spread by Kafka's default partitioner
// (murmur2 of the key bytes), one task per sub-topology and partition.
type Driver struct {
	*sgstream.TestDriver
}

// Opt configures a Driver.
type Opt interface{ apply(*sgstream.DriverConfig) }

type opt func(*sgstream.DriverConfig)

func (f opt) apply(c *sgstream.DriverConfig) { f(c) }

// New creates a driver for tp. Close it when done.
func New(tp *sgstream.Topology, opts ...Opt) (*Driver, error) {
	cfg := sgstream.DriverConfig{Partitions: map[string]int{}}
	for _, o := range opts {
		o.apply(&cfg)
	}
	d, err := sgstream.NewTestDriver(tp, cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{d}, nil
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
	return opt(func(c *sgstream.DriverConfig) { c.Partitions[topic] = n })
}

// DefaultPartitions sets the partition count of topics not set with
// TopicPartitions (default 1, as TopologyTestDriver).
func DefaultPartitions(n int) Opt {
	return opt(func(c *sgstream.DriverConfig) { c.DefaultPartitions = n })
}

// StateDir keeps stores on Pebble under dir, one directory per task and
// store as the Kafka engine lays them out (default: in-memory stores).
func StateDir(dir string) Opt { return opt(func(c *sgstream.DriverConfig) { c.StateDir = dir }) }

// Logger sets the logger (default: discard).
func Logger(l *slog.Logger) Opt { return opt(func(c *sgstream.DriverConfig) { c.Logger = l }) }

// WallClockStart sets the initial wall-clock time in ms (default 0).
func WallClockStart(ms int64) Opt {
	return opt(func(c *sgstream.DriverConfig) { c.WallClockStart = ms })
}

// ErrorPolicies sets the deserialization and processing policies and the
// dead-letter topic (default: fail, fail). A generated NewTestDriver sets
// the spec's; a later option overrides them.
func ErrorPolicies(deserialization, processing sgstream.Policy, deadLetterTopic string) Opt {
	return opt(func(c *sgstream.DriverConfig) {
		c.Deserialization, c.Processing, c.DeadLetterTopic = deserialization, processing, deadLetterTopic
	})
}

// InvalidTimestamps sets the policy for negative timestamps (default fail).
func InvalidTimestamps(p sgstream.TimestampPolicy) Opt {
	return opt(func(c *sgstream.DriverConfig) { c.InvalidTime = p })
}

// CacheMaxBytes gives every task of the driver a record cache of n bytes
// (default 0, as TopologyTestDriver: every update is forwarded). The driver
// still commits, and so flushes the cache, after every piped record, so
// only updates caused by one input record are coalesced.
func CacheMaxBytes(n int64) Opt {
	return opt(func(c *sgstream.DriverConfig) { c.CacheMaxBytes = n })
}
