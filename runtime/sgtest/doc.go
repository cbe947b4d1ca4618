// Package sgtest runs a topology in process for tests, as Kafka Streams'
// TopologyTestDriver does: each piped record, and every record it causes
// (repartition topics included), is processed to completion and committed
// before the pipe returns. By default there is no record cache, so every
// update is visible, and no emit throttle; CacheMaxBytes,
// WindowEmitInterval and OuterJoinEmitInterval set them as a
// TopologyTestDriver test sets them through its config, and
// AdvanceWallClock is advanceWallClockTime.
//
// Its audience is the tests of an application. The generated
// streamgen_driver.go wraps a Driver with one typed method per topic and
// store (PipeOrders, ReadCounts, CountsStore…); those methods call the
// generic functions of this package (PipeTyped, ReadTyped, KVStore…) with
// the topic's or store's serdes, and tests may call them by hand for topics
// the generator cannot see (a topic chooser's targets) or for topologies
// built by hand. Options (TopicPartitions, StateDir, ErrorPolicies…)
// configure a driver; none is needed for the behaviour of the spec.
//
// Nothing here is linked into an application's binary unless its tests
// are, or it runs the `replay` command, which drives the same engine.
package sgtest
