package sgkafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Global tables run as Kafka Streams' GlobalStreamThread runs them:
//
//   - The topics of global sub-topologies are not part of the group
//     subscription. Every instance reads every partition of them with one
//     group-less consumer (read committed) into full replicas of the global
//     stores, Pebble under <state-dir>/global/<store> (memory when the spec
//     says so).
//   - The source topic is the global store's changelog: there is no
//     changelog topic. Each store commits its staged writes atomically with
//     the offsets reached on every partition of the topic (the checkpoint,
//     keyed like task checkpoints), every commit interval; a restart reads
//     only the tail past it. A checkpoint outside the topic (truncated or
//     recreated) wipes the store and rebuilds it from the start.
//   - Bootstrap: before the first worker joins the group, the global stores
//     are caught up to the last stable offsets the partitions had when the
//     engine started. A goroutine then keeps applying updates until shutdown,
//     which stops it after the workers (it commits last).
//
// The global records go through an engine.Task of the global sub-topology
// (TaskID{Sub, GlobalPartition}), as the test driver runs it, so restoring
// and updating apply the same source logic (null keys dropped, null values
// delete, deserialization policies) as the reference.
//
// Concurrency: a global store has one writer (the global goroutine) and
// many readers (every worker's tasks, through Task.GlobalStore). Every call
// on it, reads included, holds one mutex. A sync.RWMutex would be wrong
// here: sgstate stores are not safe for concurrent use even for reads (a
// Pebble Get encodes the key into a buffer the store owns, and reads go
// through the staged indexed batch), so readers must exclude each other
// too. Each lookup therefore sees one consistent value: the store as it is
// between two writes of the global goroutine (staged writes included, as
// Kafka Streams' global stores show updates at once). Iterations copy the
// entries under the lock and call back without it, so a callback may use
// the store again and a long scan never blocks the lock holder's peers on
// user code. Locks are held per operation, never across a record, so a
// lookup waits at most for one store operation or a commit.
type globalThread struct {
	e   *Engine
	log *slog.Logger

	tasks    []engine.Task          // one per global sub-topology
	counted  []engine.TaskStats     // tasks' Stats when last counted (Engine.countGlobal)
	bySource map[string]engine.Task // source topic → its task
	stores   map[string]*globalCore // store name → shared store
	topics   []string               // every global topic, sorted
	pos      map[string]int64       // checkpointKey → next offset to read
	cl       *kgo.Client

	lastCommit time.Time
	dirty      bool // positions moved since the last commit

	prodMu  sync.Mutex
	prodErr error
	outs    outTopics
}

// hasGlobal reports whether the topology has global sub-topologies.
func (e *Engine) hasGlobal() bool {
	for _, s := range e.tp.SubTopologies() {
		if e.tp.IsGlobal(s) {
			return true
		}
	}
	return false
}

// GlobalStore is the store provider's half used by stream tasks
// (engine.GlobalStoreProvider): a read-only view of the global store.
func (e *Engine) globalStore(name string) (sgstate.Store, error) {
	g := e.global
	if g == nil {
		return nil, fmt.Errorf("streamgen: global store %q: the engine runs no global tables", name)
	}
	c, ok := g.stores[name]
	if !ok {
		return nil, fmt.Errorf("streamgen: no global table materializes store %q", name)
	}
	return globalView{c}, nil
}

// GlobalStore implements engine.GlobalStoreProvider for stream tasks.
func (tk *task) GlobalStore(name string) (sgstate.Store, error) { return tk.w.e.globalStore(name) }

