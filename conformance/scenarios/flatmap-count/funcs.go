//go:build conformance

package main

import (
	"github.com/streamgen/streamgen/runtime/sgstream"
	"strconv"
)

// User functions of the scenario. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

// Fanout emits value%3 copies under derived keys, so some records vanish and some multiply.
func Fanout(key string, value int64) []sgstream.KeyValue[string, int64] {
	var out []sgstream.KeyValue[string, int64]
	for i := int64(0); i < value%3; i++ {
		out = append(out, sgstream.KeyValue[string, int64]{Key: key + "#" + strconv.FormatInt(i, 10), Value: value})
	}
	return out
}
