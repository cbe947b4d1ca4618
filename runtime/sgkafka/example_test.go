package sgkafka_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/streamgen/streamgen/runtime/sgkafka"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The engine embedded in a program: a count topology run with exactly-once
// on an in-process broker (franz-go's kfake; give Brokers a real cluster's
// addresses in production). IdleExit stops it cleanly once the input is
// done; a service would run until its context ends instead.
func Example() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "words", "counts"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()

	// Some input.
	producer, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, w := range []string{"go", "kafka", "go"} {
		r := &kgo.Record{Topic: "words", Key: []byte(w), Value: []byte(w)}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			fmt.Println(err)
			return
		}
	}
	producer.Close()

	// The topology, as generated code builds it.
	tp, err := sgstream.NewTopology("word-count", func(b *sgstream.Builder) {
		words := sgstream.Source(b, "words", sgstream.SourceConfig[string, string]{
			Topic: "words", Key: serdes.String, Value: serdes.String,
		})
		counts := sgstream.Count(sgstream.GroupByKey(words, serdes.String, serdes.String), "count", "counts-store")
		sgstream.To(sgstream.ToStream(counts, "changes"), "to-counts", "counts", sgstream.SinkConfig[string, int64]{
			Key: serdes.String, Value: serdes.Int64,
		})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	stateDir, err := os.MkdirTemp("", "sgkafka-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(stateDir)
	engine, err := sgkafka.New(tp, sgkafka.Config{
		Brokers:       brokers,
		StateDir:      stateDir,
		Guarantee:     sgkafka.ExactlyOnceV2,
		CacheMaxBytes: 0, // forward every update, as the TestDriver does
		IdleExit:      time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := engine.Run(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// What the application wrote, read as a consumer with read_committed.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("counts"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer consumer.Close()
	for seen := 0; seen < 3; {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			fmt.Println(err)
			return
		}
		fetches.EachRecord(func(r *kgo.Record) {
			n, _ := serdes.Int64.Decode(r.Value)
			fmt.Printf("%s=%d\n", r.Key, n)
			seen++
		})
	}
	// Output:
	// go=1
	// kafka=1
	// go=2
}
