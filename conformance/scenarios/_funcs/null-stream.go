//go:build conformance

package main

import (
	"strconv"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// User functions of the scenarios where tombstones reach user functions over int64 values
// (null-through-map, null-stream-topic, null-windowed): a function Kafka Streams hands a
// null value takes *int64, nil being the tombstone. Each has a twin in
// conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java that must compute
// exactly the same thing.

// ReadableSession re-keys a session count as "user@start->end" and passes
// the count on, null included (SessionWindowsExample's map).
func ReadableSession(key sgstream.Windowed[string], value *int64) (string, *int64) {
	return key.Key + "@" + strconv.FormatInt(key.Start, 10) + "->" + strconv.FormatInt(key.End, 10), value
}

// TagKey marks the key and multiplies a present value by 10 (0 stays a present 0); a
// tombstone stays a tombstone.
func TagKey(key string, value *int64) (string, *int64) {
	if value == nil {
		return key + "!", nil
	}
	v := *value * 10
	return key + "!", &v
}

// Double doubles a value the not_null filter let through.
func Double(key string, value int64) int64 { return value * 2 }

// NullOrTwenties keeps tombstones and multiples of 20 (0 included).
func NullOrTwenties(key string, value *int64) bool { return value == nil || *value%20 == 0 }

// RouteScore sends tombstones to out-nulls and values, 0 included, to out-values.
func RouteScore(key string, value *int64) string {
	if value == nil {
		return "out-nulls"
	}
	return "out-values"
}

// Parity groups by the value's parity, tombstones under "none".
func Parity(key string, value *int64) string {
	switch {
	case value == nil:
		return "none"
	case *value%2 == 0:
		return "even"
	}
	return "odd"
}

func Empty() string { return "" }

// AppendScore lists the values of a window in arrival order, "null" for a tombstone.
func AppendScore(key string, value *int64, agg string) string {
	s := "null"
	if value != nil {
		s = strconv.FormatInt(*value, 10)
	}
	if agg == "" {
		return s
	}
	return agg + "," + s
}

func MergeLists(key string, a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "+" + b
}

// SumOrDelete adds a present value; a tombstone deletes the window's sum.
func SumOrDelete(agg, value *int64) *int64 {
	if value == nil {
		return nil
	}
	s := *agg + *value
	return &s
}

// SameSum passes a windowed sum on, tombstones included.
func SameSum(key sgstream.Windowed[string], value *int64) *int64 { return value }

// marker forwards every record under "<key>#<kind>" with its value unchanged, a tombstone
// as a tombstone; kind is "null", "zero" or "value".
type marker struct {
	ctx *sgstream.ProcessorContext[string, int64]
}

// NewMarker makes the processor of one task.
func NewMarker() sgstream.Processor[string, *int64, string, int64] { return &marker{} }

func (p *marker) Init(ctx *sgstream.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	return nil
}

func (p *marker) Process(r sgstream.Record[string, *int64]) error {
	out := sgstream.Record[string, int64]{Timestamp: r.Timestamp, Headers: r.Headers}
	switch {
	case r.Value == nil:
		out.Key, out.ValueNull = r.Key+"#null", true
	case *r.Value == 0:
		out.Key = r.Key + "#zero"
	default:
		out.Key, out.Value = r.Key+"#value", *r.Value
	}
	return p.ctx.Forward(out)
}

func (p *marker) Close() error { return nil }
