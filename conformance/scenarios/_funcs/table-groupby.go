//go:build conformance

package main

// User functions of the table-groupby-* scenarios. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

func RegionAmount(key string, value *Account) (string, int64) { return value.Region, value.Amount }

func Zero() int64 { return 0 }

func AddAmount(key string, value int64, agg int64) int64 { return agg + value }

func SubtractAmount(key string, value int64, agg int64) int64 { return agg - value }

func RegionOf(key string, value *Account) (string, *Account) { return value.Region, value }

// Plus and Minus are the adder and subtractor of table-groupby-reduce.
func Plus(agg int64, value int64) int64 { return agg + value }

func Minus(agg int64, value int64) int64 { return agg - value }
