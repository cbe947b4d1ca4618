package sgkafka

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// Standby replicas (Kafka Streams' num.standby.replicas): a standby task
// holds a copy of an active task's stores on another instance, kept up to
// date by tailing the stores' changelogs (read committed) without
// processing anything. When the active task moves, the assignor gives it
// to the instance holding its standby, which then restores only the
// changelog tail its standby had not read yet.
//
// A worker's standbys share one consumer, reading every changelog
// partition of its standby tasks from each store's checkpoint; each batch
// is applied and checkpointed, so a restarted instance resumes its
// standbys where they were. The consumer is rebuilt whenever the set
// changes, which happens only at rebalances.

// standbyTask is a task opened for its stores only.
type standbyTask struct {
	tk *task
	// stores maps a changelog checkpoint key to the store it restores.
	stores map[string]restorer
}

// standbySet is a worker's standby tasks and the consumer tailing them.
type standbySet struct {
	w     *worker
	mu    sync.Mutex // guards tasks against the tailing goroutine
	tasks map[engine.TaskID]*standbyTask
	// applied counts changelog records applied to standbys; pos is each
	// changelog partition's next offset to apply (by checkpoint key).
	applied atomic.Int64
	pos     map[string]int64
	cancel  context.CancelFunc
	done    chan struct{}
}

func newStandbySet(w *worker) *standbySet {
	return &standbySet{w: w, tasks: map[engine.TaskID]*standbyTask{}, pos: map[string]int64{}}
}

// ids are the standby tasks open now.
func (s *standbySet) ids() []engine.TaskID {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]engine.TaskID, 0, len(s.tasks))
	for id := range s.tasks {
		out = append(out, id)
	}
	slices.SortFunc(out, compareTaskIDs)
	return out
}

func compareTaskIDs(a, b engine.TaskID) int {
	if a.Sub != b.Sub {
		return a.Sub - b.Sub
	}
	return int(a.Partition - b.Partition)
}

// set makes want the standby tasks (those the worker runs as active are
// left out). A task another worker of this instance still holds, active
// or standby, is skipped this time and picked up at the next call, once
// that worker let it go.
func (s *standbySet) set(want []engine.TaskID) {
	s.stop()
	s.mu.Lock()
	for id := range s.tasks {
		if !slices.Contains(want, id) || s.w.tasks[id] != nil {
			s.closeLocked(id)
		}
	}
	for _, id := range want {
		if s.tasks[id] != nil || s.w.tasks[id] != nil {
			continue
		}
		if st, err := s.open(id); err != nil {
			s.w.log.Warn("opening standby task", "task", id.String(), "error", err.Error())
		} else if st != nil {
			s.tasks[id] = st
			s.w.log.Info("standby task running", "task", id.String())
		}
	}
	s.mu.Unlock()
	s.start()
}

// release closes the standbys of tasks about to run here as active.
func (s *standbySet) release(ids []engine.TaskID) {
	s.mu.Lock()
	held := false
	for _, id := range ids {
		held = held || s.tasks[id] != nil
	}
	s.mu.Unlock()
	if !held {
		return
	}
	s.stop()
	s.mu.Lock()
	for _, id := range ids {
		if s.tasks[id] != nil {
			s.closeLocked(id)
		}
	}
	s.mu.Unlock()
	s.start()
}

// open takes task id's lock and opens its stores; nil when another worker
// holds the task.
func (s *standbySet) open(id engine.TaskID) (*standbyTask, error) {
	lock := s.w.e.taskLock(id)
	if !lock.TryLock() {
		return nil, nil
	}
	tk, err := s.w.newTask(id, engine.Progress{})
	if err == nil {
		if err = tk.t.Init(); err != nil {
			tk.t.Close()
		}
		tk.closePreopened()
	}
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	st := &standbyTask{tk: tk, stores: map[string]restorer{}}
	stores := tk.t.Stores()
	for name, topic := range tk.changelogs {
		if r, ok := stores[name].(restorer); ok {
			st.stores[checkpointKey(topic, id.Partition)] = r
		}
	}
	return st, nil
}

