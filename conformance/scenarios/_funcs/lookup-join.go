//go:build conformance

package main

import (
	"strconv"
)

// User functions of the lookup joins (sg-inner, sg-left, st-inner-rekey): a stream of events
// whose ref names a row of infos. Each has a twin in
// conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java that must compute
// exactly the same thing.

// EventRef maps an event to its info's key. Kafka Streams calls it with tombstones too
// (the join drops them afterwards), so it checks.
func EventRef(key string, value *Event) string {
	if value == nil {
		return key
	}
	return value.Ref
}

func EventWithInfo(key string, event *Event, info *Info) string {
	v := "null"
	if event != nil {
		v = strconv.FormatInt(event.V, 10) + "@" + event.Ref
	}
	l := "null"
	if info != nil {
		l = info.Label
	}
	return key + ":" + v + "|" + l
}
