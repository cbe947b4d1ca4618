package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// This file runs a worker as a member of a streams group (KIP-1071,
// --group-protocol streams): the broker assigns tasks in heartbeat
// responses, so the worker's client consumes the partitions of its tasks
// directly (no kgo consumer group) and commits offsets itself, with the
// member epoch that the group coordinator checks on every commit.

// Group protocols (Config.GroupProtocol).
const (
	ProtocolClassic = "classic"
	ProtocolStreams = "streams"
)

// streamsOffsetsEvery is how often a member reports its task offset sums
// (Kafka Streams' default task.offset.interval is a minute; the broker's
// lower bound is 15 s, and a warm-up's progress shows sooner this way).
const streamsOffsetsEvery = 15 * time.Second

// streamsDriver is a worker's streams group membership. Its goroutine
// heartbeats; the worker goroutine applies a new target assignment right
// after a commit (revoked tasks first, as Kafka Streams does) and
// acknowledges it, which the next heartbeat reports at once.
type streamsDriver struct {
	w    *worker
	mu   sync.Mutex // guards m, applied, activeSums, err
	m    *streamsMember
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	err  error // fatal, from a heartbeat

	// applied is what the worker runs (worker goroutine writes it under mu).
	applied streamsAssignment
	// activeSums are the running tasks' changelog offset sums as of the
	// last commit, for the heartbeat's task offsets.
	activeSums map[engine.TaskID]int64
	notedAt    time.Time // when activeSums was last computed (worker goroutine)
	// polled is the next offset of each consumed partition (worker
	// goroutine only): everything polled is processed before a commit.
	polled map[string]map[int32]int64
}

// streamsClientOpts are the client options of a streams member's worker:
// no consumer group, and request versions the commits below are written
// for (OffsetCommit v9 and TxnOffsetCommit v5 name topics; later versions
// carry topic ids instead).
func streamsClientOpts() []kgo.Opt {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.OffsetCommit.Int16(), 9)
	v.SetMaxKeyVersion(kmsg.TxnOffsetCommit.Int16(), 5)
	return []kgo.Opt{kgo.MaxVersions(v)}
}

// configureStreamsGroup sets the group's standby replicas and acceptable
// recovery lag from the engine's settings: in a streams group the broker
// places standbys and warm-ups, with the group's configuration (Kafka
// Streams 4.4 ignores its own num.standby.replicas there and leaves it to
// kafka-configs). Every instance sets the same values, as each would pass
// the same flags.
func (e *Engine) configureStreamsGroup(ctx context.Context, cl *kgo.Client) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, e.cfg.ApplicationID
	for _, kv := range [][2]string{
		{"streams.num.standby.replicas", strconv.Itoa(e.cfg.StandbyReplicas)},
		{"streams.acceptable.recovery.lag", strconv.FormatInt(e.cfg.AcceptableRecoveryLag, 10)},
	} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[0], &kv[1]
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && len(resp.Resources) == 1 {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
		if err != nil && resp.Resources[0].ErrorMessage != nil {
			err = fmt.Errorf("%w: %s", err, *resp.Resources[0].ErrorMessage)
		}
	}
	if err != nil {
		return fmt.Errorf("streamgen: configuring streams group %q (standby replicas, recovery lag): %w", e.cfg.ApplicationID, err)
	}
	return nil
}

func newStreamsDriver(w *worker) (*streamsDriver, error) {
	e := w.e
	// The member id is the instance's (kept in its state directory) and
	// the worker's: a restarted instance rejoins as the member it was, so
	// a static member that was killed takes its place back at once
	// instead of being refused (UNRELEASED_INSTANCE_ID) until the dead
	// member's session times out, and a dynamic one fences its old self.
	memberID := e.instanceID + "-" + strconv.Itoa(w.idx)
	m, err := newStreamsMember(w.cl, e.cfg.ApplicationID, memberID, e.instanceID, e.groupInstanceID(w.idx), e.streamsTopology())
	if err != nil {
		return nil, err
	}
	d := &streamsDriver{w: w, m: m, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		polled: map[string]map[int32]int64{}}
	m.offsetsEvery = streamsOffsetsEvery
	m.offsets = d.offsetSums
	go d.heartbeats()
	d.poke() // join now
	return d, nil
}