// openGlobal opens the global tasks and stores and catches them up to the
// end of their topics. On error everything it opened is closed.
func (e *Engine) openGlobal(ctx context.Context) (g *globalThread, err error) {
	g = &globalThread{e: e, log: e.log.With("thread", "global"), bySource: map[string]engine.Task{},
		stores: map[string]*globalCore{}, pos: map[string]int64{}, outs: newOutTopics(e)}
	defer func() {
		if err != nil {
			g.close(false)
		}
	}()
	var subs []*engine.SubTopology
	for _, s := range e.tp.SubTopologies() {
		if e.tp.IsGlobal(s) {
			subs = append(subs, s)
			g.topics = append(g.topics, s.Topics...)
		}
	}
	sort.Strings(g.topics)
	for _, s := range subs {
		t, err := g.openTask(s)
		if err != nil {
			return nil, err
		}
		g.tasks = append(g.tasks, t)
	}

	adm := kadm.NewClient(e.base)
	listCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	ends, err := adm.ListCommittedOffsets(listCtx, g.topics...)
	if err == nil {
		err = ends.Error()
	}
	var starts kadm.ListedOffsets
	if err == nil {
		starts, err = adm.ListStartOffsets(listCtx, g.topics...)
		if err == nil {
			err = starts.Error()
		}
	}
	cancel()
	if err != nil {
		return nil, fmt.Errorf("streamgen: global tables: listing offsets of %s: %w", quoteAll(g.topics), err)
	}
	target := map[string]int64{}
	for i, t := range g.tasks {
		from, wipe, err := g.startOffsets(t, starts, ends)
		if err != nil {
			return nil, err
		}
		if wipe {
			if t, err = g.rebuild(t); err != nil {
				return nil, err
			}
			g.tasks[i] = t
			if from, _, err = g.startOffsets(t, starts, ends); err != nil {
				return nil, err
			}
		}
		for k, v := range from {
			g.pos[k] = v
		}
	}
	parts := map[string]map[int32]kgo.Offset{}
	for _, topic := range g.topics {
		parts[topic] = map[int32]kgo.Offset{}
		for p := int32(0); p < int32(e.parts[topic]); p++ {
			k := checkpointKey(topic, p)
			parts[topic][p] = kgo.NewOffset().At(g.pos[k])
			end, _ := ends.Lookup(topic, p)
			if end.Offset > g.pos[k] {
				target[k] = end.Offset
			}
		}
	}
	for _, t := range g.tasks {
		for _, s := range e.tp.SubTopologies()[t.ID().Sub].Topics {
			g.bySource[s] = t
		}
	}
	g.cl, err = kgo.NewClient(e.clientOpts(
		kgo.ClientID(e.cfg.ApplicationID+"-"+e.instanceID+"-global"),
		kgo.ConsumePartitions(parts),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchMaxWait(200*time.Millisecond),
	)...)
	if err != nil {
		return nil, fmt.Errorf("%w: global consumer: %w", ErrConfig, err)
	}
	if err := g.bootstrap(ctx, target); err != nil {
		return nil, err
	}
	return g, nil
}

