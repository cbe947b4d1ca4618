package sgkafka

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// collector is the worker seen as the tasks' engine.Collector: records
// go to the worker's producer (inside the open transaction).
//
// Per record it does what a consume→produce loop over franz-go does and
// little more: one lookup of the topic (outTopics), the partitioner, a
// record to hand franz-go (the fetched record being processed, when it is
// the first record sent for it), and one copy of key and value into the
// worker's arena (arena.go), because sinks pass views of buffers they
// reuse (and of []byte values user functions may still write to) while
// franz-go reads them only when it writes the produce request.
type collector worker

func (c *collector) Send(topic string, partition int32, key, value []byte, ts int64, headers []sgstream.Header, partitionKey []byte) error {
	w := (*worker)(c)
	if err := w.begin(); err != nil {
		return err
	}
	out := w.outs.get(topic)
	if out.deadLetter {
		w.e.met.history.deadLetter(headers)
	}
	if partition < 0 {
		var err error
		if partition, err = out.partition(w.e, key, partitionKey); err != nil {
			return err
		}
	}
	r := w.record()
	k, v, chunk := w.arena.copies(key, value)
	*r = kgo.Record{Topic: topic, Partition: partition, Timestamp: time.UnixMilli(ts),
		Key: k, Value: v, Headers: kgoHeaders(headers), Context: chunk}
	promise := w.producedFn
	if out.changelog {
		w.clSent++
		promise = w.changelogFn
	}
	w.sentInTxn++
	w.cl.Produce(context.Background(), r, promise)
	return nil
}

// record returns a record to produce, which the caller overwrites whole.
// The first one sent while a fetched record is processed is that record:
// the engine is done with it (the task reads its RawRecord, whose slices
// stay as they are), franz-go hands fetched records over for good, and a
// pass-through topology then produces without allocating one.
func (w *worker) record() *kgo.Record {
	r := w.cur
	if r == nil {
		return new(kgo.Record)
	}
	w.cur = nil
	return r
}

// kgoHeaders converts a record's headers for franz-go, with copies of
// their values (operators may reuse them).
func kgoHeaders(headers []sgstream.Header) []kgo.RecordHeader {
	switch {
	case engine.IsLayoutMarker(headers):
		return layoutMarker
	case len(headers) == 0:
		return nil
	}
	out := make([]kgo.RecordHeader, len(headers))
	for i, h := range headers {
		out[i] = kgo.RecordHeader{Key: h.Key, Value: bytes.Clone(h.Value)}
	}
	return out
}

// produced is the promise of a record to a topic other than a changelog:
// franz-go calls it once the record is written or has failed, and only a
// failure concerns the worker (no lock on the way of every record).
func (w *worker) produced(r *kgo.Record, err error) {
	released(r)
	if err != nil {
		w.produceFailed(r, err)
	}
}

// producedChangelog is the promise of a changelog record: its offset
// advances the checkpoint the stores record at the next commit.
func (w *worker) producedChangelog(r *kgo.Record, err error) {
	released(r)
	if err != nil {
		w.produceFailed(r, err)
		return
	}
	k := checkpointKey(r.Topic, r.Partition)
	w.prodMu.Lock()
	if r.Offset+1 > w.clEnd[k] {
		w.clEnd[k] = r.Offset + 1
	}
	w.prodMu.Unlock()
}

// produceFailed keeps the first produce error for the next commit, which
// fails (and aborts) on it.
func (w *worker) produceFailed(r *kgo.Record, err error) {
	w.prodMu.Lock()
	if w.prodErr == nil {
		w.prodErr = fmt.Errorf("streamgen: producing to %q partition %d: %w", r.Topic, r.Partition, err)
	}
	w.prodMu.Unlock()
}

// layoutMarker is engine.OwnLayoutHeaders as franz-go sends them: one
// slice every marked changelog record shares (franz-go only reads a
// record's headers), so marking allocates nothing per record.
var layoutMarker = []kgo.RecordHeader{{Key: engine.LayoutHeader, Value: []byte(engine.LayoutVersion)}}

// outTopics is what a collector keeps per topic it produces to, looked up
// once per record (the last topic without hashing its name): the
// partition count, the round robin and whether the topic is a changelog
// or the dead-letter topic were four lookups per record.
type outTopics struct {
	e    *Engine
	m    map[string]*outTopic
	last *outTopic
}

type outTopic struct {
	name       string
	partitions int32  // 0 until a record needs the partitioner
	rr         uint32 // round robin over partitions for records without a key
	changelog  bool
	deadLetter bool
}

func newOutTopics(e *Engine) outTopics { return outTopics{e: e, m: map[string]*outTopic{}} }

func (o *outTopics) get(topic string) *outTopic {
	if t := o.last; t != nil && t.name == topic {
		return t
	}
	t := o.m[topic]
	if t == nil {
		t = &outTopic{name: topic, changelog: o.e.isChangelog(topic), deadLetter: topic == o.e.cfg.DeadLetterTopic}
		o.m[topic] = t
	}
	o.last = t
	return t
}

// partition is Kafka's default partitioner: murmur2 of partitionKey (of
// key when it is nil), round robin for a record without either. The
// partition count is asked of the engine once per topic.
func (t *outTopic) partition(e *Engine, key, partitionKey []byte) (int32, error) {
	if t.partitions == 0 {
		n, err := e.partitions(context.Background(), t.name)
		if err != nil {
			return 0, err
		}
		t.partitions = int32(n)
	}
	if partitionKey == nil {
		partitionKey = key
	}
	if partitionKey == nil {
		p := int32(t.rr % uint32(t.partitions))
		t.rr++
		return p, nil
	}
	return sgpartition.Partition(partitionKey, t.partitions), nil
}
