//go:build conformance

package main

import (
	"strconv"
)

// User functions of the table-operator scenarios (table-filter-mapvalues,
// table-filternot-tostream, stream-to-table). Each has a twin in
// conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java that must compute
// exactly the same thing. They are written as a port from Java would be: no nil check where
// Kafka Streams never passes a null (a table's filter and map_values), so a tombstone reaching
// one of them is a processing error, and a check where it does (a stream's map_values).

func SmallN(key string, value *Info) bool { return value.N < 5 }

func IsA(key string, value *Info) bool { return value.Label == "a" }

func Describe(key string, value *Info) string {
	return value.Label + "/" + strconv.FormatInt(value.N, 10)
}

// Render is Describe for a stream, where tombstones arrive. The stream comes
// from a table's to_stream, so its values can be null and the generator
// gives the mapper a nullable result too; like the Java twin it never
// returns null.
func Render(key string, value *Info) *string {
	s := "null"
	if value != nil {
		s = Describe(key, value)
	}
	return &s
}
