//go:build conformance

package main

// User functions of the scenario. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

func RegionOf(key string, value *Account) (string, *Account) { return value.Region, value }
