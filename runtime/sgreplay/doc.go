// Package sgreplay is the replay format of a streamgen application: one JSON
// object per line for each record, with its topic, key, value, timestamp and
// optionally headers and partition; records as JSON objects keyed by the
// spec's field names, primitives as plain JSON values, null as a tombstone,
// and windowed keys as {"key", "start", "end"}. Two lines carry no record:
// {"sequence": n} starts an independent sequence, and
// {"advance_wall_clock": ms} moves the replay's wall clock forward, as
// TopologyTestDriver.advanceWallClockTime. It converts lines to and from
// Kafka bytes through each topic's serdes. It depends on serdes only, so it
// is cheap to fuzz.
package sgreplay
