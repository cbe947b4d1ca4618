package sgstream

import (
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// The tests of this package drive topologies with the testDriver directly:
// they cannot import runtime/sgtest, which imports this package. These are
// the few options they set, as edits of a engine.DriverConfig.
type DriverOpt func(*engine.DriverConfig)

func DefaultPartitions(n int) DriverOpt {
	return func(c *engine.DriverConfig) { c.DefaultPartitions = n }
}
func StateDir(dir string) DriverOpt   { return func(c *engine.DriverConfig) { c.StateDir = dir } }
func CacheMaxBytes(n int64) DriverOpt { return func(c *engine.DriverConfig) { c.CacheMaxBytes = n } }

func TopicPartitions(topic string, n int) DriverOpt {
	return func(c *engine.DriverConfig) {
		if c.Partitions == nil {
			c.Partitions = map[string]int{}
		}
		c.Partitions[topic] = n
	}
}

func ErrorPolicies(deserialization, processing Policy, deadLetterTopic string) DriverOpt {
	return func(c *engine.DriverConfig) {
		c.Deserialization, c.Processing, c.DeadLetterTopic = deserialization, processing, deadLetterTopic
	}
}

func InvalidTimestamps(p TimestampPolicy) DriverOpt {
	return func(c *engine.DriverConfig) { c.InvalidTime = p }
}

// driverConfig applies opts to a zero engine.DriverConfig.
func driverConfig(opts []DriverOpt) engine.DriverConfig {
	var c engine.DriverConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

func EmitIntervals(windowed, outerJoin time.Duration) DriverOpt {
	return func(c *engine.DriverConfig) { c.WindowEmitInterval, c.OuterJoinEmitInterval = windowed, outerJoin }
}
