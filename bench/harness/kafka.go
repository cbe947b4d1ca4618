package main

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/streamgen/streamgen/internal/kadmin"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The topics every scenario reads and writes (bench/scenarios, bench/java).
const (
	src1 = "bench-src1"
	src2 = "bench-src2"
	sink = "bench-sink"
	// srcMany is manystores' input, created with -manystores-partitions
	// partitions and loaded with the records of src1.
	srcMany = "bench-src-many"
)

func newAdmin(brokers []string) (*kgo.Client, *kadm.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, nil, err
	}
	return cl, kadm.NewClient(cl), nil
}

// recreateTopic deletes topic if it exists and creates it anew, empty.
func recreateTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32) error {
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := kadmin.Create(ctx, adm, topic, partitions); err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	if err := kadmin.WaitLed(ctx, adm, map[string]int32{topic: partitions}, 100*time.Millisecond); err != nil {
		return fmt.Errorf("topic %s has no leaders after a minute", topic)
	}
	return nil
}

// deleteAppTopics removes the internal topics of an application id (its
// changelogs and repartition topics), so runs don't pile them up.
func deleteAppTopics(ctx context.Context, adm *kadm.Client, appID string) {
	kadmin.DeleteAppTopics(ctx, adm, appID)
	adm.DeleteGroups(ctx, appID)
}

// dataset describes what a topic is loaded with: n records over keys
// distinct keys (uniform), values of valueSize random bytes, and event time
// 1 ms apart ending a minute before the load, so windows and joins see a
// realistic spread (1000 records per second of event time).
type dataset struct {
	topic     string
	n         int
	keys      int
	keyPrefix string
	sequence  bool // key i%keys for record i instead of a random key
	valueSize int
	seed      uint64
	base      time.Time
	seen      *keySet // if set, marks the keys written
}

// keySet is a bitset of key numbers: which of the dataset's keys were
// written, so that disk bytes are divided by the keys actually held. A bit
// per key keeps 10 M keys at 1.25 MB.
type keySet []uint64

func newKeySet(keys int) *keySet {
	s := make(keySet, keys/64+1)
	return &s
}

func (s keySet) add(k int) { s[k/64] |= 1 << (k % 64) }

// count is the number of distinct keys in the union of the sets.
func countKeys(sets ...*keySet) int {
	n := 0
	for i := range *sets[0] {
		var w uint64
		for _, s := range sets {
			w |= (*s)[i]
		}
		n += bits.OnesCount64(w)
	}
	return n
}

// load produces the dataset and returns the bytes written (keys + values).
func load(ctx context.Context, brokers []string, d dataset) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.MaxBufferedRecords(50000),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(5*time.Millisecond),
		// Uncompressed, as Kafka's own producer writes by default: every
		// reader can decode it (Faust's client has no snappy built in).
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	r := rand.New(rand.NewPCG(d.seed, d.seed^0x9e3779b97f4a7c15))
	pool := make([]byte, 1<<16+d.valueSize)
	for i := range pool {
		pool[i] = byte(r.Uint32())
	}
	var failed atomic.Value
	var bytes int64
	for i := 0; i < d.n; i++ {
		k := i % d.keys
		if !d.sequence {
			k = r.IntN(d.keys)
		}
		if d.seen != nil {
			d.seen.add(k)
		}
		key := []byte(fmt.Sprintf("%s%d", d.keyPrefix, k))
		off := r.IntN(1 << 16)
		rec := &kgo.Record{Topic: d.topic, Key: key, Value: pool[off : off+d.valueSize],
			Timestamp: d.base.Add(time.Duration(i) * time.Millisecond)}
		bytes += int64(len(key) + d.valueSize)
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, err
	}
	if err, _ := failed.Load().(error); err != nil {
		return 0, err
	}
	return bytes, nil
}

// evict removes a group's members (LeaveGroup on their behalf), what the
// coordinator does itself once a killed member's session times out. Both
// systems get the same treatment after kill -9, so the resume time is not
// the session timeout.
func evict(ctx context.Context, cl *kgo.Client, adm *kadm.Client, group string) error {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return err
	}
	g, ok := described[group]
	if !ok || len(g.Members) == 0 {
		return nil
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	for _, m := range g.Members {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = m.MemberID
		lm.InstanceID = m.InstanceID
		reason := "killed by the benchmark"
		lm.Reason = &reason
		req.Members = append(req.Members, lm)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}
