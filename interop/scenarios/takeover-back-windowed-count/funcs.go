package main

import (
	"strconv"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// UserAtStart writes the windowed key as "user@<window start>", as the
// twin's map((k, v) -> KeyValue.pair(k.key() + "@" + k.window().start(), v)).
func UserAtStart(key sgstream.Windowed[string], count int64) (string, int64) {
	return key.Key + "@" + strconv.FormatInt(key.Start, 10), count
}