// heartbeats sends a heartbeat every interval the broker asks for, and at
// once when woken (an acknowledgement to send).
func (d *streamsDriver) heartbeats() {
	defer close(d.done)
	for {
		d.mu.Lock()
		interval := d.m.interval
		d.mu.Unlock()
		select {
		case <-d.stop:
			return
		case <-d.wake:
		case <-time.After(interval):
		}
		d.beat()
	}
}

func (d *streamsDriver) beat() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	changed, err := d.m.heartbeat(ctx)
	if err != nil {
		var st *streamsStatusError
		if errors.As(err, &st) || !isRetriableHeartbeat(err) {
			d.err = err
		} else if errors.Is(err, kerr.UnreleasedInstanceID) {
			// A static member killed without leaving still holds its
			// instance id until its session times out (the group's
			// streams.session.timeout.ms, 45 s at least): join again
			// until the broker lets the restarted instance in.
			d.w.log.Warn("streams group: the instance id is held by this instance's previous process until its session times out; retrying", "instance_id", d.m.instance)
		} else {
			d.w.log.Warn("streams group heartbeat", "error", err.Error())
		}
	}
	if changed {
		d.w.settled.Store(false)
		d.w.rebalanceWanted.Store(true)
	}
}

// isRetriableHeartbeat is a heartbeat error that the next one may heal (a
// broker that went away, a timeout), as opposed to a refusal.
func isRetriableHeartbeat(err error) bool {
	var ke *kerr.Error
	return !errors.As(err, &ke) || ke.Retriable || ke == kerr.UnreleasedInstanceID
}

// poke makes the heartbeat goroutine send one now.
func (d *streamsDriver) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// fatal is the heartbeat error that ends the worker, if any.
func (d *streamsDriver) fatal() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return fmt.Errorf("streamgen: worker %d: %w", d.w.idx, d.err)
	}
	return nil
}

// epoch is the member epoch commits carry.
func (d *streamsDriver) epoch() int32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m.epoch
}

// pending returns the target assignment when it differs from the applied
// one.
func (d *streamsDriver) pending() (streamsAssignment, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m.epoch == 0 || !d.m.assigned || sameAssignment(d.m.target, d.applied) {
		return streamsAssignment{}, false
	}
	return d.m.target, true
}

// joined reports whether the member runs the assignment the broker gave.
func (d *streamsDriver) joined() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m.epoch > 0 && d.m.assigned && sameAssignment(d.m.target, d.applied)
}

// mark records that r was polled.
func (d *streamsDriver) mark(r *kgo.Record) {
	ps := d.polled[r.Topic]
	if ps == nil {
		ps = map[int32]int64{}
		d.polled[r.Topic] = ps
	}
	ps[r.Partition] = r.Offset + 1
}

// offsetSums are the member's task offsets for the heartbeat: the running
// tasks' positions (also their ends: they write the changelog), and the
// copies its instance holds (standbys, state directories left behind).
func (d *streamsDriver) offsetSums() (held, end map[engine.TaskID]int64) {
	held, end = map[engine.TaskID]int64{}, map[engine.TaskID]int64{}
	_, _, offsets := d.w.heldState()
	for s, n := range offsets {
		if id, ok := parseTaskID(s); ok {
			held[id] = n
		}
	}
	for id, n := range d.activeSums {
		held[id], end[id] = n, n
	}
	return held, end
}

// partitionsOf are the source partitions of tasks ids.
func (w *worker) partitionsOf(ids []engine.TaskID) map[string][]int32 {
	subs := w.e.tp.SubTopologies()
	out := map[string][]int32{}
	for _, id := range ids {
		for _, t := range subs[id.Sub].Topics {
			out[t] = append(out[t], id.Partition)
		}
	}
	return out
}

// applyStreams applies a new target assignment, right after a commit:
// revoked tasks are closed and their partitions no longer consumed, new
// tasks are opened (restored) and consumed from their committed offsets,
// the standby and warm-up tasks are tailed, then the member acknowledges.
func (w *worker) applyStreams(target streamsAssignment) error {
	start := time.Now()
	d := w.sg
	d.mu.Lock()
	was := d.applied
	epoch := d.m.epoch
	d.mu.Unlock()
	var revoked, added []engine.TaskID
	for _, id := range was.Active {
		if !slices.Contains(target.Active, id) {
			revoked = append(revoked, id)
		}
	}
	for _, id := range target.Active {
		if w.tasks[id] == nil {
			added = append(added, id)
		}
	}
	if len(revoked) > 0 {
		tps := w.partitionsOf(revoked)
		w.cl.RemoveConsumePartitions(tps)
		for t, ps := range tps {
			for _, p := range ps {
				delete(d.polled[t], p)
			}
		}
		for _, id := range revoked {
			w.closeTask(id)
		}
	}
	if len(added) > 0 {
		w.standby.release(added)
		if err := w.openTasks(added); err != nil {
			return err
		}
		if err := w.consumeFromCommitted(added); err != nil {
			return err
		}
	}
	var standbys []engine.TaskID
	for _, id := range slices.Concat(target.Standby, target.Warmup) {
		if w.tasks[id] == nil && !slices.Contains(standbys, id) {
			standbys = append(standbys, id)
		}
	}
	w.standby.set(standbys)
	w.logRebalance(epoch, added, revoked, start)
	d.mu.Lock()
	d.applied = target
	d.m.acknowledge(target)
	d.mu.Unlock()
	d.poke()
	return nil
}

