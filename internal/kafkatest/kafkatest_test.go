package kafkatest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// These tests prove that the broker started by scripts/kafka.sh is a working Kafka:
// topics, keyed produce/consume, and transactions with read_committed isolation.

func TestTopicNameIsLegalAndUnique(t *testing.T) {
	t.Run("sub/test.with_odd chars", func(t *testing.T) {
		a, b := TopicName(t), TopicName(t)
		if a == b {
			t.Fatalf("two calls gave the same name %q", a)
		}
		if !strings.HasPrefix(a, "sg-TestTopicNameIsLegalAndUnique-sub-test-with-odd-chars-") {
			t.Fatalf("unexpected name %q", a)
		}
		for _, r := range a {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("name %q has %q, which Kafka rejects or warns about", a, r)
			}
		}
	})
}

func TestParseBrokers(t *testing.T) {
	got := parseBrokers(" 127.0.0.1:9092, ,127.0.0.1:9093,")
	want := []string{"127.0.0.1:9092", "127.0.0.1:9093"}
	if !slices.Equal(got, want) {
		t.Fatalf("parseBrokers = %q, want %q", got, want)
	}
	if got := parseBrokers(""); len(got) != 0 {
		t.Fatalf("parseBrokers(\"\") = %q, want none", got)
	}
}

func TestProduceConsume(t *testing.T) {
	t.Parallel()
	topic := CreateTopic(t, 3, nil)
	ctx := testContext(t)

	prod := Client(t, kgo.DefaultProduceTopic(topic))
	var sent []*kgo.Record
	for i := range 30 {
		sent = append(sent, &kgo.Record{
			Key:   fmt.Appendf(nil, "key-%d", i%7),
			Value: fmt.Appendf(nil, "value-%d", i),
		})
	}
	if err := prod.ProduceSync(ctx, sent...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	partOfKey := map[string]int32{}
	for _, r := range sent {
		if p, ok := partOfKey[string(r.Key)]; ok && p != r.Partition {
			t.Fatalf("key %s went to partitions %d and %d", r.Key, p, r.Partition)
		}
		partOfKey[string(r.Key)] = r.Partition
	}

	got := consume(t, ctx, Brokers(t), topic, kgo.ReadUncommitted(), len(sent))
	// Order is kept per partition, so compare per partition in produce order.
	for p := range int32(3) {
		var want, have []string
		for _, r := range sent {
			if r.Partition == p {
				want = append(want, string(r.Key)+"="+string(r.Value))
			}
		}
		for _, r := range got {
			if r.Partition == p {
				have = append(have, string(r.Key)+"="+string(r.Value))
			}
		}
		if !slices.Equal(have, want) {
			t.Errorf("partition %d: consumed %q, want %q", p, have, want)
		}
	}
}

func TestTransactionsCommitAndAbort(t *testing.T) {
	t.Parallel()
	topic := CreateTopic(t, 1, nil)
	ctx := testContext(t)

	txn := Client(t,
		kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID(TopicName(t)),
		kgo.TransactionTimeout(30*time.Second),
	)
	produceTxn := func(commit bool, values ...string) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatalf("begin transaction: %v", err)
		}
		for _, v := range values {
			if err := txn.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatalf("produce %q: %v", v, err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction (commit=%v): %v", commit, err)
		}
	}
	produceTxn(true, "committed-1", "committed-2")
	produceTxn(false, "aborted-1", "aborted-2")
	produceTxn(true, "committed-3")

	// One partition, so records arrive in offset order: had the aborted records been
	// visible they would come before committed-3, which is the last one expected.
	committed := values(consume(t, ctx, Brokers(t), topic, kgo.ReadCommitted(), 3))
	if want := []string{"committed-1", "committed-2", "committed-3"}; !slices.Equal(committed, want) {
		t.Fatalf("read_committed consumer saw %q, want %q", committed, want)
	}
	// The aborted records really are in the log: read_uncommitted sees them. Without
	// this, the test above would also pass if the abort had simply dropped them.
	all := values(consume(t, ctx, Brokers(t), topic, kgo.ReadUncommitted(), 5))
	if want := []string{"committed-1", "committed-2", "aborted-1", "aborted-2", "committed-3"}; !slices.Equal(all, want) {
		t.Fatalf("read_uncommitted consumer saw %q, want %q", all, want)
	}
}

// TestDedicatedBrokerSurvivesKill9 proves kill9 and restart in scripts/kafka.sh: acknowledged
// records survive a crash, and the broker comes back on the same address. (Restarting after
// kill -9 takes ~10 s longer than a clean restart: the controller refuses the new
// registration until the dead incarnation's broker.session.timeout.ms, 9 s, expires.)
func TestDedicatedBrokerSurvivesKill9(t *testing.T) {
	t.Parallel()
	b := NewBroker(t)
	addr := b.Addr
	topic := b.CreateTopic(1, nil)
	ctx := testContext(t)

	prod := b.Client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := prod.ProduceSync(ctx, kgo.StringRecord("before-crash")).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	prod.Close()

	b.Kill9()
	b.Restart() // from a dead broker: recovers the log like a start after a crash
	if b.Addr != addr {
		t.Fatalf("broker came back on %s, was %s", b.Addr, addr)
	}

	got := values(consume(t, ctx, []string{b.Addr}, topic, kgo.ReadCommitted(), 1))
	if !slices.Equal(got, []string{"before-crash"}) {
		t.Fatalf("after kill -9 and restarts consumed %q, want [before-crash]", got)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// consume reads n records from the start of topic with a fresh group-less consumer and
// then checks briefly that no more arrive.
func consume(t *testing.T, ctx context.Context, brokers []string, topic string, iso kgo.IsolationLevel, n int) []*kgo.Record {
	t.Helper()
	cl := clientFor(t, brokers,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso),
	)
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records from %s: %v", len(got), n, topic, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		})
		got = append(got, fs.Records()...)
	}
	extraCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if extra := cl.PollFetches(extraCtx).Records(); len(extra) > 0 {
		t.Fatalf("consumed %d records more than the %d expected from %s", len(extra), n, topic)
	}
	return got
}

func values(rs []*kgo.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Value))
	}
	return out
}
