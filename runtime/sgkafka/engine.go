// Package sgkafka runs a streamgen topology on Kafka: the engine library
// (Engine, Config) behind a generated binary's `run` command. The command
// itself (flags, environment, signals, TLS and SASL files, the embedded
// broker) is package sgrun; this package parses no flags and does not link
// the embedded broker, so an application that embeds the engine gets only
// the engine.
//
// The engine follows Kafka Streams' model: one task per (sub-topology,
// partition), tasks spread over group members (workers) by a co-partition
// aware cooperative balancer, records chosen across a task's partitions by
// head timestamp, stores logged to <app id>-<store>-changelog and restored
// from it before a task processes records.
//
// Exactly-once (exactly_once_v2) uses one transactional producer per worker;
// a transaction holds output, repartition and changelog records and the
// consumed offsets. Unlike Kafka Streams, local state survives a crash: the
// stores stage their writes and apply them, with the changelog offsets they
// correspond to, only after the Kafka transaction committed (Task.Commit
// with a checkpoint). An aborted transaction drops the staged writes, so
// local state always equals the last committed transaction, and a restart
// restores only the changelog tail past the local checkpoint.
//
// Global tables (global.go) are read outside the group by every instance,
// in full, into stores whose checkpoint is the offsets of their own topic,
// and caught up before any task processes records, as Kafka Streams'
// GlobalStreamThread does.
package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// hooks let tests inject failures at the points that matter for
// exactly-once: after the transaction's records are flushed but before it
// commits, and after it committed but before local state is committed.
type hooks struct {
	beforeTxnCommit func() error
	// afterTxnCommit gets the number of changelog records the committed
	// transaction holds.
	afterTxnCommit func(changelogRecords int64) error
}

// errCrash is returned by a hook to make the engine stop as if killed: no
// commit, no flush of local state, tasks closed dirty.
var errCrash = errors.New("streamgen: simulated crash")

// State is the engine state, named as Kafka Streams names them.
type State int32

const (
	Created State = iota
	Rebalancing
	Running
	PendingShutdown
	NotRunning
	PendingError
	Error
)

