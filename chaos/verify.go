package chaos

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topics of the EOS application (chaos/eos/streamgen.yaml).
const (
	inputTopic = "eos-data"
	partitions = 5
)

// outputTopics are the application's output topics: echo (a copy of the
// input) and one topic per running aggregate.
var outputTopics = []string{"eos-echo", "eos-min", "eos-sum", "eos-max", "eos-cnt"}

// aggregate describes how an output topic's n-th record per key follows
// from the first n input records of that key.
type aggregate struct {
	init  int64
	step  func(agg int64, v int32) int64
	width int // value bytes: 4 (int32) or 8 (int64)
}

var aggregates = map[string]aggregate{
	"eos-min": {math.MaxInt32, func(a int64, v int32) int64 { return min(a, int64(v)) }, 4},
	"eos-sum": {0, func(a int64, v int32) int64 { return a + int64(v) }, 8},
	"eos-max": {math.MinInt32, func(a int64, v int32) int64 { return max(a, int64(v)) }, 4},
	"eos-cnt": {0, func(a int64, _ int32) int64 { return a + 1 }, 8},
}

// verdict is what the verifier found in one run.
type verdict struct {
	inputs         int64 // input records up to the committed offsets
	unprocessed    int64 // input records past the committed offsets
	lost, dup      int64 // summed over the output topics, per key
	abortedTxns    int   // transactions aborted (distinct ABORT markers' producer sessions)
	abortedRecords int64 // output records written in aborted transactions
	problems       []string
}

func (v *verdict) fail(format string, args ...any) {
	if len(v.problems) < 20 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	}
}

func (v *verdict) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(v.problems, "; "))
}

// verify runs Kafka's streams_eos_test checks once every instance has
// stopped: no transaction left open on any partition the application
// writes; the input read up to the group's committed offsets; echo equal to
// the input per partition, record by record; and for every aggregate
// exactly one output per input, the n-th equal to the running aggregate
// after n inputs of its key.
func verify(ctx context.Context, brokers []string, appID string) (*verdict, error) {
	v := &verdict{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	written, err := appTopics(ctx, adm, appID)
	if err != nil {
		return nil, err
	}

	// 1. No transaction left open: read_committed reaches the high
	// watermark (the last stable offset equals it) everywhere we wrote.
	if err := noOpenTransactions(ctx, adm, written, v); err != nil {
		return nil, err
	}

	// 2. The input up to the group's committed offsets.
	offs, err := adm.FetchOffsetsForTopics(ctx, appID, inputTopic)
	if err != nil {
		return nil, fmt.Errorf("committed offsets of group %s: %w", appID, err)
	}
	ends, err := adm.ListEndOffsets(ctx, inputTopic)
	if err != nil {
		return nil, err
	}
	cut := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := offs.Lookup(inputTopic, o.Partition)
		at := int64(0)
		if ok && c.Err == nil {
			at = c.At
		}
		cut[o.Partition] = at
		if at < o.Offset {
			v.unprocessed += o.Offset - at
			v.fail("input partition %d: committed offset %d, end %d: %d records never processed", o.Partition, at, o.Offset, o.Offset-at)
		}
	})
	input, _, err := readTopic(ctx, brokers, inputTopic, cut, false)
	if err != nil {
		return nil, err
	}
	for _, rs := range input {
		v.inputs += int64(len(rs))
	}

	// 3. Every output, read committed, to its end.
	outs := map[string]map[int32][]*kgo.Record{}
	for _, t := range outputTopics {
		lso, err := adm.ListCommittedOffsets(ctx, t)
		if err != nil {
			return nil, err
		}
		target := map[int32]int64{}
		lso.Each(func(o kadm.ListedOffset) { target[o.Partition] = o.Offset })
		recs, _, err := readTopic(ctx, brokers, t, target, true)
		if err != nil {
			return nil, err
		}
		outs[t] = recs
	}

	// 4. Per partition, record by record.
	for p := int32(0); p < partitions; p++ {
		in := input[p]
		checkEcho(v, p, in, outs["eos-echo"][p])
		for _, t := range outputTopics[1:] {
			checkAggregate(v, t, aggregates[t], p, in, outs[t][p])
		}
	}

	// Aborted transactions and the records they held, for the report.
	if err := countAborted(ctx, brokers, adm, written, outs, v); err != nil {
		return nil, err
	}
	return v, nil
}

// appTopics are the topics the application writes: its outputs and its
// internal (changelog and repartition) topics.
func appTopics(ctx context.Context, adm *kadm.Client, appID string) ([]string, error) {
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	out := append([]string(nil), outputTopics...)
	for _, t := range all.Names() {
		if strings.HasPrefix(t, appID+"-") {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

func noOpenTransactions(ctx context.Context, adm *kadm.Client, topics []string, v *verdict) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		hwm, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return err
		}
		lso, err := adm.ListCommittedOffsets(ctx, topics...)
		if err != nil {
			return err
		}
		var open []string
		hwm.Each(func(o kadm.ListedOffset) {
			l, ok := lso.Lookup(o.Topic, o.Partition)
			if !ok || l.Err != nil || o.Err != nil || l.Offset != o.Offset {
				open = append(open, fmt.Sprintf("%s[%d] lso %d hwm %d", o.Topic, o.Partition, l.Offset, o.Offset))
			}
		})
		if len(open) == 0 {
			return nil
		}
		// Markers of a transaction the coordinator is completing are
		// written asynchronously; Kafka's verifier also waits a little.
		if time.Now().After(deadline) {
			sort.Strings(open)
			v.fail("transactions left open: %s", strings.Join(open, ", "))
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// dropPurged removes from start the partitions of topic whose log starts
// at or past their target: nothing is left to read there. Kafka Streams
// deletes the records of its repartition topics once they are committed
// (repartition.purge.interval.ms), so a repartition partition can be empty
// with a high watermark far from 0.
func dropPurged(ctx context.Context, adm *kadm.Client, topic string, start map[int32]kgo.Offset, targets map[int32]int64) error {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return err
	}
	starts.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset >= targets[o.Partition] {
			delete(start, o.Partition)
		}
	})
	return nil
}

