package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// commitTimeout bounds a commit (flush, offsets, end of transaction) so a
// dead cluster fails the commit instead of hanging the worker. Twice the
// transaction timeout: a transaction still open after that has been aborted
// by its coordinator anyway, and a worker blocked longer (the broker came
// back, but the group waits on a rebalance the blocked worker holds up) is
// better restarted from its last commit (runWorker).
const commitTimeout = 20 * time.Second

// worker is one stream thread: one group member, one producer (one
// transactional id under exactly-once), the tasks assigned to it, all
// driven by one goroutine.
type worker struct {
	e    *Engine
	idx  int
	eos  bool
	cl   *kgo.Client
	sess *kgo.GroupTransactSession // a classic member under exactly-once
	sg   *streamsDriver            // a streams group member's membership, nil for classic
	// bal is the member's balancer; standby its standby tasks, as of
	// assignment number standbyAt (standbyRetry: some could not be
	// opened yet and are tried again after that time).
	bal *taskBalancer
	// broken ends the worker at its next loop: tasks that could not be
	// reopened after an abort (reopenAll).
	broken error
	// client is cl for the balancer, which runs on the client's own
	// goroutines and may start before cl is set.
	client       atomic.Pointer[kgo.Client]
	standby      *standbySet
	standbyAt    uint64
	standbyRetry time.Time
	log          interface {
		Info(string, ...any)
		Warn(string, ...any)
		Debug(string, ...any)
		Error(string, ...any)
	}

	tasks map[engine.TaskID]*task

	evMu   sync.Mutex
	events []rebalanceEvent
	// rebalanceFrom is when the first callback of the rebalance being
	// applied ran (for the status page's rebalance durations).
	rebalanceFrom time.Time

	taskCount       atomic.Int32 // len(tasks), for observers
	rebalanceWanted atomic.Bool
	settled         atomic.Bool
	inTxn           bool
	// A cooperative revoke is followed by another rebalance that hands the
	// partitions to their new owner; the worker is not settled (the engine
	// not RUNNING) until it saw an assignment of that later generation.
	assignedGen, awaitGen int32
	lastCommit            time.Time
	lastPurge             time.Time

	// producedFn and changelogFn are w.produced and w.producedChangelog,
	// bound once: a method value made per record is a heap allocation per
	// record.
	producedFn, changelogFn func(*kgo.Record, error)
	prodMu                  sync.Mutex
	prodErr                 error
	clEnd                   map[string]int64 // changelog checkpoint key → next offset produced
	clSent                  int64            // changelog records sent in the open transaction
	sentInTxn               int64            // records sent in the open transaction
	// outs and arena are the collector's (collector.go); cur is the
	// fetched record being processed, until a record sent reuses it.
	outs  outTopics
	arena byteArena
	cur   *kgo.Record
	// rate is the records per second the tasks processed in the last pass
	// long enough to tell (pollSize).
	rate float64
}

type eventKind int

const (
	evAssigned eventKind = iota
	evRevoked
	evLost
)

type rebalanceEvent struct {
	kind eventKind
	tps  map[string][]int32
	gen  int32 // group generation when the callback ran
}

// maxFetchBytes bounds one fetch response of a worker's consumer
// (fetch.max.bytes; Kafka's and franz-go's default is 50 MiB). franz-go
// hands out records that point into the response, so a response stays in
// memory until the worker has processed its last record: with 48
// partitions of 1 MiB each (max.partition.fetch.bytes) that was 127 MB of
// a 180 MB heap. A few partitions fill a fetch of this size as before.
const maxFetchBytes = 16 << 20

