//go:build conformance

package main

import (
	"strconv"
)

// User functions of the scenario. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

func IsSmall(key string, value int64) bool { return value < 5 }

func Times10(key string, value int64) int64 { return value * 10 }

func ParityKey(key string, value int64) string { return key + "-" + strconv.FormatInt(value%2, 10) }