func (s State) String() string {
	switch s {
	case Created:
		return "CREATED"
	case Rebalancing:
		return "REBALANCING"
	case Running:
		return "RUNNING"
	case PendingShutdown:
		return "PENDING_SHUTDOWN"
	case NotRunning:
		return "NOT_RUNNING"
	case PendingError:
		return "PENDING_ERROR"
	case Error:
		return "ERROR"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Engine runs a topology on Kafka.
type Engine struct {
	tp  engine.Topology
	cfg Config
	log *slog.Logger

	state atomic.Int32

	// set up by setup()
	parts      map[string]int // partition count of every topic the topology touches
	partsMu    sync.Mutex
	sourceSubs []*engine.SubTopology
	taskParts  map[int]int     // sub-topology → task count
	changelogs map[string]bool // changelog topics (read-only after setup)
	internal   []internalTopic // the internal topics setup planned
	instanceID string
	unlock     func()
	// shared holds the changelogged Pebble stores of the instance's tasks
	// (sgstate.SharedDB), nil when they have DBs of their own; open
	// from after lockStateDir to the end of Run (then closed, not nil).
	shared *sgstate.SharedDB
	base   *kgo.Client // admin and metadata

	mu       sync.Mutex
	restored map[engine.TaskID]int64
	workers  []*worker

	lastRecord   atomic.Int64 // unix nanos of the last polled record
	processed    atomic.Int64
	commits      atomic.Int64
	aborts       atomic.Int64
	taskLocks    sync.Map // TaskID → *sync.Mutex: one opener of a task's state at a time
	runningSeen  atomic.Bool
	runningSince atomic.Int64 // unix nanos of the last move to RUNNING
	restoreNanos atomic.Int64 // time spent consuming changelogs

	// global runs the global tables (nil without any); set before the
	// first worker starts, read-only afterwards.
	global        *globalThread
	globalApplied atomic.Int64 // records of global topics applied

	met *engineMetrics // counters published for scrapes (metrics.go)

	bad badRecords // bad records skipped and dead-lettered (badinput.go)

	iq iqState // interactive queries (query.go)
}

// New creates an engine for tp. It does not contact Kafka. It applies
// cfg's defaults (EnsureDefaults) and rejects a configuration that Validate
// finds wrong, naming every problem.
func New(topology *sgstream.Topology, cfg Config) (*Engine, error) {
	tp := (*engine.Handle)(topology).Topology()
	cfg.EnsureDefaults(tp.AppID())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ApplicationID != tp.AppID() {
		// Internal topic names are derived from the builder's app id, so
		// the topology must be rebuilt under the overriding id.
		return nil, fmt.Errorf("%w: topology was built for application id %q, engine configured with %q", ErrConfig, tp.AppID(), cfg.ApplicationID)
	}
	if err := cfg.applyStoreMemory(); err != nil {
		return nil, err
	}
	e := &Engine{tp: tp, cfg: cfg, log: cfg.Logger, restored: map[engine.TaskID]int64{}}
	e.met = newEngineMetrics(e)
	if cfg.Metrics != nil {
		if err := e.met.register(cfg.Metrics); err != nil {
			return nil, fmt.Errorf("%w: metrics: %w", ErrConfig, err)
		}
	}
	return e, nil
}

// Config is the engine's configuration with its defaults applied.
func (e *Engine) Config() Config { return e.cfg }

// DefaultStateDir is the state directory used when none is configured.
func DefaultStateDir(appID string) string {
	return filepath.Join(os.TempDir(), "streamgen", appID)
}

// State returns the engine's current state.
func (e *Engine) State() State { return State(e.state.Load()) }

// Ready reports whether the engine runs with every task restored
// (sgquery.Readiness: the query endpoint's GET /ready).
func (e *Engine) Ready() bool { return e.State() == Running }

func (e *Engine) setState(s State) {
	old := State(e.state.Swap(int32(s)))
	if old != s {
		e.log.Info("state change", "from", old.String(), "to", s.String())
	}
}

// RestoredRecords is the number of changelog records restored for task id
// since the engine started (all assignments of the task summed).
func (e *Engine) RestoredRecords(id sgstream.TaskID) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.restored[id]
}

// TotalRestored is the number of changelog records restored for all tasks.
func (e *Engine) TotalRestored() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var n int64
	for _, v := range e.restored {
		n += v
	}
	return n
}

func (e *Engine) addRestored(id engine.TaskID, n int64) {
	e.mu.Lock()
	e.restored[id] += n
	e.mu.Unlock()
}

// Processed is the number of input records processed.
func (e *Engine) Processed() int64 { return e.processed.Load() }

