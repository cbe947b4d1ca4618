package sgkafka

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// A task's progress (engine.Progress) travels in the metadata string of
// each source partition's committed offset, in Kafka Streams' own layout
// (TopicPartitionMetadata, version 2): base64 of a magic byte 2, the
// partition time as a big-endian int64 (-1 when unknown), then the
// processor metadata, when there is any: an int32 count and, per entry,
// an int32 key length, the UTF-8 key and an int64 value. Speaking that
// layout lets either runtime resume the other's progress under one
// application id.
const (
	progressMagic         = 2
	unknownPartitionTime  = -1
	progressFetchTimeout  = commitTimeout
	maxProgressMetaLength = 1 << 20
)

// encodeProgress is the offset commit metadata of one source partition.
// Keys are written sorted, so equal progress commits equal strings.
func encodeProgress(partitionTime int64, processor map[string]int64) string {
	b := make([]byte, 0, 9+len(processor)*24)
	b = append(b, progressMagic)
	b = binary.BigEndian.AppendUint64(b, uint64(partitionTime))
	if len(processor) > 0 {
		keys := make([]string, 0, len(processor))
		for k := range processor {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = binary.BigEndian.AppendUint32(b, uint32(len(keys)))
		for _, k := range keys {
			b = binary.BigEndian.AppendUint32(b, uint32(len(k)))
			b = append(b, k...)
			b = binary.BigEndian.AppendUint64(b, uint64(processor[k]))
		}
	}
	return base64.StdEncoding.EncodeToString(b)
}

// decodeProgress reads commit metadata. Metadata another client wrote (an
// empty string, franz-go's member id, a version this runtime does not
// know) is no progress, not an error: Kafka Streams also starts from
// nothing known then.
func decodeProgress(s string) (partitionTime int64, processor map[string]int64, ok bool) {
	if s == "" || len(s) > maxProgressMetaLength {
		return unknownPartitionTime, nil, false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) < 9 || (b[0] != 1 && b[0] != progressMagic) {
		return unknownPartitionTime, nil, false
	}
	partitionTime = int64(binary.BigEndian.Uint64(b[1:9]))
	if b[0] == 1 || len(b) == 9 {
		return partitionTime, nil, true
	}
	processor, ok = decodeProcessorMetadata(b[9:])
	if !ok {
		return partitionTime, nil, true
	}
	return partitionTime, processor, true
}

// decodeProcessorMetadata reads the processor metadata entries, refusing
// lengths that run past the end.
func decodeProcessorMetadata(b []byte) (map[string]int64, bool) {
	if len(b) < 4 {
		return nil, false
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	out := map[string]int64{}
	for range n {
		if len(b) < 4 {
			return nil, false
		}
		kl := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(len(b)) < uint64(kl)+8 {
			return nil, false
		}
		out[string(b[:kl])] = int64(binary.BigEndian.Uint64(b[kl:]))
		b = b[kl+8:]
	}
	return out, true
}

// fetchProgress reads the progress the group committed for the source
// partitions of tasks ids (stable offsets: a pending transaction's commit
// is waited for). A failed fetch is returned: opening a task without the
// progress its last owner committed would emit closed windows again.
func (w *worker) fetchProgress(ids []engine.TaskID) (map[engine.TaskID]engine.Progress, error) {
	subs := w.e.tp.SubTopologies()
	want := map[string][]int32{}
	for _, id := range ids {
		for _, t := range subs[id.Sub].Topics {
			want[t] = append(want[t], id.Partition)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), progressFetchTimeout)
	defer cancel()
	start := time.Now()
	resps, err := fetchStableOffsets(ctx, w.cl, w.e.cfg.ApplicationID, want)
	if err != nil {
		return nil, transient(fmt.Errorf("streamgen: worker %d: reading committed progress: %w", w.idx, err))
	}
	out := map[engine.TaskID]engine.Progress{}
	for _, id := range ids {
		out[id] = progressOf(resps, subs[id.Sub].Topics, id.Partition)
	}
	w.log.Debug("committed progress read", "tasks", len(ids), "took", time.Since(start).String())
	return out, nil
}

// fetchStableOffsets fetches group's committed offsets of the partitions
// in want, waiting while one is unstable. The broker answers
// UNSTABLE_OFFSET_COMMIT while a transaction that commits a requested
// partition's offset is open, which is normal for a moment after a task
// moves (its last owner's commit is in flight). Only the partitions in
// want are asked for: other instances' transactions keep the other
// partitions of the same topics unstable nearly all the time, and a fetch
// of every partition failed for them.
func fetchStableOffsets(ctx context.Context, cl *kgo.Client, group string, want map[string][]int32) (kadm.OffsetResponses, error) {
	for {
		resps, err := fetchStableOnce(ctx, cl, group, want)
		if err == nil {
			err = firstOffsetError(resps, want)
		}
		if !errors.Is(err, kerr.UnstableOffsetCommit) {
			return resps, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fetchStableOnce is one stable OffsetFetch of exactly the partitions in
// want, which kadm offers only for whole topics.
func fetchStableOnce(ctx context.Context, cl *kgo.Client, group string, want map[string][]int32) (kadm.OffsetResponses, error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	req.RequireStable = true
	for _, topic := range slices.Sorted(maps.Keys(want)) {
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = topic, want[topic]
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return nil, err
	}
	out := kadm.OffsetResponses{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			meta := ""
			if p.Metadata != nil {
				meta = *p.Metadata
			}
			if out[t.Topic] == nil {
				out[t.Topic] = map[int32]kadm.OffsetResponse{}
			}
			out[t.Topic][p.Partition] = kadm.OffsetResponse{
				Offset: kadm.Offset{Topic: t.Topic, Partition: p.Partition, At: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: meta},
				Err:    kerr.ErrorForCode(p.ErrorCode),
			}
		}
	}
	return out, nil
}

// firstOffsetError is the error of the first partition of want whose
// offset could not be fetched, an unstable one only if there is no other.
func firstOffsetError(resps kadm.OffsetResponses, want map[string][]int32) error {
	var unstable error
	for topic, ps := range want {
		for _, p := range ps {
			r, ok := resps.Lookup(topic, p)
			switch {
			case !ok || r.Err == nil:
			case errors.Is(r.Err, kerr.UnstableOffsetCommit):
				unstable = fmt.Errorf("%s[%d]: %w", topic, p, r.Err)
			default:
				return fmt.Errorf("%s[%d]: %w", topic, p, r.Err)
			}
		}
	}
	return unstable
}

// progressOf merges the committed metadata of one task's partitions:
// partition times per topic, processor metadata by maximum (as Kafka
// Streams' ProcessorMetadata.update does).
func progressOf(resps kadm.OffsetResponses, topics []string, partition int32) engine.Progress {
	var p engine.Progress
	for _, topic := range topics {
		r, ok := resps.Lookup(topic, partition)
		if !ok || r.Err != nil || r.At < 0 {
			continue
		}
		pt, proc, ok := decodeProgress(r.Metadata)
		if !ok {
			continue
		}
		if pt >= 0 {
			if p.PartitionTimes == nil {
				p.PartitionTimes = map[string]int64{}
			}
			p.PartitionTimes[topic] = pt
		}
		for k, v := range proc {
			if p.Processor == nil {
				p.Processor = map[string]int64{}
			}
			if old, seen := p.Processor[k]; !seen || v > old {
				p.Processor[k] = v
			}
		}
	}
	return p
}

// progressMetadata is the commit metadata of every source partition of
// the worker's tasks, computed before the commit so the request hook only
// copies strings (it runs under the client's transaction lock).
func (w *worker) progressMetadata() map[string]map[int32]string {
	subs := w.e.tp.SubTopologies()
	out := map[string]map[int32]string{}
	for id, tk := range w.tasks {
		p := tk.t.Progress()
		for _, topic := range subs[id.Sub].Topics {
			pt, ok := p.PartitionTimes[topic]
			if !ok {
				pt = unknownPartitionTime
			}
			if out[topic] == nil {
				out[topic] = map[int32]string{}
			}
			out[topic][id.Partition] = encodeProgress(pt, p.Processor)
		}
	}
	return out
}

// withProgress returns ctx carrying the request hooks that put each
// partition's progress into the offset commit, transactional or not.
func withProgress(ctx context.Context, meta map[string]map[int32]string) context.Context {
	set := func(topic string, partition int32, dst **string) {
		if s, ok := meta[topic][partition]; ok {
			*dst = &s
		}
	}
	ctx = kgo.PreTxnCommitFnContext(ctx, func(req *kmsg.TxnOffsetCommitRequest) error {
		for i := range req.Topics {
			t := &req.Topics[i]
			for j := range t.Partitions {
				set(t.Topic, t.Partitions[j].Partition, &t.Partitions[j].Metadata)
			}
		}
		return nil
	})
	return kgo.PreCommitFnContext(ctx, func(req *kmsg.OffsetCommitRequest) error {
		for i := range req.Topics {
			t := &req.Topics[i]
			for j := range t.Partitions {
				set(t.Topic, t.Partitions[j].Partition, &t.Partitions[j].Metadata)
			}
		}
		return nil
	})
}
