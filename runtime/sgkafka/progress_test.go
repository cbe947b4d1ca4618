package sgkafka

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamgen/streamgen/internal/kafkatest"

	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// The expected strings are Kafka Streams' TopicPartitionMetadata layout
// computed by hand from its definition (magic, partition time, entry
// count, then length-prefixed keys with their values), not by our encoder.
func TestProgressMetadataLayout(t *testing.T) {
	got := encodeProgress(1700000000000, map[string]int64{"counts": 42, "a": 7})
	if want := "AgAAAYvP5WgAAAAAAgAAAAFhAAAAAAAAAAcAAAAGY291bnRzAAAAAAAAACo="; got != want {
		t.Errorf("encode = %s, want %s", got, want)
	}
	if got, want := encodeProgress(unknownPartitionTime, nil), "Av//////////"; got != want {
		t.Errorf("encode unknown = %s, want %s", got, want)
	}
	pt, proc, ok := decodeProgress("AgAAAYvP5WgAAAAAAgAAAAFhAAAAAAAAAAcAAAAGY291bnRzAAAAAAAAACo=")
	if !ok || pt != 1700000000000 || !maps.Equal(proc, map[string]int64{"counts": 42, "a": 7}) {
		t.Errorf("decode = %d %v %v", pt, proc, ok)
	}
	// Version 1 carries the partition time only.
	if pt, proc, ok := decodeProgress("AQAAAAAAAAAF"); !ok || pt != 5 || proc != nil {
		t.Errorf("decode v1 = %d %v %v", pt, proc, ok)
	}
	for _, s := range []string{"", "member-1", "AwAAAAAAAAAF", "AgAA", "AgAAAAAAAAAFAAAAAQAAAP8="} {
		pt, proc, ok := decodeProgress(s)
		if s == "AgAAAAAAAAAFAAAAAQAAAP8=" {
			// A truncated entry keeps the partition time, drops the entries.
			if !ok || pt != 5 || proc != nil {
				t.Errorf("decode %q = %d %v %v, want 5 without entries", s, pt, proc, ok)
			}
			continue
		}
		if ok || pt != unknownPartitionTime {
			t.Errorf("decode %q = %d %v %v, want no progress", s, pt, proc, ok)
		}
	}
}

func FuzzDecodeProgress(f *testing.F) {
	f.Add(encodeProgress(12, map[string]int64{"s": 3}))
	f.Add("AgAAAAAAAAAFAAAAAQAAAP8=")
	f.Fuzz(func(t *testing.T, s string) {
		pt, proc, ok := decodeProgress(s)
		if !ok {
			return
		}
		if again := encodeProgress(pt, proc); again != s {
			if _, p2, _ := decodeProgress(again); !maps.Equal(p2, proc) {
				t.Fatalf("re-encoding %q changed its entries: %v vs %v", s, proc, p2)
			}
		}
	})
}

// After a task moves to an instance without its local state, an
// emit-on-close aggregation resumes from the progress committed with the
// offsets: it emits no window twice, and the committed metadata holds
// each partition's time in Kafka Streams' layout.
func TestEmitOnCloseResumesProgressAfterMove(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		createTopic(t, ev.brokers, ev.in, 2)
		createTopic(t, ev.brokers, ev.out, 2)
		// Emit on close; the store keeps an hour, so windows closed long
		// ago are still there to be emitted again by mistake.
		tp := ev.topology(t, windowedBuildWith(sgstream.TimeWindows{Size: 10 * time.Millisecond, Retention: time.Hour}, sgstream.EmitOnClose))
		recs := inputRecords(ev.in, 400, 5)
		cfg := func() Config {
			return Config{Brokers: ev.brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2, CommitInterval: 50 * time.Millisecond}
		}
		a := startEngine(t, tp, cfg())
		produce(t, ev.brokers, 2, recs[:150])
		waitFor(t, 60*time.Second, "a processed the first part", func() bool { return a.e.Processed() >= 150 })
		// Emission is throttled to once a wall-clock second (Kafka's
		// default): the next record after it has passed emits what closed.
		time.Sleep(1100 * time.Millisecond)
		produce(t, ev.brokers, 2, recs[150:200])
		waitFor(t, 60*time.Second, "a emitted closed windows", func() bool { return len(readCommitted(t, ev.brokers, ev.out)) > 0 })
		if err := a.stop(t); err != nil {
			t.Fatal(err)
		}
		checkCommittedPartitionTimes(t, ev, recs[:200])
		byA := len(readCommitted(t, ev.brokers, ev.out))

		b := startEngine(t, tp, cfg())
		produce(t, ev.brokers, 2, recs[200:])
		waitFor(t, 60*time.Second, "b processed the rest", func() bool { return b.e.Processed() >= 200 })
		time.Sleep(1100 * time.Millisecond)
		produce(t, ev.brokers, 2, inputRecords(ev.in, 1, 1)[:1]) // a late record moves b's emission on
		waitFor(t, 60*time.Second, "b emitted", func() bool { return len(readCommitted(t, ev.brokers, ev.out)) > byA })
		if err := b.stop(t); err != nil {
			t.Fatal(err)
		}
		if b.e.TotalRestored() == 0 {
			t.Fatal("b resumed the tasks without restoring their state: the test needs a move without local state")
		}
		seen := map[string]bool{}
		for _, r := range readCommitted(t, ev.brokers, ev.out) {
			k, _ := decodeWindowedCount(r.Key, r.Value)
			if seen[k] {
				t.Errorf("window %s emitted twice", k)
			}
			seen[k] = true
		}
	})
}