// consumeFromCommitted starts consuming the partitions of tasks ids at the
// group's committed offsets (stable ones: a moved task's last commit may
// be in flight), from the start where none is committed.
func (w *worker) consumeFromCommitted(ids []engine.TaskID) error {
	want := w.partitionsOf(ids)
	ctx, cancel := context.WithTimeout(context.Background(), progressFetchTimeout)
	defer cancel()
	resps, err := fetchStableOffsets(ctx, w.cl, w.e.cfg.ApplicationID, want)
	if err != nil {
		return transient(fmt.Errorf("streamgen: worker %d: reading committed offsets: %w", w.idx, err))
	}
	add := map[string]map[int32]kgo.Offset{}
	for t, ps := range want {
		add[t] = map[int32]kgo.Offset{}
		for _, p := range ps {
			off := kgo.NewOffset().AtStart()
			if r, ok := resps.Lookup(t, p); ok && r.Err == nil && r.At >= 0 {
				off = kgo.NewOffset().At(r.At)
			}
			add[t][p] = off
		}
	}
	w.cl.AddConsumePartitions(add)
	return nil
}

// rewindStreams makes consumption start again at the committed offsets of
// every running task, after an aborted transaction (the transact session
// does this for a classic member).
func (w *worker) rewindStreams() error {
	ids := w.taskIDs()
	tps := w.partitionsOf(ids)
	w.cl.RemoveConsumePartitions(tps)
	clear(w.sg.polled)
	return w.consumeFromCommitted(ids)
}

// commitStreams commits the polled offsets with the member epoch: inside
// the open transaction under exactly-once when it produced anything (an
// empty transaction is ended and the offsets committed on their own: kgo
// ends a transaction on the broker only if it produced), on their own at
// least once. committed is false when the transaction was aborted.
func (w *worker) commitStreams(ctx context.Context, meta map[string]map[int32]string) (committed bool, err error) {
	offsets := w.sg.offsetsToCommit()
	if w.eos && w.inTxn {
		w.inTxn = false
		if w.sentInTxn > 0 {
			if err := w.txnCommitOffsets(ctx, offsets, meta); err != nil {
				w.cl.EndTransaction(ctx, kgo.TryAbort)
				return false, err
			}
			return true, w.cl.EndTransaction(ctx, kgo.TryCommit)
		}
		if err := w.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
			return false, err
		}
	}
	return true, w.commitOffsets(ctx, offsets, meta)
}

// commitStreamsOrRollBack commits as commitStreams does; a transaction
// that could not commit rolls the tasks back to the last commit (and the
// consumption with them), as a classic member's aborted transaction does.
func (w *worker) commitStreamsOrRollBack(ctx context.Context, meta map[string]map[int32]string) error {
	committed, err := w.commitStreams(ctx, meta)
	if err == nil && committed {
		if w.eos {
			w.e.met.txnCommits.Add(1)
		}
		w.sg.noteCommitted()
		return nil
	}
	if !w.eos {
		// At least once: the records are out; the next owner reprocesses
		// from the last commit that landed.
		w.log.Warn("committing offsets", "error", err.Error())
		return nil
	}
	w.e.aborts.Add(1)
	w.resetProduced()
	w.reopenAll()
	w.rewind()
	if err != nil {
		return transient(fmt.Errorf("streamgen: worker %d: committing transaction: %w", w.idx, err))
	}
	w.lastCommit = time.Now()
	return nil
}