func newWorker(e *Engine, idx int) (*worker, error) {
	w := &worker{e: e, idx: idx, eos: e.cfg.Guarantee == ExactlyOnceV2, tasks: map[engine.TaskID]*task{},
		clEnd: map[string]int64{}, outs: newOutTopics(e), lastCommit: time.Now(), lastPurge: time.Now()}
	w.log = e.log.With("worker", idx)
	w.producedFn, w.changelogFn = w.produced, w.producedChangelog
	w.standby = newStandbySet(w)
	w.bal = newTaskBalancer(e.tp).advertising(e.cfg.QueryAddr).withStandbys(e.cfg.StandbyReplicas, e.instanceID, w.heldState)
	w.bal.member.Rack = e.cfg.Rack
	w.bal.withWarmups(&warmups{max: e.cfg.MaxWarmupReplicas, lag: e.cfg.AcceptableRecoveryLag,
		interval: e.cfg.ProbingRebalanceInterval, ends: w.changelogEnds})
	opts := e.clientOpts(kgo.ClientID(transactionalID(e, idx)),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.FetchMaxBytes(maxFetchBytes),
	)
	streams := e.cfg.GroupProtocol == ProtocolStreams
	if streams {
		opts = append(opts, streamsClientOpts()...)
	} else {
		opts = append(opts, w.classicGroupOpts()...)
	}
	opts = append(opts, e.met.clientOpts()...)
	if w.eos {
		opts = append(opts, kgo.TransactionalID(transactionalID(e, idx)), kgo.TransactionTimeout(10*time.Second))
	}
	var err error
	if w.eos && !streams {
		w.sess, err = kgo.NewGroupTransactSession(opts...)
		if err == nil {
			w.cl = w.sess.Client()
		}
	} else {
		w.cl, err = kgo.NewClient(opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: kafka client: %w", ErrConfig, err)
	}
	w.client.Store(w.cl)
	w.fenceZombie()
	if streams {
		if w.sg, err = newStreamsDriver(w); err != nil {
			w.cl.Close()
			return nil, err
		}
	}
	return w, nil
}

// transactionalID is worker idx's client id and, under exactly-once, its
// transactional id: one a stream thread, stable across restarts so that a
// restarted worker fences its crashed predecessor.
func transactionalID(e *Engine, idx int) string {
	return e.cfg.ApplicationID + "-" + e.instanceID + "-" + strconv.Itoa(idx)
}

// classicGroupOpts make the client a member of the application's classic
// consumer group: kgo's group management with the standby- and lag-aware
// balancer, rebalances held until the worker has committed (BlockRebalanceOnPoll),
// and the callbacks that hand the worker its assignment changes.
func (w *worker) classicGroupOpts() []kgo.Opt {
	e := w.e
	var topics []string
	for _, s := range e.sourceSubs {
		topics = append(topics, s.Topics...)
	}
	sort.Strings(topics)
	push := func(kind eventKind) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, cl *kgo.Client, tps map[string][]int32) {
			_, gen := cl.GroupMetadata()
			w.evMu.Lock()
			if len(w.events) == 0 && w.rebalanceFrom.IsZero() {
				w.rebalanceFrom = time.Now()
			}
			w.events = append(w.events, rebalanceEvent{kind: kind, tps: tps, gen: gen})
			w.evMu.Unlock()
			w.settled.Store(false)
		}
	}
	opts := []kgo.Opt{
		kgo.ConsumerGroup(e.cfg.ApplicationID),
		kgo.ConsumeTopics(topics...),
		kgo.Balancers(w.bal),
		kgo.BlockRebalanceOnPoll(),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(push(evAssigned)),
		kgo.OnPartitionsRevoked(push(evRevoked)),
		kgo.OnPartitionsLost(push(evLost)),
		kgo.OnPartitionsCallbackBlocked(func(context.Context, *kgo.Client) {
			w.rebalanceWanted.Store(true)
			w.settled.Store(false)
		}),
	}
	return append(opts, e.membershipOpts(w.idx)...)
}

