// Command manystores is the streamgen side of the manystores benchmark scenario
// (streamgen.yaml); bench/harness runs it.
package main

//go:generate go tool streamgen generate

import "github.com/streamgen/streamgen/bench/internal/probe"

// Count tells the harness that one input record was processed.
func Count(key string, value []byte) { probe.Hit() }

// Latest keeps the newest value of a key, as the Kafka Streams program's
// reducer does.
func Latest(agg, value []byte) []byte { return value }
