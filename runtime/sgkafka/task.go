package sgkafka

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// task is an engine.Task (sgstream's) with what the engine keeps around it: the
// records buffered per source partition and the changelog positions of its
// stores.
type task struct {
	id     engine.TaskID
	t      engine.Task
	w      *worker
	queues []*queue // one per source topic, in the sub-topology's order
	byTop  map[string]*queue
	// logged stores: store name → changelog topic
	changelogs map[string]string
	// end is the next offset of each changelog partition this task wrote
	// or restored to: the checkpoint Task.Commit records.
	end map[string]int64
	// waitSince is when the task first held records while another of its
	// partitions had none buffered (zero when not waiting).
	waitSince time.Time
	// met is the task's side of the engine's metrics (metrics.go).
	met taskMetrics
	// qmu excludes interactive queries while the worker changes the
	// task's stores (query.go).
	qmu sync.Mutex
	// counted is t.Stats() when its bad records were last added to the
	// engine's counters (Engine.countCommitted).
	counted engine.TaskStats
	// raw is the record being processed (process reuses it).
	raw sgstream.RawRecord
	// preopened holds stores opened ahead of Init (preopenStores).
	preopened map[string]sgstate.Store
	// resume is the progress the group had committed when the task was
	// opened (engine.TaskConfig.Resume), kept for reopening it.
	resume engine.Progress
}

// partitionWait bounds how long a task with records on some partitions
// waits for records on its empty ones before it processes anyway. Choosing
// the next record by head timestamp only works when every partition has a
// head: a join whose two sides arrive in different fetches would otherwise
// see one side's whole backlog first and expire the other's records. Kafka
// Streams (KIP-695) waits while an empty partition's lag is unknown or
// positive; franz-go does not expose per-partition lag cheaply, so this
// waits a bounded time instead. Buffered records are always processed
// before a commit, so waiting never commits an unprocessed offset.
const partitionWait = 500 * time.Millisecond

type queue struct {
	topic string
	recs  []*kgo.Record
	head  int
}

func (q *queue) empty() bool { return q.head >= len(q.recs) }

func (q *queue) push(rs ...*kgo.Record) {
	if q.head > 0 && q.head == len(q.recs) {
		q.recs, q.head = q.recs[:0], 0
	}
	q.recs = append(q.recs, rs...)
}

// checkpointKey names a changelog partition in a store checkpoint, as Kafka
// names a TopicPartition.
func checkpointKey(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

// openTask creates and initialises a task: its stores are opened (Pebble
// under <state-dir>/<task id>/<store>) but not yet restored.
// newTask creates task id without opening its stores.
func (w *worker) newTask(id engine.TaskID, resume engine.Progress) (*task, error) {
	e := w.e
	tk := &task{id: id, w: w, resume: resume, byTop: map[string]*queue{}, changelogs: map[string]string{}, end: map[string]int64{}}
	sub := e.tp.SubTopologies()[id.Sub]
	for _, topic := range sub.Topics {
		q := &queue{topic: topic}
		tk.queues = append(tk.queues, q)
		tk.byTop[topic] = q
	}
	for _, name := range sub.Stores {
		if spec := e.tp.Store(name); spec != nil && spec.Logged {
			tk.changelogs[name] = changelogTopic(e.cfg.ApplicationID, name)
		}
	}
	var cache int64
	if e.cfg.CacheMaxBytes > 0 {
		// Kafka Streams splits the cache over threads; tasks of a thread
		// share it. A per-task share of the instance budget is close.
		n := 0
		for _, s := range e.sourceSubs {
			n += e.taskParts[s.ID]
		}
		cache = e.cfg.CacheMaxBytes / int64(max(n, 1))
		if cache < 1 {
			cache = 1
		}
	}
	t, err := e.tp.NewTask(id, engine.TaskConfig{
		Collector:       (*collector)(w),
		Stores:          tk,
		Logger:          e.log.With("task", id.String()),
		Deserialization: e.cfg.Deserialization,
		Processing:      e.cfg.Processing,
		DeadLetterTopic: e.cfg.DeadLetterTopic,
		InvalidTime:     e.cfg.InvalidTime,
		CacheMaxBytes:   cache,
		Resume:          resume,

		WindowEmitInterval:    e.cfg.WindowEmitInterval,
		OuterJoinEmitInterval: e.cfg.OuterJoinEmitInterval,
	})
	if err != nil {
		return nil, err
	}
	tk.t = t
	return tk, nil
}

// openTask creates task id and opens its stores.
func (w *worker) openTask(id engine.TaskID, resume engine.Progress) (*task, error) {
	tk, err := w.newTask(id, resume)
	if err != nil {
		return nil, err
	}
	return tk, tk.init()
}

// init opens the task's stores (those preopened are taken over) and runs
// its processors' init functions; on failure the task is closed.
func (tk *task) init() error {
	tk.w.e.met.taskOpened(tk)
	err := tk.t.Init()
	if err != nil {
		tk.t.Close()
	}
	tk.closePreopened()
	return err
}

// preopenStores opens the persistent built-in stores of tasks at the same
// time, one goroutine per task, before the tasks' Init takes them over.
// After kill -9 opening a Pebble store replays its write-ahead log, which
// is CPU work proportional to the writes since the last memtable flush: a
// worker resuming several tasks with large stores spent most of its time
// to first record here, one store after the other. Processor init
// functions still run one task after the other, in Init. Errors surface
// when Init opens the store again itself.
func preopenStores(tks []*task) {
	var wg sync.WaitGroup
	for _, tk := range tks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk.preopen()
		}()
	}
	wg.Wait()
}