// readTopic reads every partition of topic from its start to the offset
// in targets (exclusive), read committed or not. Control records are kept
// so that the reader knows where it is when a partition ends with
// transaction markers; they are returned apart.
func readTopic(ctx context.Context, brokers []string, topic string, targets map[int32]int64, committed bool) (data, control map[int32][]*kgo.Record, err error) {
	data, control = map[int32][]*kgo.Record{}, map[int32][]*kgo.Record{}
	start := map[int32]kgo.Offset{}
	for p, t := range targets {
		if t > 0 {
			start[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(start) == 0 {
		return data, control, nil
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := dropPurged(ctx, kadm.NewClient(cl), topic, start, targets); err != nil {
		return nil, nil, err
	}
	pos := map[int32]int64{}
	for {
		doneAll := true
		for p := range start {
			if pos[p] < targets[p] {
				doneAll = false
			}
		}
		if doneAll {
			return data, control, nil
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("reading %s: %w (at %v of %v)", topic, ctx.Err(), pos, targets)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, e error) { ferr = e })
		if ferr != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", topic, ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= targets[r.Partition] {
				return
			}
			pos[r.Partition] = max(pos[r.Partition], r.Offset+1)
			if r.Attrs.IsControl() {
				control[r.Partition] = append(control[r.Partition], r)
			} else {
				data[r.Partition] = append(data[r.Partition], r)
			}
		})
	}
}

func checkEcho(v *verdict, p int32, in, out []*kgo.Record) {
	n := min(len(in), len(out))
	for i := 0; i < n; i++ {
		if !bytes.Equal(in[i].Key, out[i].Key) || !bytes.Equal(in[i].Value, out[i].Value) {
			v.fail("echo partition %d record %d: key %q value %x, input has key %q value %x (input offset %d)",
				p, i, out[i].Key, out[i].Value, in[i].Key, in[i].Value, in[i].Offset)
			break
		}
	}
	countPerKey(v, "eos-echo", p, in, out)
}

// countPerKey adds the per-key difference of input and output counts to
// lost and duplicated.
func countPerKey(v *verdict, topic string, p int32, in, out []*kgo.Record) {
	cnt := map[string]int64{}
	for _, r := range in {
		cnt[string(r.Key)]++
	}
	for _, r := range out {
		cnt[string(r.Key)]--
	}
	var lost, dup int64
	for _, c := range cnt {
		if c > 0 {
			lost += c
		} else {
			dup -= c
		}
	}
	if lost > 0 || dup > 0 {
		v.fail("%s partition %d: %d input records, %d outputs: %d lost, %d duplicated", topic, p, len(in), len(out), lost, dup)
	}
	v.lost += lost
	v.dup += dup
}

func checkAggregate(v *verdict, topic string, ag aggregate, p int32, in, out []*kgo.Record) {
	state := map[string]int64{}
	n := min(len(in), len(out))
	for i := 0; i < n; i++ {
		k := string(in[i].Key)
		val := int32(binary.BigEndian.Uint32(in[i].Value))
		a, ok := state[k]
		if !ok {
			a = ag.init
		}
		a = ag.step(a, val)
		state[k] = a
		got, err := decodeInt(out[i].Value, ag.width)
		if err != nil || string(out[i].Key) != k || got != a {
			v.fail("%s partition %d output %d: key %q value %d (%v), want key %q value %d (input offset %d)",
				topic, p, i, out[i].Key, got, err, k, a, in[i].Offset)
			break
		}
	}
	countPerKey(v, topic, p, in, out)
}

func decodeInt(b []byte, width int) (int64, error) {
	if len(b) != width {
		return 0, fmt.Errorf("%d value bytes, want %d", len(b), width)
	}
	if width == 4 {
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// countAborted reads everything the application wrote, uncommitted, with
// the transaction markers: aborted transactions are the distinct producer
// sessions and times of ABORT markers, aborted records the output records
// that read committed does not see.
func countAborted(ctx context.Context, brokers []string, adm *kadm.Client, topics []string, committedOuts map[string]map[int32][]*kgo.Record, v *verdict) error {
	type txn struct {
		pid   int64
		epoch int16
		sec   int64
	}
	aborted := map[txn]bool{}
	hwm, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	for _, t := range topics {
		target := map[int32]int64{}
		hwm.Each(func(o kadm.ListedOffset) {
			if o.Topic == t {
				target[o.Partition] = o.Offset
			}
		})
		data, control, err := readTopic(ctx, brokers, t, target, false)
		if err != nil {
			return err
		}
		for _, rs := range control {
			for _, r := range rs {
				// A control record's key is version (int16), type
				// (int16): 0 abort, 1 commit.
				if len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:]) == 0 {
					aborted[txn{r.ProducerID, r.ProducerEpoch, r.Timestamp.Unix()}] = true
				}
			}
		}
		if c, ok := committedOuts[t]; ok {
			for p, rs := range data {
				v.abortedRecords += int64(len(rs) - len(c[p]))
			}
		}
	}
	v.abortedTxns = len(aborted)
	return nil
}
