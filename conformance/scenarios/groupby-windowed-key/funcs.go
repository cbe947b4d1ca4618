//go:build conformance

package main

import "github.com/streamgen/streamgen/runtime/sgstream"

// User functions of groupby-windowed-key; twins in
// conformance/java/src/main/java/io/streamgen/conformance/WindowedKeyScenarios.java.

// BucketWindow keys a record by the window [v%3 * 10s, +10s) of its key.
func BucketWindow(key string, value int64) sgstream.Windowed[string] {
	start := (value % 3) * 10_000
	return sgstream.Windowed[string]{Key: key, Start: start, End: start + 10_000}
}
