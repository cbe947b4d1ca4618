package sgstream_test

import (
	"fmt"
	"strings"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/runtime/sgtest"
	"github.com/streamgen/streamgen/serdes"
)

// A topology built by hand, as generated code builds it: read words, drop
// empty ones, shout the rest, count them per key, and write both results.
// runtime/sgtest runs it in process with Kafka Streams' TopologyTestDriver
// semantics: each piped record is processed to completion and committed.
func Example() {
	build := func(b *sgstream.Builder) {
		words := sgstream.Source(b, "words", sgstream.SourceConfig[string, string]{
			Topic: "words", Key: serdes.String, Value: serdes.String,
		})
		nonEmpty := sgstream.FilterNot(words, "non-empty", func(key, value string) bool { return value == "" })
		shouted := sgstream.MapValues(nonEmpty, "shout", func(key, value string) string {
			return strings.ToUpper(value) + "!"
		})
		sgstream.To(shouted, "to-shouted", "shouted", sgstream.SinkConfig[string, string]{
			Key: serdes.String, Value: serdes.String,
		})
		grouped := sgstream.GroupByKey(nonEmpty, serdes.String, serdes.String)
		counts := sgstream.Count(grouped, "count", "counts-store")
		sgstream.To(sgstream.ToStream(counts, "counts-stream"), "to-counts", "counts", sgstream.SinkConfig[string, int64]{
			Key: serdes.String, Value: serdes.Int64,
		})
	}
	d, err := sgtest.Build("example-app", build)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	for i, w := range []string{"hello", "", "world"} {
		r := sgstream.Record[string, string]{Key: "k1", Value: w, Timestamp: int64(1000 * (i + 1))}
		if err := sgtest.PipeTyped(d, "words", serdes.String, serdes.String, r); err != nil {
			fmt.Println(err)
			return
		}
	}
	shoutedOut, err := sgtest.ReadTyped(d, "shouted", serdes.String, serdes.String)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range shoutedOut {
		fmt.Printf("shouted %s=%s @%d\n", r.Key, r.Value, r.Timestamp)
	}
	countsOut, err := sgtest.ReadTyped(d, "counts", serdes.String, serdes.Int64)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range countsOut {
		fmt.Printf("counts %s=%d @%d\n", r.Key, r.Value, r.Timestamp)
	}
	// Output:
	// shouted k1=HELLO! @1000
	// shouted k1=WORLD! @3000
	// counts k1=1 @1000
	// counts k1=2 @3000
}
