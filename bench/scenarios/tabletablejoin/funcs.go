// Command tabletablejoin is the streamgen side of the tabletablejoin benchmark scenario
// (streamgen.yaml); bench/harness runs it.
package main

//go:generate go tool streamgen generate

import "github.com/streamgen/streamgen/bench/internal/probe"

// Count tells the harness that one input record was processed.
func Count(key string, value []byte) { probe.Hit() }

// Join keeps the left value, as the Kafka Streams program's joiner does (the
// right side of the left join is nil when missing).
func Join(key string, left []byte, right *[]byte) []byte { return left }

// Discard is the terminal foreach.
func Discard(key string, value *[]byte) {}
