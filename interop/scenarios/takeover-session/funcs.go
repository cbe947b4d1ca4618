package main

import (
	"strconv"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// UserAtSession writes the session key as "user@start->end", as the twin's
// map((k, v) -> KeyValue.pair(k.key() + "@" + start + "->" + end, v)); the
// count passes on unchanged, so a merged-away session's tombstone (nil)
// stays a tombstone.
func UserAtSession(key sgstream.Windowed[string], count *int64) (string, *int64) {
	return key.Key + "@" + strconv.FormatInt(key.Start, 10) + "->" + strconv.FormatInt(key.End, 10), count
}