// openTask creates and initialises the task of global sub-topology s.
func (g *globalThread) openTask(s *engine.SubTopology) (engine.Task, error) {
	e := g.e
	id := engine.TaskID{Sub: s.ID, Partition: engine.GlobalPartition}
	t, err := e.tp.NewTask(id, engine.TaskConfig{
		Collector:       (*globalCollector)(g),
		Stores:          (*globalProvider)(g),
		Logger:          g.log.With("task", id.String()),
		Deserialization: e.cfg.Deserialization,
		Processing:      e.cfg.Processing,
		DeadLetterTopic: e.cfg.DeadLetterTopic,
		InvalidTime:     e.cfg.InvalidTime,
	})
	if err != nil {
		return nil, err
	}
	if err := t.Init(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// startOffsets returns where each partition of t's topics resumes: the
// stores' checkpoint, or the start of the partition without one. wipe is
// true when a checkpoint lies outside its partition.
func (g *globalThread) startOffsets(t engine.Task, starts, ends kadm.ListedOffsets) (map[string]int64, bool, error) {
	sub := g.e.tp.SubTopologies()[t.ID().Sub]
	from := map[string]int64{}
	var cps []map[string]int64
	for _, name := range sub.Stores {
		s, err := t.Store(name)
		if err != nil {
			return nil, false, err
		}
		var cp map[string]int64
		if tx, ok := s.(sgstate.Transactional); ok {
			if cp, err = tx.Checkpoint(); err != nil {
				return nil, false, fmt.Errorf("streamgen: global store %q checkpoint: %w", name, err)
			}
		}
		cps = append(cps, cp)
	}
	for _, topic := range sub.Topics {
		for p := int32(0); p < int32(g.e.parts[topic]); p++ {
			k := checkpointKey(topic, p)
			start, ok1 := starts.Lookup(topic, p)
			end, ok2 := ends.Lookup(topic, p)
			if !ok1 || !ok2 {
				return nil, false, fmt.Errorf("streamgen: global topic %q partition %d: no offsets listed", topic, p)
			}
			// Stores of one sub-topology commit together; if they ever
			// disagree, resume from the earliest (re-applying upserts
			// is harmless), and from the start when any lacks one.
			off := int64(-1)
			for _, cp := range cps {
				v, ok := cp[k]
				if !ok {
					off = -1
					break
				}
				if off < 0 || v < off {
					off = v
				}
			}
			if off >= 0 && (off < start.Offset || off > end.Offset) {
				g.log.Warn("global store is outside its topic; rebuilding it", "topic", topic, "partition", p,
					"checkpoint", off, "topic_start", start.Offset, "topic_end", end.Offset)
				return nil, true, nil
			}
			if off < 0 {
				off = start.Offset
			}
			from[k] = off
		}
	}
	return from, false, nil
}

// rebuild closes t, deletes its stores' directories and opens it again,
// empty.
func (g *globalThread) rebuild(t engine.Task) (engine.Task, error) {
	if err := t.Close(); err != nil {
		return nil, err
	}
	sub := g.e.tp.SubTopologies()[t.ID().Sub]
	for _, name := range sub.Stores {
		delete(g.stores, name)
		if err := os.RemoveAll(engine.StoreDir(g.e.cfg.StateDir, t.ID(), name)); err != nil {
			return nil, fmt.Errorf("streamgen: wiping global store %q: %w", name, err)
		}
	}
	return g.openTask(sub)
}

// bootstrap applies the global topics up to target (checkpoint key → end
// offset), committing every commit interval and at the end.
func (g *globalThread) bootstrap(ctx context.Context, target map[string]int64) error {
	started := time.Now()
	g.lastCommit = started
	var total int64
	for k, end := range target {
		total += end - g.pos[k]
		g.log.Info("restoring global store", "partition", k, "from_offset", g.pos[k], "to_offset", end)
	}
	var n int64
	lastLog := started
	for len(target) > 0 {
		fetches := g.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("streamgen: restoring global tables: %w", err)
		}
		if err := g.fetchErrors(fetches); err != nil {
			return err
		}
		c, err := g.apply(fetches)
		n += c
		if err != nil {
			return err
		}
		for k, end := range target {
			if g.pos[k] >= end {
				delete(target, k)
			}
		}
		if time.Since(g.lastCommit) >= g.e.cfg.CommitInterval {
			if err := g.commit(); err != nil {
				return err
			}
		}
		if time.Since(lastLog) >= 2*time.Second {
			lastLog = time.Now()
			g.log.Info("restoring global tables", "records", n, "offsets_total", total)
		}
	}
	if err := g.commit(); err != nil {
		return err
	}
	el := time.Since(started)
	g.e.restoreNanos.Add(int64(el))
	for _, t := range g.tasks {
		// Records are counted per global task; with one task (the usual
		// case) the count is exact, with several it goes to the first.
		g.e.addRestored(t.ID(), n)
		n = 0
	}
	g.log.Info("global tables restored", "took", el.Round(time.Millisecond).String())
	return nil
}

// fetchErrors returns the first fetch error that will not heal by retrying.
func (g *globalThread) fetchErrors(fetches kgo.Fetches) error {
	var fatal error
	fetches.EachError(func(topic string, p int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) {
			return
		}
		g.log.Warn("global fetch error", "topic", topic, "partition", p, "error", err.Error())
		if fatal == nil && isFatalFetch(err) {
			fatal = fmt.Errorf("streamgen: consuming global topic %q partition %d: %w", topic, p, err)
		}
	})
	return fatal
}

// apply runs the polled records through their global tasks and advances
// the positions.
func (g *globalThread) apply(fetches kgo.Fetches) (int64, error) {
	var n int64
	var perr error
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if perr != nil || len(fp.Records) == 0 {
			return
		}
		t := g.bySource[fp.Topic]
		if t == nil {
			return
		}
		k := checkpointKey(fp.Topic, fp.Partition)
		for _, r := range fp.Records {
			if r.Offset < g.pos[k] {
				continue
			}
			if !r.Attrs.IsControl() {
				raw := sgstream.RawRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
					Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()}
				if len(r.Headers) > 0 {
					raw.Headers = make([]sgstream.Header, len(r.Headers))
					for i, h := range r.Headers {
						raw.Headers[i] = sgstream.Header{Key: h.Key, Value: h.Value}
					}
				}
				if err := t.Process(&raw); err != nil {
					perr = fmt.Errorf("streamgen: global table from %q partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
					return
				}
				n++
			}
			g.pos[k] = r.Offset + 1
			g.dirty = true
		}
	})
	g.e.globalApplied.Add(n)
	return n, perr
}

