//go:build conformance

package main

// User functions of the scenario. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

func Sum(agg int64, value int64) int64 { return agg + value }
