//go:build conformance

package main

import "github.com/streamgen/streamgen/runtime/sgstream"

// User functions of selectkey-session-windowed; twins in
// conformance/java/src/main/java/io/streamgen/conformance/WindowedKeyScenarios.java
// (Sum's in Scenarios.java).

// SessionOf keys a record by a session of its key from v*1s to v*1s + (key digit)*500ms.
func SessionOf(key string, value int64) sgstream.Windowed[string] {
	start := value * 1_000
	return sgstream.Windowed[string]{Key: key, Start: start, End: start + int64(key[len(key)-1]-'0')*500}
}

// Sum adds the values.
func Sum(agg, value int64) int64 { return agg + value }
