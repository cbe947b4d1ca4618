//go:build conformance

package main

import (
	"strconv"
)

// User functions of the windowed aggregates and the cogroups, which build their aggregates
// as lists of the values they saw. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

func Empty() string { return "" }

// Append keeps the values in arrival order, so the output shows which records a window saw.
func Append(key string, value int64, agg string) string {
	if agg == "" {
		return strconv.FormatInt(value, 10)
	}
	return agg + "," + strconv.FormatInt(value, 10)
}

// AddClick and AddView tag each value with its input, so a cogroup's output shows
// which records of which input a window saw, in arrival order.
func AddClick(key string, value int64, agg string) string { return tagged(agg, "c", value) }

func AddView(key string, value int64, agg string) string { return tagged(agg, "v", value) }

func tagged(agg, tag string, value int64) string {
	if agg == "" {
		return tag + strconv.FormatInt(value, 10)
	}
	return agg + "," + tag + strconv.FormatInt(value, 10)
}

// Spread makes value%3+1 values from one (value*10, value*10+1, ...), so one input record
// updates its windows up to three times: a record cache coalesces those updates.
func Spread(key string, value int64) []int64 {
	out := make([]int64, 0, value%3+1)
	for i := int64(0); i <= value%3; i++ {
		out = append(out, value*10+i)
	}
	return out
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