// checkCommittedPartitionTimes reads the group's committed offsets and
// checks that each input partition's metadata decodes to the largest
// timestamp produced to it.
func checkCommittedPartitionTimes(t *testing.T, ev testEnv, recs []sgstream.RawRecord) {
	t.Helper()
	want := map[int32]int64{}
	for _, r := range recs {
		p := sgpartition.Partition(r.Key, 2)
		want[p] = max(want[p], r.Timestamp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resps, err := kadm.NewClient(newClient(t, ev.brokers)).FetchOffsetsForTopics(ctx, ev.appID, ev.in)
	if err != nil {
		t.Fatal(err)
	}
	for p, ts := range want {
		r, ok := resps.Lookup(ev.in, p)
		if !ok {
			t.Fatalf("no committed offset for %s-%d", ev.in, p)
		}
		pt, proc, ok := decodeProgress(r.Metadata)
		if !ok || pt != ts {
			t.Errorf("%s-%d: committed metadata %q decodes to partition time %d (ok %v), want %d", ev.in, p, r.Metadata, pt, ok, ts)
		}
		if _, has := proc["wcounts"]; !has {
			t.Errorf("%s-%d: committed metadata has no last emission for store wcounts: %v", ev.in, p, proc)
		}
	}
}

// TestProgressFetchWaitsOnlyForItsPartitions holds a transaction open that
// commits an offset of partition 1, as another instance's task does all the
// time: reading partition 0's progress must not wait for it (reading it
// failed a task's reopening, which then left its partitions unprocessed),
// while partition 1's is unstable until the transaction ends and then holds
// the committed offset.
func TestProgressFetchWaitsOnlyForItsPartitions(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	topic, group := uniq("sgk-stable"), uniq("sgk-stable-group")
	createTopic(t, brokers, topic, 2)
	t.Cleanup(func() { deleteTopicsWithPrefix(t, brokers, topic, topic) })
	// Transactions version 1 requests, spelled out: the pending offset
	// commit needs no produced record.
	cl := newClient(t, brokers, kgo.MaxVersions(kversion.V3_6_0()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	txnID := uniq("sgk-stable-txn")
	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.TransactionalID, initReq.TransactionTimeoutMillis = &txnID, 60000
	initResp, err := initReq.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(initResp.ErrorCode)
	}
	if err != nil {
		t.Fatalf("init producer id: %v", err)
	}
	pid, epoch := initResp.ProducerID, initResp.ProducerEpoch
	adm := kadm.NewClient(cl)
	// Committed offsets first: the broker reports a pending commit as
	// unstable only over a committed one.
	first := kadm.Offsets{}
	first.AddOffset(topic, 0, 2, -1)
	first.AddOffset(topic, 1, 2, -1)
	if err := adm.CommitAllOffsets(ctx, group, first); err != nil {
		t.Fatalf("commit offsets: %v", err)
	}
	addReq := kmsg.NewPtrAddOffsetsToTxnRequest()
	addReq.TransactionalID, addReq.ProducerID, addReq.ProducerEpoch, addReq.Group = txnID, pid, epoch, group
	if resp, err := addReq.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("add offsets to txn: %v %v", err, resp)
	}
	commitReq := kmsg.NewPtrTxnOffsetCommitRequest()
	commitReq.TransactionalID, commitReq.Group, commitReq.ProducerID, commitReq.ProducerEpoch = txnID, group, pid, epoch
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 1, 5
	rt.Partitions = append(rt.Partitions, rp)
	commitReq.Topics = append(commitReq.Topics, rt)
	if resp, err := commitReq.RequestWith(ctx, cl); err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("txn offset commit: %v %v", err, resp)
	}

	short, cancelShort := context.WithTimeout(ctx, 10*time.Second)
	if _, err := fetchStableOffsets(short, cl, group, map[string][]int32{topic: {0}}); err != nil {
		t.Errorf("partition 0 with partition 1 pending: %v", err)
	}
	cancelShort()
	// One fetch, not the retrying one under a short deadline: on a loaded
	// machine the deadline could pass before the broker answered at all.
	short, cancelShort = context.WithTimeout(ctx, 10*time.Second)
	pending, err := fetchStableOnce(short, cl, group, map[string][]int32{topic: {1}})
	if err == nil {
		err = firstOffsetError(pending, map[string][]int32{topic: {1}})
	}
	if !errors.Is(err, kerr.UnstableOffsetCommit) {
		t.Errorf("partition 1 while its commit is pending: %v, want UNSTABLE_OFFSET_COMMIT", err)
	}
	cancelShort()

	go func() {
		time.Sleep(300 * time.Millisecond)
		end := kmsg.NewPtrEndTxnRequest()
		end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = txnID, pid, epoch, true
		if resp, err := end.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
			t.Errorf("end txn: %v %v", err, resp)
		}
	}()
	resps, err := fetchStableOffsets(ctx, cl, group, map[string][]int32{topic: {1}})
	if err != nil {
		t.Fatalf("partition 1 after its transaction: %v", err)
	}
	if r, _ := resps.Lookup(topic, 1); r.At != 5 {
		t.Errorf("partition 1 committed offset = %d, want 5", r.At)
	}
}
