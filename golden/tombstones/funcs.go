package tombstones

import (
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// The user functions of the tombstones golden case: a function that Kafka
// Streams hands a null value takes *int64 or *Level, nil being the
// tombstone; one it never hands a null takes the plain value.

// Halve halves a score and passes a tombstone on as one.
func Halve(key string, value *int64) *int64 {
	if value == nil {
		return nil
	}
	h := *value / 2
	return &h
}

// KeepScore keeps tombstones and present scores alike, 0 included.
func KeepScore(key string, value *int64) bool { return value == nil || *value >= 0 }

// Route sends tombstones to their own topic.
func Route(key string, value *int64) string {
	if value == nil {
		return "out-b"
	}
	return "out"
}

// Bucket groups tombstones apart from the scores.
func Bucket(key string, value *int64) string {
	if value == nil {
		return "deleted"
	}
	return key
}

func Zero() int64 { return 0 }

// AddScore adds a score; plain and sliding aggregations never hand it a
// tombstone.
func AddScore(key string, value int64, agg int64) int64 { return agg + value }

// AddNullable counts a tombstone as -1.
func AddNullable(key string, value *int64, agg int64) int64 {
	if value == nil {
		return agg - 1
	}
	return agg + *value
}

func AddPlain(key string, value int64, agg int64) int64 { return agg + value }

func Merge(key string, a, b int64) int64 { return a + b }

// MaxScore keeps the larger score; a tombstone deletes the window's row.
func MaxScore(agg, value *int64) *int64 {
	if value == nil || *agg >= *value {
		return nil
	}
	return value
}

// SameScore passes a windowed reduce's value on, tombstones included.
func SameScore(key sgstream.Windowed[string], value *int64) *int64 { return value }

// Price prices a present score; a missing price is nil.
func Price(key string, left int64, right *int64) int64 {
	if right == nil {
		return left
	}
	return left * *right
}

func PlainHalve(key string, value int64) int64 { return value / 2 }

// levelProcessor names each level and says "deleted" for a tombstone.
type levelProcessor struct {
	ctx *sgstream.ProcessorContext[string, string]
}

func NewLevelProcessor() sgstream.Processor[string, *Level, string, string] {
	return &levelProcessor{}
}

func (p *levelProcessor) Init(ctx *sgstream.ProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}

func (p *levelProcessor) Process(r sgstream.Record[string, *Level]) error {
	name := "deleted"
	if r.Value != nil {
		name = r.Value.String()
	}
	return p.ctx.Forward(sgstream.Record[string, string]{Key: r.Key, Value: name, Timestamp: r.Timestamp, Headers: r.Headers})
}

func (p *levelProcessor) Close() error { return nil }
