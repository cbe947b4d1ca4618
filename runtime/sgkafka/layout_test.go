package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// markedCountBuild is countBuild with its store declared in streamgen's
// own layout, as the generator declares a store of msgpack values.
func markedCountBuild(in, out string) func(b *sgstream.Builder) {
	return func(b *sgstream.Builder) {
		countBuild(in, out)(b)
		sgstream.MarkOwnLayout(b, "counts")
	}
}

// TestOwnLayoutRestore: an own-layout store's changelog records carry the
// marker and restore on a fresh state directory; a record without it (what
// Kafka Streams, or streamgen before the marker, would have written) stops
// the next start before anything is processed, naming the store, the
// changelog, its partition and offset, and it is not retried.
func TestOwnLayoutRestore(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		createTopic(t, ev.brokers, ev.in, 2)
		createTopic(t, ev.brokers, ev.out, 2)
		tp := ev.topology(t, markedCountBuild)
		cfg := func() Config {
			return Config{Brokers: ev.brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2, CommitInterval: 50 * time.Millisecond}
		}
		recs := inputRecords(ev.in, 60, 7)
		produce(t, ev.brokers, 2, recs[:30])
		r := startEngine(t, tp, cfg())
		awaitDriverOutput(t, ev, tp, 2, recs[:30], decodeCount)
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		changelog := changelogTopic(ev.appID, "counts")
		for _, rec := range readCommitted(t, ev.brokers, changelog) {
			if len(rec.Headers) != 1 || rec.Headers[0].Key != engine.LayoutHeader || string(rec.Headers[0].Value) != engine.LayoutVersion {
				t.Fatalf("changelog record at partition %d offset %d has headers %+v, want the layout marker", rec.Partition, rec.Offset, rec.Headers)
			}
		}

		produce(t, ev.brokers, 2, recs[30:])
		r2 := startEngine(t, tp, cfg())
		awaitDriverOutput(t, ev, tp, 2, recs, decodeCount)
		if err := r2.stop(t); err != nil {
			t.Fatal(err)
		}
		if r2.e.TotalRestored() == 0 {
			t.Fatal("the second start restored nothing")
		}
		expectDriverOutput(t, ev, tp, 2, recs, decodeCount, "output after restoring marked records")

		off := produceUnmarked(t, ev.brokers, changelog)
		r3 := startEngine(t, tp, cfg())
		err := r3.wait(t, 90*time.Second)
		if !errors.Is(err, ErrChangelogLayout) {
			t.Fatalf("start on an unmarked changelog record ended with %v, want ErrChangelogLayout", err)
		}
		for _, want := range []string{`store "counts"`, fmt.Sprintf("changelog %q partition 1 offset %d", changelog, off), "Reset the application"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if n := r3.e.Processed(); n != 0 {
			t.Fatalf("processed %d records before refusing the changelog", n)
		}
	})
}

// produceUnmarked appends a count record without headers to partition 1 of
// changelog, as Kafka Streams logs one, and returns its offset.
func produceUnmarked(t *testing.T, brokers []string, changelog string) int64 {
	t.Helper()
	cl := newClient(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &kgo.Record{Topic: changelog, Partition: 1, Key: []byte("key1"), Value: []byte{0, 0, 0, 0, 0, 0, 0, 9}, Timestamp: time.UnixMilli(tsBase)}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return rec.Offset
}

// TestStandbyRefusesUnmarkedRecords: a standby copy of an own-layout store
// applies marked records and stops at one without the marker or with
// another layout version, as an active restoration does; a store in Kafka
// Streams' layout takes any record.
func TestStandbyRefusesUnmarkedRecords(t *testing.T) {
	marker := []kgo.RecordHeader{{Key: engine.LayoutHeader, Value: []byte(engine.LayoutVersion)}}
	rec := func(off int64, hs []kgo.RecordHeader) *kgo.Record {
		return &kgo.Record{Topic: "app-s-changelog", Partition: 2, Offset: off, Key: []byte("k"), Headers: hs}
	}
	own := standbyTarget{store: "s", task: engine.TaskID{Sub: 1, Partition: 2}, own: true}
	if got, err := own.batch(nil, []*kgo.Record{rec(0, marker), rec(1, marker)}); err != nil || len(got) != 2 {
		t.Fatalf("marked records: %d applied, %v", len(got), err)
	}
	other := []kgo.RecordHeader{{Key: engine.LayoutHeader, Value: []byte("99")}}
	for _, c := range []struct {
		hs   []kgo.RecordHeader
		want string
	}{{nil, "offset 6 has no streamgen.layout header"}, {other, `offset 6 has layout version "99"`}} {
		_, err := own.batch(nil, []*kgo.Record{rec(5, marker), rec(6, c.hs)})
		if !errors.Is(err, ErrChangelogLayout) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"app-s-changelog" partition 2`) {
			t.Errorf("headers %+v: %v, want ErrChangelogLayout saying %q", c.hs, err, c.want)
		}
	}
	ks := standbyTarget{store: "s"}
	if got, err := ks.batch(nil, []*kgo.Record{rec(0, nil)}); err != nil || len(got) != 1 {
		t.Fatalf("Kafka Streams layout: %d applied, %v", len(got), err)
	}
}