// Run runs the engine until ctx ends (then it commits and closes cleanly),
// until IdleExit elapses without records, or until a fatal error.
func (e *Engine) Run(ctx context.Context) (err error) {
	e.state.Store(int32(Created))
	e.log.Info("state change", "from", "", "to", Created.String())
	defer func() {
		if e.shared != nil {
			// After every worker closed its stores, which flushed them.
			if cerr := e.shared.Close(); cerr != nil {
				e.log.Warn("closing the shared state store db", "error", cerr.Error())
			}
		}
		if e.unlock != nil {
			e.unlock()
		}
		if e.base != nil {
			e.base.Close()
		}
		e.logTotals()
		if err != nil {
			e.setState(Error)
		} else {
			e.setState(NotRunning)
		}
	}()
	if err := e.lockStateDir(); err != nil {
		return err
	}
	if err := e.openSharedDB(); err != nil {
		return err
	}
	if err := e.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting: a clean shutdown
		}
		return err
	}
	for i, hook := range e.cfg.OnStart {
		if err := hook(ctx); err != nil {
			return fmt.Errorf("streamgen: on_start hook %d: %w", i+1, err)
		}
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.lastRecord.Store(time.Now().UnixNano())

	// The global goroutine stops after the workers (they read its stores)
	// and commits last, as Kafka Streams stops its GlobalStreamThread.
	globalCtx, stopGlobal := context.WithCancel(context.Background())
	globalDone := make(chan error, 1)
	if e.global != nil {
		go func() {
			err := e.global.run(globalCtx)
			if err != nil {
				cancel(err)
			}
			globalDone <- err
		}()
	} else {
		globalDone <- nil
	}
	endGlobal := func(clean bool) error {
		stopGlobal()
		gerr := <-globalDone
		if e.global == nil {
			return nil
		}
		if cerr := e.global.close(clean && gerr == nil); gerr == nil {
			gerr = cerr
		}
		return gerr
	}
	defer stopGlobal()

	// Workers stop on their own context, ended only after the state moved
	// to PENDING_SHUTDOWN, so the log tells the shutdown in order.
	workCtx, stopWorkers := context.WithCancelCause(context.Background())
	defer stopWorkers(nil)
	var wg sync.WaitGroup
	errs := make([]error, e.cfg.Workers)
	for i := 0; i < e.cfg.Workers; i++ {
		w, err := newWorker(e, i)
		if err != nil {
			stopWorkers(err)
			wg.Wait()
			endGlobal(false)
			return err
		}
		e.mu.Lock()
		e.workers = append(e.workers, w)
		e.mu.Unlock()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := e.runWorker(workCtx, w, i); err != nil {
				errs[i] = err
				cancel(err)
			}
		}(i)
	}
	if e.cfg.IdleExit > 0 {
		go e.watchIdle(runCtx, cancel)
	}
	go e.watchState(runCtx)
	<-runCtx.Done()
	cause := context.Cause(runCtx)
	if errors.Is(cause, errCrash) {
		stopWorkers(errCrash)
		wg.Wait()
		endGlobal(false)
		return errCrash
	}
	e.setState(PendingShutdown)
	stopWorkers(cause)
	wg.Wait()
	errs = append(errs, endGlobal(true))
	return errors.Join(errs...)
}

var errIdle = errors.New("idle")

// watchIdle ends the run once every worker is running its tasks and no
// record arrived for IdleExit.
func (e *Engine) watchIdle(ctx context.Context, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if e.State() != Running {
			continue
		}
		// Idle since the last record and since the group settled (a
		// rebalance may still be handing out partitions with input).
		since := max(e.lastRecord.Load(), e.runningSince.Load())
		if time.Since(time.Unix(0, since)) >= e.cfg.IdleExit {
			e.log.Info("no new records, stopping", "idle", e.cfg.IdleExit.String(), "processed", e.processed.Load())
			cancel(errIdle)
			return
		}
	}
}

// watchState moves between REBALANCING and RUNNING as the workers'
// assignments settle.
func (e *Engine) watchState(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		e.mu.Lock()
		ready := len(e.workers) == e.cfg.Workers
		for _, w := range e.workers {
			ready = ready && w.settled.Load()
		}
		e.mu.Unlock()
		st := e.State()
		if ready && st == Rebalancing {
			e.runningSince.Store(time.Now().UnixNano())
			e.setState(Running)
			e.runningSeen.Store(true)
		} else if !ready && st == Running {
			e.setState(Rebalancing)
		}
	}
}

// openSharedDB opens the Pebble DB that the tasks' changelogged stores
// share, in <state dir>/pebble (sgstate.SharedDB): one set of memtables and
// Pebble's fixed buffers for all of them in place of one per store. Not
// when Pebble options ask for a WAL, which every store would then need.
func (e *Engine) openSharedDB() error {
	var o sgstate.PebbleOptions
	if e.cfg.Pebble != nil {
		o = *e.cfg.Pebble
	}
	if o.WAL || o.Sync {
		return nil
	}
	o.Fingerprint = "" // each store records its own
	db, err := sgstate.OpenSharedDB(e.cfg.StateDir, o, e.log.With("store", sgstate.SharedDBDir))
	if err != nil {
		return err
	}
	e.shared = db
	return nil
}

// taskLock serialises opening a task's state between workers of this
// process (a task moving from one worker to another).
func (e *Engine) taskLock(id engine.TaskID) *sync.Mutex {
	m, _ := e.taskLocks.LoadOrStore(id, &sync.Mutex{})
	return m.(*sync.Mutex)
}
