//go:build conformance

package main

import (
	"strconv"
)

// User functions of the table-groupby-* scenarios. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

// Empty is the initial aggregate of every cogroup scenario.
func Empty() string { return "" }

// AddClick and AddView tag each value with its input, so the output shows
// which records of which input a window saw, in arrival order.
func AddClick(key string, value int64, agg string) string { return tagged(agg, "c", value) }

func AddView(key string, value int64, agg string) string { return tagged(agg, "v", value) }

func tagged(agg, tag string, value int64) string {
	if agg == "" {
		return tag + strconv.FormatInt(value, 10)
	}
	return agg + "," + tag + strconv.FormatInt(value, 10)
}

// MergeLists shows the order in which session aggregates were merged.
func MergeLists(key string, a string, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "+" + b
}