// run is the worker's loop: poll, apply rebalances, buffer, process,
// punctuate, commit every commit interval. Rebalances are let through only
// right after a commit, so a revoked task never has uncommitted work.
func (w *worker) run(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("streamgen: worker %d: internal error: %v", w.idx, r)
		}
		w.close(err)
	}()
	interval := w.e.cfg.CommitInterval
	for {
		if ctx.Err() != nil {
			if errors.Is(context.Cause(ctx), errCrash) {
				return nil
			}
			// Clean shutdown: commit what was processed.
			return w.commit()
		}
		pollCtx, cancel := context.WithTimeout(ctx, w.pollWait())
		fetches := w.cl.PollRecords(pollCtx, w.pollSize())
		cancel()
		if fetches.IsClientClosed() {
			return nil
		}
		var fatal error
		fetches.EachError(func(topic string, p int32, ferr error) {
			if errors.Is(ferr, context.DeadlineExceeded) || errors.Is(ferr, context.Canceled) {
				return
			}
			w.log.Warn("fetch error", "topic", topic, "partition", p, "error", ferr.Error())
			if fatal == nil && isFatalFetch(ferr) {
				fatal = fmt.Errorf("streamgen: consuming %q partition %d: %w", topic, p, ferr)
			}
		})
		if fatal != nil {
			return fatal
		}
		keep, err := w.applyEvents()
		if err == nil {
			err = w.broken
		}
		if err == nil && w.sg != nil {
			err = w.sg.fatal()
		}
		if err != nil {
			return err
		}
		if w.sg == nil {
			w.probeOrSyncStandbys()
		}
		n := 0
		if keep {
			n = w.enqueue(fetches)
		}
		if w.isSettled() {
			w.settled.Store(true)
		}
		if n > 0 {
			w.e.lastRecord.Store(time.Now().UnixNano())
			if err := w.begin(); err != nil {
				return err
			}
		}
		if err := w.processAll(); err != nil {
			return err
		}
		if time.Since(w.lastCommit) >= interval || w.rebalanceWanted.Load() || w.uncommittedBytes() > maxUncommittedBytes {
			if err := w.commit(); err != nil {
				return err
			}
			w.rebalanceWanted.Store(false)
			if err := w.rebalance(); err != nil {
				return err
			}
		}
		w.publish()
	}
}

// maxUncommittedBytes is how much memory a worker's store writes since
// the last commit may hold before it commits early, as Kafka Streams does
// past statestore.uncommitted.max.bytes (KIP-892, 64 MiB): stores stage
// their writes until the commit, and at-least-once's 30 s interval over
// millions of new keys held gigabytes.
const maxUncommittedBytes = 64 << 20

// uncommittedBytes sums what the worker's tasks' stores hold uncommitted.
func (w *worker) uncommittedBytes() int64 {
	var n int64
	for _, tk := range w.tasks {
		n += tk.t.UncommittedBytes()
	}
	return n
}

// enqueue hands the polled records to their tasks' queues a partition at
// a time: the task and its queue are looked up once per partition, not
// once per record.
func (w *worker) enqueue(fetches kgo.Fetches) int {
	n := 0
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		tk := w.taskFor(p.Topic, p.Partition)
		if tk == nil {
			return
		}
		if w.sg != nil {
			w.sg.mark(p.Records[len(p.Records)-1])
		}
		tk.byTop[p.Topic].push(p.Records...)
		n += len(p.Records)
	})
	return n
}

// processAll runs every task over its buffered records and its
// punctuations, and measures the worker's processing rate for pollSize.
func (w *worker) processAll() error {
	start := time.Now()
	total := 0
	for _, id := range w.taskIDs() {
		tk := w.tasks[id]
		cnt, err := tk.process(false)
		total += cnt
		w.e.processed.Add(int64(cnt))
		if err != nil {
			w.abort()
			return err
		}
		if err := tk.punctuate(); err != nil {
			w.abort()
			return err
		}
	}
	if total >= rateSample {
		w.rate = float64(total) / time.Since(start).Seconds()
	}
	return nil
}

