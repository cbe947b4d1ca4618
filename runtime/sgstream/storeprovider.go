package sgstream

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// IsGlobal reports whether s is a global sub-topology: one whose source
// topics are read as global tables. Engines run such a sub-topology as one
// task over all partitions, outside the consumer group, and before any
// other task processes records.
func (tp *topology) IsGlobal(s *engine.SubTopology) bool {
	for _, name := range s.Topics {
		if ts := tp.topics[name]; ts != nil && ts.Role == engine.TopicGlobal {
			return true
		}
	}
	return false
}

// GlobalStore returns the global store called name. It fails when the
// task's store provider hosts no global stores.
func (t *task) GlobalStore(name string) (sgstate.Store, error) {
	gp, ok := t.cfg.Stores.(engine.GlobalStoreProvider)
	if !ok {
		return nil, fmt.Errorf("streamgen: task %s: store provider has no global stores (wanted %q)", t.id, name)
	}
	return gp.GlobalStore(name)
}

// OpenStore implements engine.StoreProvider for the test driver: built-in stores
// are in memory unless the driver has a state directory (StateDir), then
// on Pebble under <dir>/<task id>/<store> (spec.InMemory stores stay in
// memory). spec.Custom builds user-written stores. Logged stores write their
// changelog to <app id>-<store>-changelog on the task's partition, where
// tests can read it with Output.
func (d *testDriver) OpenStore(et engine.Task, spec *StoreSpec) (sgstate.Store, error) {
	t := et.(*task)
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
		if s, err = engine.NewBuiltinStore(spec, persistent, nil); err != nil {
			return nil, err
		}
	}
	ctx := t.StoreContext(spec, d.cfg.Logger)
	if d.cfg.StateDir != "" {
		ctx.Dir = engine.StoreDir(d.cfg.StateDir, t.id, spec.Name)
		if err := os.MkdirAll(ctx.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("streamgen: store %q: %w", spec.Name, err)
		}
	}
	if err := s.Init(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// StoreContext implements engine.Task: the StoreContext of spec's store in
// task t, without Dir: a changelog writer for logged, non-global stores
// that sends to <app id>-<store>-changelog on the task's partition through
// the task's collector, and the timestamp of the record being processed
// (stream time in punctuations) for changelog records.
func (t *task) StoreContext(spec *StoreSpec, logger *slog.Logger) *sgstate.StoreContext {
	ctx := &sgstate.StoreContext{Logger: logger, RecordTimestamp: t.contextTimestamp, TimestampedValues: spec.Timestamped}
	if spec.Logged && !t.id.IsGlobal() {
		c := &taskChangelog{t: t, topic: toponame.Changelog(t.topo.appID, spec.Name)}
		if spec.OwnLayout {
			c.headers = engine.OwnLayoutHeaders()
		}
		ctx.Changelog = c
	}
	return ctx
}

// contextTimestamp is Kafka Streams' record-context timestamp: the current
// record's, or stream time in a punctuation.
func (t *task) contextTimestamp() int64 {
	if t.hasCtxTs {
		return t.ctxTs
	}
	if r := t.Current(); r != nil {
		return r.Timestamp
	}
	if t.streamTime < 0 {
		return 0
	}
	return t.streamTime
}

type taskChangelog struct {
	t     *task
	topic string
	// headers is the layout marker of an own-layout store (shared by all
	// its records, tombstones included), nil for Kafka Streams' layouts.
	headers []Header
}

func (c *taskChangelog) Log(key, value []byte, ts int64) {
	// The collector copies what it keeps; a failed send surfaces at commit
	// in the engine, and the driver's collector never fails.
	_ = c.t.Send(c.topic, c.t.id.Partition, key, value, ts, c.headers, nil)
}

// GlobalStore implements engine.GlobalStoreProvider: it returns the store of the
// global task that materializes name, creating that task (with empty
// stores) if no record of its topic was piped yet.
func (d *testDriver) GlobalStore(name string) (sgstate.Store, error) {
	for _, s := range d.tp.SubTopologies() {
		if !d.tp.IsGlobal(s) {
			continue
		}
		for _, st := range s.Stores {
			if st != name {
				continue
			}
			t, err := d.taskFor(engine.TaskID{Sub: s.ID, Partition: engine.GlobalPartition})
			if err != nil {
				return nil, err
			}
			return t.Store(name)
		}
	}
	return nil, fmt.Errorf("streamgen: test driver: no global table materializes store %q", name)
}

// driverEmitInterval is a DriverConfig emit throttle as TaskConfig's: 0,
// TopologyTestDriver's forced setting, is engine.NoEmitThrottle.
func driverEmitInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return engine.NoEmitThrottle
	}
	return d
}

// cacheOf is the record cache the task id shares with the other tasks of
// its partition, or nil without CacheMaxBytes. Global tasks have none
// (wrapCache never caches their stores).
func (d *testDriver) cacheOf(id engine.TaskID) *sgstate.Cache {
	if d.cfg.CacheMaxBytes <= 0 || id.IsGlobal() {
		return nil
	}
	if d.caches == nil {
		d.caches = map[int32]*sgstate.Cache{}
	}
	c := d.caches[id.Partition]
	if c == nil {
		c = sgstate.NewCache(d.cfg.CacheMaxBytes)
		d.caches[id.Partition] = c
	}
	return c
}

// taskFor returns the driver's task id, creating and initialising it on
// first use.
func (d *testDriver) taskFor(id engine.TaskID) (*task, error) {
	if t, ok := d.tasks[id]; ok {
		return t, nil
	}
	t, err := d.tp.newTask(id, engine.TaskConfig{
		Collector: (*driverCollector)(d), Stores: d, Logger: d.cfg.Logger,
		Deserialization: d.cfg.Deserialization, Processing: d.cfg.Processing, DeadLetterTopic: d.cfg.DeadLetterTopic,
		InvalidTime: d.cfg.InvalidTime, Now: func() int64 { return d.wall },
		CacheMaxBytes:      d.cfg.CacheMaxBytes,
		WindowEmitInterval: driverEmitInterval(d.cfg.WindowEmitInterval), OuterJoinEmitInterval: driverEmitInterval(d.cfg.OuterJoinEmitInterval),
	})
	if err != nil {
		return nil, err
	}
	if c := d.cacheOf(id); c != nil {
		// Set before Init opens the stores, so wrapCache puts them behind
		// the partition's shared cache instead of one of the task's own.
		t.cache = &recordCache{c: c}
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
