package sgreplay_test

import (
	"fmt"
	"time"

	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/serdes"
)

// codecs is the set of declared topics, as a generated application's
// sgapp.App provides it.
type codecs []sgreplay.TopicCodec

func (cs codecs) Codec(topic string) sgreplay.TopicCodec {
	for _, c := range cs {
		if c.Name() == topic {
			return c
		}
	}
	return nil
}

func (cs codecs) TopicNames() []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name())
	}
	return names
}

// Parse turns a line of the replay format into Kafka bytes through the
// topic's serdes; Format turns bytes back into a line.
func Example() {
	counts := sgreplay.Topic("order-counts", serdes.String, serdes.Int64)
	topics := codecs{counts}

	rec, _, err := sgreplay.Parse([]byte(`{"topic": "order-counts", "key": "alice", "value": 2, "timestamp": 1000, "headers": {"source": "demo"}}`), topics)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The int64 value is 8 bytes big-endian, as Kafka's LongSerializer writes it.
	fmt.Printf("key %q value % x at %d, header %s=%s\n", rec.Key, rec.Value, rec.Timestamp, rec.Headers[0].Key, rec.Headers[0].Value)

	line, err := sgreplay.Format(counts, rec.Topic, nil, rec.Key, rec.Value, rec.Timestamp, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(line))

	// A null value is a tombstone; an undeclared topic is an error.
	tomb, _, _ := sgreplay.Parse([]byte(`{"topic": "order-counts", "key": "bob", "value": null, "timestamp": 2000}`), topics)
	fmt.Println("tombstone value is nil:", tomb.Value == nil)
	_, _, err = sgreplay.Parse([]byte(`{"topic": "orders", "key": "x", "value": 1, "timestamp": 0}`), topics)
	fmt.Println(err)
	// Output:
	// key "alice" value 00 00 00 00 00 00 00 02 at 1000, header source=demo
	// {"topic":"order-counts","key":"alice","value":2,"timestamp":1000}
	// tombstone value is nil: true
	// topic "orders" is not declared in the spec (declared: order-counts)
}

// Windowed keys, the output of windowed aggregations, are written as
// {"key", "start", "end"}.
func ExampleTimeWindowedTopic() {
	c := sgreplay.TimeWindowedTopic("clicks-per-minute", serdes.String, serdes.Int64, time.Minute)
	k, v, err := c.EncodeJSON([]byte(`{"key": "/home", "start": 60000, "end": 120000}`), []byte(`3`))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, value, err := c.DecodeJSON(k, v)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(key), string(value))
	// Output:
	// {"key":"/home","start":60000,"end":120000} 3
}