// pollWait is how long a poll may wait for records: until the commit is
// due, but at least pollFloor and at most 250 ms (so that a rebalance or
// a stop is noticed). Kafka Streams polls for up to poll.ms (100 ms)
// whatever the commit interval; a shorter wait, to commit the moment the
// interval ends, made a worker under exactly-once end its transaction just
// before the fetch in flight arrived, and commit (flush, offsets, end)
// half again as often as a loop that waits for that fetch.
func (w *worker) pollWait() time.Duration {
	wait := w.e.cfg.CommitInterval - time.Since(w.lastCommit)
	return min(max(wait, pollFloor), 250*time.Millisecond)
}

// pollFloor is the shortest poll wait: Kafka Streams' poll.ms.
const pollFloor = 100 * time.Millisecond

// pollBudget is how much processing one poll may hand the worker, and
// rateSample the fewest records a pass must process for its duration to
// say how fast the worker is.
const (
	pollBudget = 100 * time.Millisecond
	rateSample = 1000
)

// pollSize is how many records the next poll may take: what the tasks
// process in pollBudget (or in the commit interval, if shorter), at the
// rate they were last measured at, and at least MaxPollRecords.
//
// franz-go fetches a broker's partitions again only once the last fetch
// was taken whole. A worker that polls a fetch in small parts waits for the
// next one after its last part; taking it whole lets the next fetch travel
// and be decoded while this one is processed, as a consume→produce loop
// over PollFetches does. The bound keeps the work a commit must finish
// first (everything polled is processed before its offsets are committed)
// near the commit interval when processing is slow.
func (w *worker) pollSize() int {
	budget := min(w.e.cfg.CommitInterval, pollBudget)
	return max(w.e.cfg.MaxPollRecords, int(w.rate*budget.Seconds()))
}

// probeOrSyncStandbys is a classic member's follow-up on its last
// assignment: standby tasks applied, and a probing rebalance when due.
func (w *worker) probeOrSyncStandbys() {
	w.syncStandbys()
	if w.bal.probeDue() {
		// The last assignment left tasks waiting for warm-up
		// replicas (rebalance so the caught-up ones move), or
		// withheld tasks that move (rebalance so they run).
		w.log.Info("probing rebalance")
		w.cl.ForceRebalance()
	}
}

// isSettled reports whether the member runs its whole assignment: joined,
// no assignment change waiting, and (classic) the generation that follows
// a cooperative revoke seen.
func (w *worker) isSettled() bool {
	if w.sg != nil {
		return w.sg.joined() && !w.rebalanceWanted.Load()
	}
	_, gen := w.cl.GroupMetadata()
	return gen > 0 && w.pendingEvents() == 0 && !w.rebalanceWanted.Load() && w.assignedGen >= w.awaitGen
}

// rebalance lets the assignment change right after a commit: a classic
// member lets kgo's held rebalance through, a streams member applies its
// new target assignment.
func (w *worker) rebalance() error {
	if w.sg == nil {
		w.cl.AllowRebalance()
		return nil
	}
	if target, ok := w.sg.pending(); ok {
		return w.applyStreams(target)
	}
	return nil
}

// isFatalFetch reports fetch errors that do not heal by retrying.
func isFatalFetch(err error) bool {
	return errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed)
}

func (w *worker) pendingEvents() int {
	w.evMu.Lock()
	defer w.evMu.Unlock()
	return len(w.events)
}

func (w *worker) taskIDs() []engine.TaskID {
	ids := make([]engine.TaskID, 0, len(w.tasks))
	for id := range w.tasks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Sub != ids[j].Sub {
			return ids[i].Sub < ids[j].Sub
		}
		return ids[i].Partition < ids[j].Partition
	})
	return ids
}

func (w *worker) taskFor(topic string, p int32) *task {
	s := w.e.tp.SubTopologyOf(topic)
	if s == nil {
		return nil
	}
	return w.tasks[engine.TaskID{Sub: s.ID, Partition: p}]
}

