//go:build conformance

package main

import (
	"strconv"
)

// User functions of the scenario. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

func eventV(e *Event) string {
	if e == nil {
		return "null"
	}
	return strconv.FormatInt(e.V, 10)
}

func label(i *Info) string {
	if i == nil {
		return "null"
	}
	return i.Label
}

func TableJoin(key string, left *Event, right *Info) string { return eventV(left) + "|" + label(right) }

// SmallEvent and NotD filter a side of tt-*-filtered before the join.
func SmallEvent(key string, value *Event) bool { return value.V < 6 }

func NotD(key string, value *Info) bool { return value.Label != "d" }