// run applies updates until ctx ends. The caller commits and closes.
func (g *globalThread) run(ctx context.Context) error {
	interval := g.e.cfg.CommitInterval
	for {
		wait := min(max(interval-time.Since(g.lastCommit), 5*time.Millisecond), 250*time.Millisecond)
		pollCtx, cancel := context.WithTimeout(ctx, wait)
		fetches := g.cl.PollFetches(pollCtx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if fetches.IsClientClosed() {
			return nil
		}
		if err := g.fetchErrors(fetches); err != nil {
			return err
		}
		n, err := g.apply(fetches)
		if err != nil {
			return err
		}
		if n > 0 {
			g.e.lastRecord.Store(time.Now().UnixNano())
		}
		if time.Since(g.lastCommit) >= interval {
			if err := g.commit(); err != nil {
				return err
			}
		}
	}
}

// commit makes the applied records durable: dead-lettered records flushed,
// then every global store committed with the positions reached (which the
// next start resumes from).
func (g *globalThread) commit() error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if err := g.cl.Flush(ctx); err != nil {
		return fmt.Errorf("streamgen: global thread: flushing produced records: %w", err)
	}
	g.prodMu.Lock()
	perr := g.prodErr
	g.prodMu.Unlock()
	if perr != nil {
		return perr
	}
	if !g.dirty {
		g.lastCommit = time.Now()
		return nil
	}
	cp := make(map[string]int64, len(g.pos))
	for k, v := range g.pos {
		cp[k] = v
	}
	for _, t := range g.tasks {
		if err := t.Commit(cp); err != nil {
			return err
		}
	}
	g.e.countGlobal(g)
	g.dirty = false
	g.lastCommit = time.Now()
	return nil
}

// close commits when clean (a crash keeps the last committed state) and
// releases the tasks, stores and client.
func (g *globalThread) close(clean bool) error {
	var err error
	if clean && g.cl != nil {
		err = g.commit()
	}
	for _, t := range g.tasks {
		if cerr := t.Close(); cerr != nil {
			g.log.Warn("closing global task", "task", t.ID().String(), "error", cerr.Error())
		}
	}
	g.tasks = nil
	if g.cl != nil {
		g.cl.Close()
		g.cl = nil
	}
	return err
}

// globalProvider is the global tasks' store provider.
type globalProvider globalThread

// OpenStore opens a global store, Pebble under <state-dir>/global/<store>
// or in memory, and registers it for lookups. Global stores are not logged:
// their topic is their changelog.
func (gp *globalProvider) OpenStore(t engine.Task, spec *sgstream.StoreSpec) (sgstate.Store, error) {
	g := (*globalThread)(gp)
	e := g.e
	var s sgstate.Store
	if spec.Custom != nil {
		if s = spec.Custom(); s == nil {
			return nil, fmt.Errorf("streamgen: store %q: custom store constructor returned nil", spec.Name)
		}
	} else {
		var err error
		if s, err = engine.NewBuiltinStore(spec, !spec.InMemory, e.cfg.Pebble); err != nil {
			return nil, err
		}
	}
	kv, ok := s.(sgstate.KeyValueStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: global store %q is a %T, not a key-value store", spec.Name, s)
	}
	ctx := t.StoreContext(spec, g.log.With("store", spec.Name))
	ctx.Dir = engine.StoreDir(e.cfg.StateDir, t.ID(), spec.Name)
	if err := os.MkdirAll(ctx.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("streamgen: store %q: %w", spec.Name, err)
	}
	if err := s.Init(ctx); err != nil {
		return nil, err
	}
	c := &globalCore{kv: kv}
	g.stores[spec.Name] = c
	return globalKV{globalView{c}}, nil
}

// GlobalStore lets a global task look another global store up.
func (gp *globalProvider) GlobalStore(name string) (sgstate.Store, error) {
	return (*globalThread)(gp).e.globalStore(name)
}

// globalCollector sends what global tasks produce: only dead-lettered
// records, since a global table source forwards nothing. They are not part
// of any transaction (as in Kafka Streams, the global thread has none);
// commit flushes them before it checkpoints.
type globalCollector globalThread