// begin opens the transaction lazily, on the first record polled or sent.
func (w *worker) begin() error {
	if !w.eos || w.inTxn {
		return nil
	}
	begin := w.cl.BeginTransaction
	if w.sess != nil {
		begin = w.sess.Begin
	}
	if err := begin(); err != nil {
		return fmt.Errorf("streamgen: worker %d: begin transaction: %w", w.idx, err)
	}
	w.inTxn = true
	return nil
}

// applyEvents applies the rebalance callbacks' results: closes revoked and
// lost tasks, opens and restores assigned ones. keep is false when the
// records of the current poll must be dropped because consumption was
// rewound to the committed offsets.
func (w *worker) applyEvents() (keep bool, err error) {
	w.evMu.Lock()
	evs, from := w.events, w.rebalanceFrom
	w.events, w.rebalanceFrom = nil, time.Time{}
	w.evMu.Unlock()
	if len(evs) == 0 {
		return true, nil
	}
	keep = true
	var open, lost []engine.TaskID
	var gen int32
	for _, ev := range evs {
		gen = max(gen, ev.gen)
		ids := w.tasksOf(ev.tps)
		switch ev.kind {
		case evAssigned:
			w.assignedGen = max(w.assignedGen, ev.gen)
			if len(ev.tps) > 0 {
				w.log.Info("partitions assigned", "partitions", fmtTPs(ev.tps), "generation", ev.gen)
			}
			for _, id := range ids {
				if _, ok := w.tasks[id]; !ok {
					open = append(open, id)
				}
			}
		case evRevoked, evLost:
			what := "revoked"
			if ev.kind == evLost {
				what = "lost"
			}
			if len(ev.tps) > 0 {
				w.log.Info("partitions "+what, "partitions", fmtTPs(ev.tps), "generation", ev.gen)
				w.awaitGen = max(w.awaitGen, ev.gen+1)
			}
			for _, id := range ids {
				if _, ok := w.tasks[id]; ok {
					lost = append(lost, id)
				}
				w.closeTask(id)
				for i, o := range open {
					if o == id {
						open = append(open[:i], open[i+1:]...)
						break
					}
				}
			}
			if w.eos && len(ev.tps) > 0 {
				keep = false
			}
		}
	}
	if !keep {
		// The transact session aborts the next transaction after any
		// revocation; nothing is in flight now (rebalances are let through
		// only after a commit), so end the empty one here. Ending rewinds
		// consumption to the committed offsets: drop this poll's records.
		if w.inTxn {
			w.abort()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
			_, err := w.sess.End(ctx, kgo.TryAbort)
			cancel()
			if err != nil {
				return false, transient(fmt.Errorf("streamgen: worker %d: reset transaction after rebalance: %w", w.idx, err))
			}
		}
	}
	if len(open) > 0 {
		w.standby.release(open)
		if err := w.openTasks(open); err != nil {
			return false, err
		}
	}
	w.logRebalance(gen, open, lost, from)
	return keep, nil
}

