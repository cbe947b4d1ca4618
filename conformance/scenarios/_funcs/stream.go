//go:build conformance

package main

import (
	"strconv"
)

// User functions of the stateless and grouped-stream scenarios (rekey-map-count, split-four,
// merge-three, repartition-partitions, flatmapvalues-reduce, stream-reduce,
// stream-aggregate-rekey). Each has a twin in
// conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java that must compute
// exactly the same thing. They read int64 values, so their scenarios keep tombstones away
// from them (a Go int64 cannot be null), except where Kafka Streams never calls them with one.

func NonZero(key string, value int64) bool { return value != 0 }

// BucketOf re-keys by value modulo 3 and keeps the old key's number in the value, so
// records of different keys collide in one bucket.
func BucketOf(key string, value int64) (string, int64) {
	return "b" + strconv.FormatInt(value%3, 10), value*10 + keyDigit(key)
}

func keyDigit(key string) int64 { return int64(key[len(key)-1] - '0') }

func IsLow(key string, value int64) bool { return value < 3 }

func IsMid(key string, value int64) bool { return value < 6 }

func IsHigh(key string, value int64) bool { return value < 8 }

func Times10(key string, value int64) int64 { return value * 10 }

// TagA, TagB and TagC say which input a merged record came from.
func TagA(key string, value int64) string { return "a" + strconv.FormatInt(value, 10) }

func TagB(key string, value int64) string { return "b" + strconv.FormatInt(value, 10) }

func TagC(key string, value int64) string { return "c" + strconv.FormatInt(value, 10) }

func ModKey(key string, value int64) string { return key + "-" + strconv.FormatInt(value%3, 10) }

// Copies makes value%3 values from one (none, one or two), so records vanish or multiply.
func Copies(key string, value int64) []int64 {
	var out []int64
	for i := int64(0); i < value%3; i++ {
		out = append(out, value*10+i)
	}
	return out
}

func Sum(agg int64, value int64) int64 { return agg + value }

// Min shows a tombstone that reached the reducer as a 0 (the values are 1..9).
func Min(agg int64, value int64) int64 { return min(agg, value) }

// KeyGroup groups k0..k9 by the parity of their digit; it reads only the key, because
// Kafka Streams calls a stream's group_by selector with tombstones too.
func KeyGroup(key string, value int64) string { return "g" + strconv.FormatInt(keyDigit(key)%2, 10) }

func Empty() string { return "" }

func AppendValue(key string, value int64, agg string) string {
	if agg == "" {
		return strconv.FormatInt(value, 10)
	}
	return agg + "," + strconv.FormatInt(value, 10)
}