func (gc *globalCollector) Send(topic string, partition int32, key, value []byte, ts int64, headers []sgstream.Header, partitionKey []byte) error {
	g := (*globalThread)(gc)
	if partition < 0 {
		var err error
		if partition, err = g.outs.get(topic).partition(g.e, key, partitionKey); err != nil {
			return err
		}
	}
	r := &kgo.Record{Topic: topic, Partition: partition, Key: bytes.Clone(key), Value: bytes.Clone(value),
		Timestamp: time.UnixMilli(ts), Headers: kgoHeaders(headers)}
	g.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
		if err == nil {
			return
		}
		g.prodMu.Lock()
		if g.prodErr == nil {
			g.prodErr = fmt.Errorf("streamgen: producing to %q partition %d: %w", r.Topic, r.Partition, err)
		}
		g.prodMu.Unlock()
	})
	return nil
}

// globalCore is a global store and the mutex every access holds (see
// globalThread for why a mutex and not a RWMutex).
type globalCore struct {
	mu sync.Mutex
	kv sgstate.KeyValueStore
}

// errGlobalReadOnly is returned by writes through a stream task's view.
var errGlobalReadOnly = errors.New("streamgen: global stores are read-only outside the global table")

// globalView is the read-only view stream tasks get: reads under the
// store's mutex; writes fail; the view does not own the store (Flush and
// Close do nothing).
type globalView struct{ c *globalCore }

var _ sgstate.KeyValueStore = globalView{}

func (v globalView) Name() string { return v.c.kv.Name() }

func (v globalView) Init(*sgstate.StoreContext) error { return nil }

func (v globalView) Flush() error { return nil }

func (v globalView) Close() error { return nil }

func (v globalView) Get(key []byte) ([]byte, bool, error) {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	return v.c.kv.Get(key)
}

func (v globalView) Put(key, value []byte) error { return errGlobalReadOnly }

func (v globalView) Delete(key []byte) error { return errGlobalReadOnly }

// scan copies what fn would visit under the lock, then visits it without.
func (v globalView) scan(do func(fn func(k, v []byte) error) error, fn func(key, value []byte) error) error {
	var kvs [][2][]byte
	v.c.mu.Lock()
	err := do(func(k, val []byte) error {
		kvs = append(kvs, [2][]byte{bytes.Clone(k), bytes.Clone(val)})
		return nil
	})
	v.c.mu.Unlock()
	if err != nil {
		return err
	}
	for _, e := range kvs {
		if err := fn(e[0], e[1]); err != nil {
			return err
		}
	}
	return nil
}

func (v globalView) Range(from, to []byte, fn func(key, value []byte) error) error {
	return v.scan(func(f func(k, v []byte) error) error { return v.c.kv.Range(from, to, f) }, fn)
}

func (v globalView) ReverseRange(from, to []byte, fn func(key, value []byte) error) error {
	return v.scan(func(f func(k, v []byte) error) error { return v.c.kv.ReverseRange(from, to, f) }, fn)
}

func (v globalView) PrefixScan(prefix []byte, fn func(key, value []byte) error) error {
	return v.scan(func(f func(k, v []byte) error) error { return v.c.kv.PrefixScan(prefix, f) }, fn)
}

func (v globalView) All(fn func(key, value []byte) error) error {
	return v.scan(v.c.kv.All, fn)
}

func (v globalView) ApproximateNumEntries() (int64, error) {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	return v.c.kv.ApproximateNumEntries()
}

// globalKV is the global task's own, writable view: it owns the store.
type globalKV struct{ globalView }

var (
	_ sgstate.KeyValueStore = globalKV{}
	_ sgstate.Transactional = globalKV{}
)

func (w globalKV) Put(key, value []byte) error {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.kv.Put(key, value)
}

func (w globalKV) Delete(key []byte) error {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.kv.Delete(key)
}

func (w globalKV) Flush() error {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.kv.Flush()
}

func (w globalKV) Close() error {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.kv.Close()
}

func (w globalKV) Commit(checkpoint map[string]int64) error {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if tx, ok := w.c.kv.(sgstate.Transactional); ok {
		return tx.Commit(checkpoint)
	}
	return nil
}

func (w globalKV) Abort() error {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if tx, ok := w.c.kv.(sgstate.Transactional); ok {
		return tx.Abort()
	}
	return nil
}

func (w globalKV) Checkpoint() (map[string]int64, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if tx, ok := w.c.kv.(sgstate.Transactional); ok {
		return tx.Checkpoint()
	}
	return nil, nil
}
