package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamgen/streamgen/internal/kadmin"
)

// RecreateTopics deletes and recreates the named topics with one
// partition each, and deletes them when the test ends. It is for tests of
// a generated app whose topics are the spec's own names (not unique per
// test, as CreateTopic's are), so such tests must not run in parallel.
func RecreateTopics(t testing.TB, names ...string) {
	t.Helper()
	adm := Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = adm.DeleteTopics(ctx, names...)
	parts := map[string]int32{}
	for _, name := range names {
		parts[name] = 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := adm.CreateTopics(ctx, 1, 1, Retained(), names...)
		if err == nil && res.Error() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create topics: %v %v", err, res.Error())
		}
		time.Sleep(200 * time.Millisecond) // deletion still in progress
	}
	if err := kadmin.WaitLed(ctx, adm, parts, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), names...) })
}

// ReadOne consumes topic from the start until one record arrives, failing
// the test when ctx ends first.
func ReadOne(t testing.TB, ctx context.Context, topic string) *kgo.Record {
	t.Helper()
	cl := Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no record on %s: %v", topic, err)
		}
		if recs := fs.Records(); len(recs) > 0 {
			return recs[0]
		}
	}
}
