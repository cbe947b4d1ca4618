//go:build conformance

package main

import (
	"strconv"
	"strings"
)

// User functions of the scenario. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

// Describe is "label/n"; a table's map_values never sees a tombstone.
func Describe(key string, value *Info) string {
	return value.Label + "/" + strconv.FormatInt(value.N, 10)
}

// NotA keeps the rows whose label is not "a".
func NotA(key string, value string) bool { return !strings.HasPrefix(value, "a/") }

// EventWithLabel is "v|label", "v|null" without a label.
func EventWithLabel(key string, event *Event, label *string) string {
	l := "null"
	if label != nil {
		l = *label
	}
	return strconv.FormatInt(event.V, 10) + "|" + l
}
