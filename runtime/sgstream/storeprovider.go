package sgstream

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// GlobalPartition is the partition of a global task's TaskID. A global
// sub-topology (one that materializes a GlobalKTable) runs as a single task
// that reads every partition of its topic, so its stores are full replicas,
// as Kafka Streams' GlobalStreamThread keeps them.
const GlobalPartition int32 = -1

// IsGlobal reports whether id is a global task.
func (id TaskID) IsGlobal() bool { return id.Partition == GlobalPartition }

// IsGlobal reports whether s is a global sub-topology: one whose source
// topics are read as global tables. Engines run such a sub-topology as one
// task over all partitions, outside the consumer group, and before any
// other task processes records.
func (tp *Topology) IsGlobal(s *SubTopology) bool {
	for _, name := range s.Topics {
		if ts := tp.topics[name]; ts != nil && ts.Role == TopicGlobal {
			return true
		}
	}
	return false
}

// GlobalStoreProvider is implemented by store providers that host global
// stores (the test driver and the Kafka engine). Tasks reach global stores
// through it rather than through their own stores, because a global store
// belongs to the global task and is shared, read-only, by every task.
type GlobalStoreProvider interface {
	GlobalStore(name string) (sgstate.Store, error)
}

// GlobalStore returns the global store called name. It fails when the
// task's store provider hosts no global stores.
func (t *Task) GlobalStore(name string) (sgstate.Store, error) {
	gp, ok := t.cfg.Stores.(GlobalStoreProvider)
	if !ok {
		return nil, fmt.Errorf("streamgen: task %s: store provider has no global stores (wanted %q)", t.ID, name)
	}
	return gp.GlobalStore(name)
}

// StoreDir is the directory of a persistent store of task t under a state
// directory: <dir>/<task id>/<store>, or <dir>/global/<store> for global
// stores. The Kafka engine uses the same layout, so a state directory
// written by the test driver can be inspected the same way.
func StoreDir(stateDir string, id TaskID, store string) string {
	task := id.String()
	if id.IsGlobal() {
		task = "global"
	}
	return filepath.Join(stateDir, task, store)
}

// NewBuiltinStore creates an uninitialised built-in store for spec:
// in-memory when persistent is false, on Pebble otherwise. pebble may be
// nil for defaults; spec.Fingerprint is applied to it.
func NewBuiltinStore(spec *StoreSpec, persistent bool, pebble *sgstate.PebbleOptions) (sgstate.Store, error) {
	var opts *sgstate.PebbleOptions
	if persistent {
		o := sgstate.PebbleOptions{}
		if pebble != nil {
			o = *pebble
		}
		if spec.Fingerprint != "" {
			o.Fingerprint = spec.Fingerprint
		}
		opts = &o
	}
	switch spec.Kind {
	case KeyValueStore:
		if opts == nil {
			return sgstate.NewMemoryKeyValue(spec.Name), nil
		}
		return sgstate.NewPebbleKeyValue(spec.Name, opts), nil
	case WindowStore, SessionStore:
		return newBuiltinTimeStore(spec, opts)
	}
	return nil, fmt.Errorf("streamgen: store %q: unknown store kind %d", spec.Name, spec.Kind)
}

