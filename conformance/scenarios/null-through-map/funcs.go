//go:build conformance

package main

import (
	"strconv"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// ReadableSession re-keys a session count as "user@start->end" and passes
// the count on, null included (SessionWindowsExample's map).
func ReadableSession(key sgstream.Windowed[string], value *int64) (string, *int64) {
	return key.Key + "@" + strconv.FormatInt(key.Start, 10) + "->" + strconv.FormatInt(key.End, 10), value
}

// TagKey marks the key and multiplies a present value by 10; a null stays
// null.
func TagKey(key string, value *int64) (string, *int64) {
	if value == nil {
		return key + "!", nil
	}
	v := *value * 10
	return key + "!", &v
}

// Double doubles a value the not_null filter let through.
func Double(key string, value int64) int64 { return value * 2 }