// closeLocked closes a standby task, its stores at their last checkpoint.
func (s *standbySet) closeLocked(id engine.TaskID) {
	st := s.tasks[id]
	delete(s.tasks, id)
	st.tk.saveOffsets()
	if err := st.tk.t.Close(); err != nil {
		s.w.log.Warn("closing standby task", "task", id.String(), "error", err.Error())
	}
	s.w.e.taskLock(id).Unlock()
	s.w.log.Info("standby task closed", "task", id.String())
}

// start begins tailing the changelogs of the open standbys.
func (s *standbySet) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := map[string]map[int32]kgo.Offset{}
	byKey := map[string]standbyTarget{}
	for id, st := range s.tasks {
		cps, err := st.tk.checkpoints()
		if err != nil {
			s.w.log.Warn("reading standby checkpoints", "task", id.String(), "error", err.Error())
			continue
		}
		for name, topic := range st.tk.changelogs {
			key := checkpointKey(topic, id.Partition)
			r := st.stores[key]
			if r == nil {
				continue
			}
			off := kgo.NewOffset().AtStart()
			s.pos[key] = 0
			if cp := cps[name]; cp >= 0 {
				off = kgo.NewOffset().At(cp)
				s.pos[key] = cp
			}
			if parts[topic] == nil {
				parts[topic] = map[int32]kgo.Offset{}
			}
			parts[topic][id.Partition] = off
			byKey[key] = standbyTarget{r: r, store: name, task: id, own: s.w.e.ownLayout(name)}
		}
	}
	if len(parts) == 0 {
		return
	}
	cl, err := kgo.NewClient(s.w.e.clientOpts(
		kgo.ConsumePartitions(parts),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)...)
	if err != nil {
		s.w.log.Warn("standby consumer", "error", err.Error())
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.tail(ctx, cl, byKey)
}

// stop ends the tailing and waits for it.
func (s *standbySet) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel, s.done = nil, nil
}

// tail applies changelog records to the standby stores until ctx ends.
func (s *standbySet) tail(ctx context.Context, cl *kgo.Client, byKey map[string]standbyTarget) {
	defer close(s.done)
	defer cl.Close()
	var batch []sgstate.ChangelogRecord
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return
		}
		fetches.EachError(func(topic string, p int32, err error) {
			s.w.log.Debug("standby fetch", "changelog", topic, "partition", p, "error", err.Error())
		})
		s.mu.Lock()
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if len(fp.Records) == 0 {
				return
			}
			key := checkpointKey(fp.Topic, fp.Partition)
			t, ok := byKey[key]
			if !ok {
				return
			}
			var err error
			if batch, err = t.batch(batch[:0], fp.Records); err != nil {
				s.w.log.Warn("standby: not applying changelog", "task", t.task.String(), "store", t.store, "error", err.Error())
				delete(byKey, key)
				return
			}
			next := fp.Records[len(fp.Records)-1].Offset + 1
			if err := applyChangelog(t.r, batch, key, next); err != nil {
				s.w.log.Warn("standby: applying changelog", "changelog", fp.Topic, "partition", fp.Partition, "error", err.Error())
				delete(byKey, key)
				return
			}
			s.applied.Add(int64(len(batch)))
			s.pos[key] = next
		})
		s.mu.Unlock()
	}
}

// standbyTarget is the standby store a changelog partition updates.
type standbyTarget struct {
	r     restorer
	store string
	task  engine.TaskID
	own   bool // the store keeps streamgen's own layout (see checkLayout)
}

// batch appends to dst the records of recs the store applies; a record an
// own-layout store cannot read stops the standby copy of the store, as it
// stops an active task's restoration.
func (t standbyTarget) batch(dst []sgstate.ChangelogRecord, recs []*kgo.Record) ([]sgstate.ChangelogRecord, error) {
	for _, rec := range recs {
		cr, err := changelogRecord(t.store, t.task, t.own, rec)
		if err != nil {
			return dst, err
		}
		dst = append(dst, cr)
	}
	return dst, nil
}