func (w *worker) tasksOf(tps map[string][]int32) []engine.TaskID {
	seen := map[engine.TaskID]bool{}
	var ids []engine.TaskID
	for topic, ps := range tps {
		s := w.e.tp.SubTopologyOf(topic)
		if s == nil {
			continue
		}
		for _, p := range ps {
			id := engine.TaskID{Sub: s.ID, Partition: p}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	return ids
}

func fmtTPs(tps map[string][]int32) string {
	var parts []string
	for t, ps := range tps {
		sorted := append([]int32(nil), ps...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		s := t + "["
		for i, p := range sorted {
			if i > 0 {
				s += ","
			}
			s += strconv.Itoa(int(p))
		}
		parts = append(parts, s+"]")
	}
	sort.Strings(parts)
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += " "
		}
		out += p
	}
	return out
}

// openTasks opens and restores tasks, then registers them.
func (w *worker) openTasks(ids []engine.TaskID) error {
	var created, opened []*task
	fail := func(err error, from int) error {
		for _, o := range opened {
			o.t.Close()
		}
		for _, c := range created[from:] {
			c.closePreopened()
		}
		for _, c := range created {
			w.e.taskLock(c.id).Unlock()
		}
		return err
	}
	progress, err := w.fetchProgress(ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		lock := w.e.taskLock(id)
		lock.Lock()
		tk, err := w.newTask(id, progress[id])
		if err != nil {
			lock.Unlock()
			return fail(err, 0)
		}
		created = append(created, tk)
	}
	if len(created) > 1 {
		preopenStores(created)
	}
	for i, tk := range created {
		if err := tk.init(); err != nil {
			return fail(err, i+1)
		}
		opened = append(opened, tk)
	}
	if err := w.restore(opened); err != nil {
		for _, o := range opened {
			o.t.Close()
			w.e.taskLock(o.id).Unlock()
		}
		return transient(err)
	}
	for _, tk := range opened {
		w.tasks[tk.id] = tk
		w.e.registerTask(tk)
		w.log.Info("task running", "task", tk.id.String())
	}
	w.taskCount.Store(int32(len(w.tasks)))
	return nil
}

func (w *worker) closeTask(id engine.TaskID) {
	tk, ok := w.tasks[id]
	if !ok {
		return
	}
	w.e.met.taskClosed(tk)
	if err := tk.close(); err != nil {
		w.log.Warn("closing task", "task", id.String(), "error", err.Error())
	}
	delete(w.tasks, id)
	w.taskCount.Store(int32(len(w.tasks)))
	w.e.taskLock(id).Unlock()
	w.log.Info("task closed", "task", id.String())
}

// abort ends the open transaction with an abort and rolls every task back
// to its committed state: the tasks are closed (dropping staged store
// writes and in-memory operator state) and reopened from their stores, and
// consumption is rewound to the committed offsets.
func (w *worker) abort() {
	w.e.aborts.Add(1)
	if w.eos {
		ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
		err := w.endAbort(ctx)
		cancel()
		if err != nil {
			w.log.Warn("aborting transaction", "error", err.Error())
		}
		w.inTxn = false
	}
	w.resetProduced()
	w.reopenAll()
	w.rewind()
}

// endAbort aborts the open transaction.
func (w *worker) endAbort(ctx context.Context) error {
	if w.sess != nil {
		_, err := w.sess.End(ctx, kgo.TryAbort)
		return err
	}
	return w.cl.EndTransaction(ctx, kgo.TryAbort)
}

// rewind makes a streams member consume its tasks' partitions from the
// committed offsets again after an abort (a classic member's transact
// session does this itself). A failure ends the worker, as a failed
// reopen does: its restart resumes from the last commit.
func (w *worker) rewind() {
	if w.sg == nil || !w.eos || w.broken != nil {
		return
	}
	if err := w.rewindStreams(); err != nil {
		w.broken = err
	}
}

func (w *worker) resetProduced() {
	w.clSent, w.sentInTxn = 0, 0
	w.prodMu.Lock()
	w.prodErr = nil
	clear(w.clEnd)
	w.prodMu.Unlock()
}

// reopenAll closes every task dirty and opens it again from its committed
// state (restoring the committed changelog tail past its checkpoint, if any).
func (w *worker) reopenAll() {
	ids := w.taskIDs()
	for _, id := range ids {
		w.closeTask(id)
	}
	if err := w.openTasks(ids); err != nil {
		// The partitions stay assigned to this client, but their tasks are
		// gone: carrying on would skip their records. The run loop ends the
		// worker with this error, and its restart rejoins the group.
		w.broken = transient(fmt.Errorf("streamgen: worker %d: reopening tasks after abort: %w", w.idx, err))
	}
}

// commit commits the processed work: caches flushed (their output joins the
// transaction), records flushed, then the transaction (or the offsets,
// at least once) committed, and only then the tasks' local state with the
// changelog offsets it corresponds to.
func (w *worker) commit() error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	// Everything polled is processed before its offset is committed.
	for _, id := range w.taskIDs() {
		cnt, err := w.tasks[id].process(true)
		w.e.processed.Add(int64(cnt))
		if err != nil {
			w.abort()
			return err
		}
	}
	for _, id := range w.taskIDs() {
		if err := w.tasks[id].flushCaches(); err != nil {
			w.abort()
			return err
		}
	}
	if err := w.cl.Flush(ctx); err != nil {
		w.abort()
		return transient(fmt.Errorf("streamgen: worker %d: flushing produced records: %w", w.idx, err))
	}
	if err := w.produceError(); err != nil {
		w.abort()
		return transient(err)
	}
	if h := w.e.cfg.hooks.beforeTxnCommit; h != nil && (w.inTxn || !w.eos) {
		if err := h(); err != nil {
			if errors.Is(err, errCrash) {
				return err
			}
			w.log.Warn("commit failed, aborting", "error", err.Error())
			w.abort()
			w.lastCommit = time.Now()
			return nil
		}
	}
	meta := w.progressMetadata()
	ctx = withProgress(ctx, meta)
	if w.sg != nil {
		if err := w.commitStreamsOrRollBack(ctx, meta); err != nil {
			return err
		}
	} else if w.eos {
		if w.inTxn {
			committed, err := w.sess.End(ctx, kgo.TryCommit)
			w.inTxn = false
			if err != nil {
				w.resetProduced()
				w.reopenAll()
				return transient(fmt.Errorf("streamgen: worker %d: committing transaction: %w", w.idx, err))
			}
			if !committed {
				w.log.Info("transaction aborted by a rebalance; rolling tasks back to the last commit")
				w.e.aborts.Add(1)
				w.resetProduced()
				w.reopenAll()
				w.lastCommit = time.Now()
				return nil
			}
			w.e.met.txnCommits.Add(1)
		}
	} else if err := w.cl.CommitUncommittedOffsets(ctx); err != nil {
		// At least once: the records are out; the offsets will be
		// committed by the next owner's progress or reprocessed.
		w.log.Warn("committing offsets", "error", err.Error())
	}
	if h := w.e.cfg.hooks.afterTxnCommit; h != nil {
		if err := h(w.clSent); err != nil {
			return err
		}
	}
	w.clSent, w.sentInTxn = 0, 0
	w.prodMu.Lock()
	ends := w.clEnd
	w.clEnd = map[string]int64{}
	w.prodMu.Unlock()
	for _, id := range w.taskIDs() {
		tk := w.tasks[id]
		for _, topic := range tk.changelogs {
			k := checkpointKey(topic, tk.id.Partition)
			if v, ok := ends[k]; ok && v > tk.end[k] {
				tk.end[k] = v
			}
		}
		if err := tk.commitState(tk.checkpoint()); err != nil {
			return err
		}
		w.e.countCommitted(tk)
	}
	w.e.commits.Add(1)
	w.e.met.commitLatency.Observe(time.Since(start).Seconds())
	w.lastCommit = time.Now()
	w.maybePurge(ctx)
	return nil
}

func (w *worker) produceError() error {
	w.prodMu.Lock()
	defer w.prodMu.Unlock()
	return w.prodErr
}

// close ends the worker: tasks closed (dirty unless commit ran), client
// closed, which leaves the group.
func (w *worker) close(err error) {
	if w.eos && w.inTxn && err != nil && !errors.Is(err, errCrash) {
		ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
		w.endAbort(ctx)
		cancel()
	}
	w.standby.closeAll()
	for _, id := range w.taskIDs() {
		w.closeTask(id)
	}
	w.settled.Store(false)
	// Leaving the group runs the revoke callback, which waits for our
	// last poll to be released.
	switch {
	case w.sg != nil:
		w.sg.closeStreams()
		w.cl.Close()
	case w.sess != nil:
		w.sess.CloseAllowingRebalance()
	default:
		w.cl.CloseAllowingRebalance()
	}
}
