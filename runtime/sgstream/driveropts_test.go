package sgstream

// The tests of this package drive topologies with the TestDriver directly:
// they cannot import runtime/sgtest, which imports this package. These are
// the few options they set, as edits of a DriverConfig.
type DriverOpt func(*DriverConfig)

func DefaultPartitions(n int) DriverOpt { return func(c *DriverConfig) { c.DefaultPartitions = n } }
func StateDir(dir string) DriverOpt     { return func(c *DriverConfig) { c.StateDir = dir } }
func CacheMaxBytes(n int64) DriverOpt   { return func(c *DriverConfig) { c.CacheMaxBytes = n } }

func TopicPartitions(topic string, n int) DriverOpt {
	return func(c *DriverConfig) {
		if c.Partitions == nil {
			c.Partitions = map[string]int{}
		}
		c.Partitions[topic] = n
	}
}

func ErrorPolicies(deserialization, processing Policy, deadLetterTopic string) DriverOpt {
	return func(c *DriverConfig) {
		c.Deserialization, c.Processing, c.DeadLetterTopic = deserialization, processing, deadLetterTopic
	}
}

func InvalidTimestamps(p TimestampPolicy) DriverOpt {
	return func(c *DriverConfig) { c.InvalidTime = p }
}

// driverConfig applies opts to a zero DriverConfig.
func driverConfig(opts []DriverOpt) DriverConfig {
	var c DriverConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}