// noteCommitted records the running tasks' changelog offset sums after a
// commit, for the task offsets of the next heartbeats.
func (d *streamsDriver) noteCommitted() {
	// Heartbeats carry them every streamsOffsetsEvery: once a second is
	// fresh enough, and spares every commit (each 100 ms under
	// exactly-once) a map per task.
	if time.Since(d.notedAt) < time.Second {
		return
	}
	d.notedAt = time.Now()
	sums := map[engine.TaskID]int64{}
	for id, tk := range d.w.tasks {
		if len(tk.changelogs) > 0 {
			sums[id] = offsetSum(tk.checkpoint())
		}
	}
	d.mu.Lock()
	d.activeSums = sums
	d.mu.Unlock()
}

// offsetsToCommit are the polled offsets of the running tasks.
func (d *streamsDriver) offsetsToCommit() map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	for t, ps := range d.polled {
		for p, off := range ps {
			if d.w.taskFor(t, p) == nil {
				continue
			}
			if out[t] == nil {
				out[t] = map[int32]int64{}
			}
			out[t][p] = off
		}
	}
	return out
}

// commitOffsets is an OffsetCommit (v9: names topics) with the member's
// identity and epoch, as the streams group coordinator requires.
func (w *worker) commitOffsets(ctx context.Context, offsets map[string]map[int32]int64, meta map[string]map[int32]string) error {
	if len(offsets) == 0 {
		return nil
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.MemberID, req.Generation = w.e.cfg.ApplicationID, w.sg.m.memberID, w.sg.epoch()
	if id := w.e.groupInstanceID(w.idx); id != "" {
		req.InstanceID = &id
	}
	req.Topics = offsetCommitTopics(offsets, meta)
	resp, err := req.RequestWith(ctx, w.cl)
	for i := 0; err == nil && i < len(resp.Topics); i++ {
		for _, p := range resp.Topics[i].Partitions {
			err = partitionError(err, resp.Topics[i].Topic, p.Partition, p.ErrorCode)
		}
	}
	if err != nil {
		return fmt.Errorf("streamgen: worker %d: committing offsets: %w", w.idx, err)
	}
	return nil
}

// txnCommitOffsets adds the offsets to the open transaction: a
// TxnOffsetCommit (v5, which under transactions v2 adds the group to the
// transaction itself) with the producer's id and the member's epoch.
func (w *worker) txnCommitOffsets(ctx context.Context, offsets map[string]map[int32]int64, meta map[string]map[int32]string) error {
	if len(offsets) == 0 {
		return nil
	}
	pid, pepoch, err := w.cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("streamgen: worker %d: producer id: %w", w.idx, err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID = transactionalID(w.e, w.idx)
	req.Group, req.ProducerID, req.ProducerEpoch = w.e.cfg.ApplicationID, pid, pepoch
	req.MemberID, req.Generation = w.sg.m.memberID, w.sg.epoch()
	if id := w.e.groupInstanceID(w.idx); id != "" {
		req.InstanceID = &id
	}
	for _, t := range offsetCommitTopics(offsets, meta) {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{
				Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata})
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, w.cl)
	for i := 0; err == nil && i < len(resp.Topics); i++ {
		for _, p := range resp.Topics[i].Partitions {
			err = partitionError(err, resp.Topics[i].Topic, p.Partition, p.ErrorCode)
		}
	}
	if err != nil {
		return fmt.Errorf("streamgen: worker %d: committing offsets in the transaction: %w", w.idx, err)
	}
	return nil
}

// offsetCommitTopics are offsets with their metadata as a commit names
// them, by topic and partition.
func offsetCommitTopics(offsets map[string]map[int32]int64, meta map[string]map[int32]string) []kmsg.OffsetCommitRequestTopic {
	var out []kmsg.OffsetCommitRequestTopic
	for _, t := range slices.Sorted(maps.Keys(offsets)) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = t
		for _, p := range slices.Sorted(maps.Keys(offsets[t])) {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, offsets[t][p], -1
			if s, ok := meta[t][p]; ok {
				rp.Metadata = &s
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

// partitionError keeps the first error: err, or the partition's.
func partitionError(err error, topic string, p int32, code int16) error {
	if err != nil {
		return err
	}
	if kerr := kerr.ErrorForCode(code); kerr != nil {
		return fmt.Errorf("%s[%d]: %w", topic, p, kerr)
	}
	return nil
}

// closeStreams ends the membership with a leaving heartbeat (a static
// member says it will rejoin under its instance id).
func (d *streamsDriver) closeStreams() {
	close(d.stop)
	<-d.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.m.leave(ctx); err != nil {
		d.w.log.Warn("leaving the streams group", "error", err.Error())
	}
}