func (tk *task) preopen() {
	e := tk.w.e
	sub := e.tp.SubTopologies()[tk.id.Sub]
	for _, name := range sub.Stores {
		spec := e.tp.Store(name)
		if spec == nil || spec.Custom != nil || spec.InMemory {
			continue
		}
		s, err := tk.newStore(tk.t, spec)
		if err != nil {
			continue // Init opens it again and reports the error
		}
		if tk.preopened == nil {
			tk.preopened = map[string]sgstate.Store{}
		}
		tk.preopened[name] = s
	}
}

// closePreopened closes preopened stores Init did not take over.
func (tk *task) closePreopened() {
	for name, s := range tk.preopened {
		if err := s.Close(); err != nil {
			tk.w.log.Warn("closing an unused store", "task", tk.id.String(), "store", name, "error", err.Error())
		}
	}
	tk.preopened = nil
}

// OpenStore implements engine.StoreProvider: built-in stores on Pebble
// under <state-dir>/<task id>/<store> (those with a changelog in the
// shared DB, under a key prefix of that directory), or in memory when the
// spec says so;
// logged stores send their changelog through the worker's producer.
func (tk *task) OpenStore(t engine.Task, spec *sgstream.StoreSpec) (sgstate.Store, error) {
	if s, ok := tk.preopened[spec.Name]; ok {
		delete(tk.preopened, spec.Name)
		return s, nil
	}
	return tk.newStore(t, spec)
}

// newStore creates and initializes spec's store for t, built-in or custom.
func (tk *task) newStore(t engine.Task, spec *sgstream.StoreSpec) (sgstate.Store, error) {
	e := tk.w.e
	var s sgstate.Store
	if spec.Custom != nil {
		s = spec.Custom()
		if s == nil {
			return nil, fmt.Errorf("streamgen: store %q: custom store constructor returned nil", spec.Name)
		}
	} else {
		var err error
		if s, err = engine.NewBuiltinStore(spec, !spec.InMemory, e.cfg.Pebble); err != nil {
			return nil, err
		}
	}
	ctx := t.StoreContext(spec, e.log.With("task", t.ID().String(), "store", spec.Name))
	ctx.Dir = engine.StoreDir(e.cfg.StateDir, t.ID(), spec.Name)
	ctx.Shared = e.shared // changelogged Pebble stores open in it
	if err := os.MkdirAll(ctx.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("streamgen: store %q: %w", spec.Name, err)
	}
	if err := s.Init(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// checkpoints returns, per logged store, the changelog offset its local
// state is at: -1 when the store has no checkpoint (restore everything).
func (tk *task) checkpoints() (map[string]int64, error) {
	out := map[string]int64{}
	stores := tk.t.Stores()
	for name, topic := range tk.changelogs {
		out[name] = -1
		tx, ok := stores[name].(sgstate.Transactional)
		if !ok {
			continue
		}
		cp, err := tx.Checkpoint()
		if err != nil {
			return nil, fmt.Errorf("streamgen: task %s: store %q checkpoint: %w", tk.id, name, err)
		}
		if off, ok := cp[checkpointKey(topic, tk.id.Partition)]; ok {
			out[name] = off
		}
	}
	return out, nil
}

// checkpoint is the map Task.Commit records in every store.
func (tk *task) checkpoint() map[string]int64 {
	if len(tk.end) == 0 {
		return nil
	}
	cp := make(map[string]int64, len(tk.end))
	for k, v := range tk.end {
		cp[k] = v
	}
	return cp
}

// next picks the buffered record with the smallest head timestamp across
// the task's partitions (Kafka Streams' PartitionGroup with
// max.task.idle.ms=0: only partitions with buffered records compete).
func (tk *task) next(force bool) *kgo.Record {
	if !force && len(tk.queues) > 1 {
		empty := 0
		for _, q := range tk.queues {
			if q.empty() {
				empty++
			}
		}
		switch {
		case empty == 0 || empty == len(tk.queues):
			tk.waitSince = time.Time{}
		case tk.waitSince.IsZero():
			tk.waitSince = time.Now()
			return nil
		case time.Since(tk.waitSince) < partitionWait:
			return nil
		}
	}
	var best *queue
	for _, q := range tk.queues {
		if q.empty() {
			continue
		}
		if best == nil || q.recs[q.head].Timestamp.Before(best.recs[best.head].Timestamp) {
			best = q
		}
	}
	if best == nil {
		return nil
	}
	r := best.recs[best.head]
	best.recs[best.head] = nil
	best.head++
	return r
}

// process runs buffered records through the task, in head-timestamp
// order; unless force is set it may hold them while another partition of
// the task is empty (see partitionWait).
func (tk *task) process(force bool) (int, error) {
	tk.qmu.Lock()
	defer tk.qmu.Unlock()
	n := 0
	for {
		r := tk.next(force)
		if r == nil {
			return n, nil
		}
		// One RawRecord per task, reused: the task keeps no reference
		// to it past Process, and a fresh one per record was a heap
		// allocation on the hot path (it escapes into Task.Process).
		raw := &tk.raw
		*raw = sgstream.RawRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
			Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli(), Stable: true}
		if len(r.Headers) > 0 {
			raw.Headers = make([]sgstream.Header, len(r.Headers))
			for i, h := range r.Headers {
				raw.Headers[i] = sgstream.Header{Key: h.Key, Value: h.Value}
			}
		}
		start := tk.met.start()
		tk.w.cur = r // the collector may produce it (worker.record)
		err := tk.t.Process(raw)
		tk.w.cur = nil
		if err != nil {
			return n, err
		}
		tk.met.done(start)
		n++
	}
}
