// Command streamprocess is the streamgen side of the streamprocess benchmark scenario
// (streamgen.yaml); bench/harness runs it.
package main

//go:generate go tool streamgen generate

import "github.com/streamgen/streamgen/bench/internal/probe"

// Count tells the harness that one input record was processed.
func Count(key string, value []byte) { probe.Hit() }