// applyChangelog writes a batch of changelog records into a store and
// checkpoints the offset after them, in one commit.
func applyChangelog(r restorer, batch []sgstate.ChangelogRecord, key string, next int64) error {
	if len(batch) > 0 {
		if err := r.RestoreBatch(batch); err != nil {
			return err
		}
	}
	if err := r.Commit(map[string]int64{key: next}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// closeAll closes every standby (the worker is stopping).
func (s *standbySet) closeAll() {
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.tasks {
		s.closeLocked(id)
	}
}

// syncStandbys applies the standby tasks of a new assignment, and retries
// those another worker still held last time.
func (w *worker) syncStandbys() {
	ids, at := w.bal.standbys()
	if at == w.standbyAt && (w.standbyRetry.IsZero() || time.Now().Before(w.standbyRetry)) {
		return
	}
	w.standbyAt, w.standbyRetry = at, time.Time{}
	want := slices.DeleteFunc(ids, func(id engine.TaskID) bool { return w.tasks[id] != nil })
	w.standby.set(want)
	if len(w.standby.ids()) < len(want) {
		w.standbyRetry = time.Now().Add(time.Second)
	}
}

// heldState is what the member reports in its subscription for standby
// placement: its standby tasks, and the tasks whose directories its
// instance's state directory holds (left by an earlier run or another
// worker).
func (w *worker) heldState() (standby, state []string, offsets map[string]int64) {
	for _, id := range w.standby.ids() {
		standby = append(standby, id.String())
	}
	entries, _ := os.ReadDir(w.e.cfg.StateDir)
	for _, e := range entries {
		if _, ok := parseTaskID(e.Name()); ok && e.IsDir() {
			state = append(state, e.Name())
		}
	}
	return standby, state, w.heldOffsets(state)
}

// read runs fn on the standby copy of store of task id, returning the
// changelog positions of the task's stores (by changelog topic); ok is
// false when this worker holds no standby of the task.
func (s *standbySet) read(id engine.TaskID, store string, fn func(sgstate.Store) error) (pos map[string]int64, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.tasks[id]
	if st == nil {
		return nil, false, nil
	}
	topic, logged := st.tk.changelogs[store]
	if !logged {
		return nil, false, nil
	}
	pos = map[string]int64{topic: s.pos[checkpointKey(topic, id.Partition)]}
	str, err := st.tk.t.Store(store)
	if err != nil {
		return nil, true, err
	}
	return pos, true, fn(str)
}

// standbySnap is a standby task's lag per store, for the metrics and the
// status page.
type standbySnap struct {
	id     engine.TaskID
	stores []standbyStoreLag
}

type standbyStoreLag struct {
	store string
	lag   int64
}

// positions copies each standby task's changelog positions: task → store
// → changelog topic and next offset to apply.
func (s *standbySet) positions() map[engine.TaskID]map[string]standbyPos {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[engine.TaskID]map[string]standbyPos{}
	for id, st := range s.tasks {
		m := map[string]standbyPos{}
		for name, topic := range st.tk.changelogs {
			m[name] = standbyPos{topic: topic, next: s.pos[checkpointKey(topic, id.Partition)]}
		}
		out[id] = m
	}
	return out
}

type standbyPos struct {
	topic string
	next  int64
}

// standbyLag is how far every standby task of this instance trails its
// changelogs' ends, asked of the cluster now (nil when there are none or
// the cluster does not answer).
func (e *Engine) standbyLag() []standbySnap {
	e.mu.Lock()
	workers := slices.Clone(e.workers)
	e.mu.Unlock()
	all := map[engine.TaskID]map[string]standbyPos{}
	topics := map[string]bool{}
	for _, w := range workers {
		for id, m := range w.standby.positions() {
			all[id] = m
			for _, p := range m {
				topics[p.topic] = true
			}
		}
	}
	if len(all) == 0 || !e.setUp() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	ends, err := kadm.NewClient(e.base).ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...)
	if err != nil {
		e.log.Debug("metrics: listing changelog end offsets", "error", err.Error())
		return nil
	}
	out := make([]standbySnap, 0, len(all))
	for id, m := range all {
		sb := standbySnap{id: id}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			p := m[name]
			if o, ok := ends.Lookup(p.topic, id.Partition); ok && o.Err == nil {
				sb.stores = append(sb.stores, standbyStoreLag{store: name, lag: max(o.Offset-p.next, 0)})
			}
		}
		out = append(out, sb)
	}
	slices.SortFunc(out, func(a, b standbySnap) int { return compareTaskIDs(a.id, b.id) })
	return out
}
