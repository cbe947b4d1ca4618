// Command session-windows is the streamgen side of the interop scenario session-windows
// (interop/README.md): Confluent's SessionWindowsExample.
package main

import (
	"strconv"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

//go:generate go tool streamgen generate

// ReadableSession is the example's map: the key becomes "user@start->end" and the count passes
// on unchanged, so a merged-away session's tombstone (nil) stays a tombstone.
func ReadableSession(key sgstream.Windowed[string], count *int64) (string, *int64) {
	return key.Key + "@" + strconv.FormatInt(key.Start, 10) + "->" + strconv.FormatInt(key.End, 10), count
}