// OpenStore implements StoreProvider for the test driver: built-in stores
// are in memory unless the driver has a state directory (StateDir), then
// on Pebble under <dir>/<task id>/<store> (spec.InMemory stores stay in
// memory). spec.Custom builds user-written stores. Logged stores write their
// changelog to <app id>-<store>-changelog on the task's partition, where
// tests can read it with Output.
func (d *TestDriver) OpenStore(t *Task, spec *StoreSpec) (sgstate.Store, error) {
	persistent := d.cfg.StateDir != "" && !spec.InMemory
	var s sgstate.Store
	if spec.Custom != nil {
		s = spec.Custom()
		if s == nil {
			return nil, fmt.Errorf("streamgen: store %q: custom store constructor returned nil", spec.Name)
		}
		if s.Name() != spec.Name {
			return nil, fmt.Errorf("streamgen: store %q: custom store is named %q", spec.Name, s.Name())
		}
	} else {
		var err error
		if s, err = NewBuiltinStore(spec, persistent, nil); err != nil {
			return nil, err
		}
	}
	ctx := NewStoreContext(t, spec, d.cfg.Logger)
	if d.cfg.StateDir != "" {
		ctx.Dir = StoreDir(d.cfg.StateDir, t.ID, spec.Name)
		if err := os.MkdirAll(ctx.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("streamgen: store %q: %w", spec.Name, err)
		}
	}
	if err := s.Init(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// NewStoreContext is the StoreContext of spec's store in task t, without
// Dir: a changelog writer for logged, non-global stores that sends to
// <app id>-<store>-changelog on the task's partition through the task's
// collector, and the timestamp of the record being processed (stream time
// in punctuations) for changelog records.
func NewStoreContext(t *Task, spec *StoreSpec, logger *slog.Logger) *sgstate.StoreContext {
	ctx := &sgstate.StoreContext{Logger: logger, RecordTimestamp: t.contextTimestamp}
	if spec.Logged && !t.ID.IsGlobal() {
		ctx.Changelog = &taskChangelog{t: t, topic: toponame.Changelog(t.topo.appID, spec.Name)}
	}
	return ctx
}

// contextTimestamp is Kafka Streams' record-context timestamp: the current
// record's, or stream time in a punctuation.
func (t *Task) contextTimestamp() int64 {
	if r := t.Current(); r != nil {
		return r.Timestamp
	}
	if t.streamTime < 0 {
		return 0
	}
	return t.streamTime
}

type taskChangelog struct {
	t     *Task
	topic string
}

func (c *taskChangelog) Log(key, value []byte, ts int64) {
	// The collector copies what it keeps; a failed send surfaces at commit
	// in the engine, and the driver's collector never fails.
	_ = c.t.Send(c.topic, c.t.ID.Partition, key, value, ts, nil, nil)
}

// GlobalStore implements GlobalStoreProvider: it returns the store of the
// global task that materializes name, creating that task (with empty
// stores) if no record of its topic was piped yet.
func (d *TestDriver) GlobalStore(name string) (sgstate.Store, error) {
	for _, s := range d.tp.SubTopologies() {
		if !d.tp.IsGlobal(s) {
			continue
		}
		for _, st := range s.Stores {
			if st != name {
				continue
			}
			t, err := d.taskFor(TaskID{Sub: s.ID, Partition: GlobalPartition})
			if err != nil {
				return nil, err
			}
			return t.Store(name)
		}
	}
	return nil, fmt.Errorf("streamgen: test driver: no global table materializes store %q", name)
}

// taskFor returns the driver's task id, creating and initialising it on
// first use.
func (d *TestDriver) taskFor(id TaskID) (*Task, error) {
	if t, ok := d.tasks[id]; ok {
		return t, nil
	}
	t, err := d.tp.NewTask(id, TaskConfig{
		Collector: (*driverCollector)(d), Stores: d, Logger: d.cfg.Logger,
		Deserialization: d.cfg.Deserialization, Processing: d.cfg.Processing, DeadLetterTopic: d.cfg.DeadLetterTopic,
		InvalidTime: d.cfg.InvalidTime, Now: func() int64 { return d.wall },
		CacheMaxBytes: d.cfg.CacheMaxBytes,
		// TopologyTestDriver forces both emit throttles to 0.
		WindowEmitInterval: NoEmitThrottle, OuterJoinEmitInterval: NoEmitThrottle,
	})
	if err != nil {
		return nil, err
	}
	// Registered before Init: a node's init may look up a global store,
	// which creates the global task, which must not recurse into this one.
	d.tasks[id] = t
	d.order = append(d.order, id)
	if err := t.Init(); err != nil {
		delete(d.tasks, id)
		d.order = d.order[:len(d.order)-1]
		return nil, err
	}
	return t, nil
}

// newBuiltinTimeStore creates window and session stores; opts nil means
// in memory.
func newBuiltinTimeStore(spec *StoreSpec, opts *sgstate.PebbleOptions) (sgstate.Store, error) {
	if spec.Retention <= 0 {
		return nil, fmt.Errorf("streamgen: store %q: window and session stores need a retention", spec.Name)
	}
	if spec.Kind == SessionStore {
		o := sgstate.SessionOptions{Retention: spec.Retention.Milliseconds()}
		if opts == nil {
			return sgstate.NewMemorySession(spec.Name, o), nil
		}
		return sgstate.NewPebbleSession(spec.Name, o, opts), nil
	}
	o := sgstate.WindowOptions{Retention: spec.Retention.Milliseconds(), WindowSize: spec.WindowSize.Milliseconds(), RetainDuplicates: spec.RetainDuplicates}
	if opts == nil {
		return sgstate.NewMemoryWindow(spec.Name, o), nil
	}
	return sgstate.NewPebbleWindow(spec.Name, o, opts), nil
}
