package sgstream

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// Processor is a user-written processing step (Kafka Streams' Processor
// API, api.Processor). A new Processor is made for every task by the
// constructor given to Process, so it may keep per-task state in fields.
type Processor[KIn, VIn, KOut, VOut any] interface {
	// Init is called once per task before the first record, with the
	// context the processor forwards through and finds its stores in.
	Init(ctx *ProcessorContext[KOut, VOut]) error
	// Process handles one record. Forwarded records go downstream
	// synchronously, depth-first, before Forward returns.
	Process(r Record[KIn, VIn]) error
	// Close is called when the task closes.
	Close() error
}

// RecordMetadata is where the record being processed came from.
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64
}

// ErrKeyChanged is returned when a ProcessValues processor forwards a
// record with a key other than the input's (Kafka's FixedKeyRecord makes
// that impossible by type; here it is checked).
var ErrKeyChanged = errors.New("streamgen: process_values processor changed the key")

// ProcessorContext is what a Processor sees of its task.
type ProcessorContext[KOut, VOut any] struct {
	t      *task
	name   string
	next   recordNode[KOut, VOut]
	stores map[string]bool
	// check, for ProcessValues, fails a forward whose key differs from the
	// key of the record being processed.
	check func(r Record[KOut, VOut]) error
}

// Forward sends r to the downstream nodes.
func (c *ProcessorContext[KOut, VOut]) Forward(r Record[KOut, VOut]) error {
	if c.check != nil {
		if err := c.check(r); err != nil {
			return err
		}
	}
	return c.next.Process(r)
}

// StreamTime is the task's stream time (math.MinInt64 before the first
// record).
func (c *ProcessorContext[KOut, VOut]) StreamTime() int64 { return c.t.StreamTime() }

// WallClock is the task's wall-clock time in ms (the test driver's clock
// under the test driver).
func (c *ProcessorContext[KOut, VOut]) WallClock() int64 { return c.t.WallClock() }

// ScheduleStreamTime registers a stream-time punctuation (aligned to 0,
// fired with the current stream time when it reaches the next multiple of
// interval, missed intervals skipped). Records forwarded from it have no
// RecordMetadata.
func (c *ProcessorContext[KOut, VOut]) ScheduleStreamTime(interval time.Duration, fn func(ts int64) error) {
	c.t.ScheduleStreamTime(interval, fn)
}

// ScheduleWallClock registers a wall-clock punctuation: first at now +
// interval, then every interval.
func (c *ProcessorContext[KOut, VOut]) ScheduleWallClock(interval time.Duration, fn func(ts int64) error) {
	c.t.ScheduleWallClock(interval, fn)
}

// StateStore returns one of the stores declared for this step. Built-in
// stores are sgstate.KeyValueStore, sgstate.WindowStore or
// sgstate.SessionStore; custom stores are whatever their constructor
// returns.
func (c *ProcessorContext[KOut, VOut]) StateStore(name string) (sgstate.Store, error) {
	if !c.stores[name] {
		return nil, fmt.Errorf("streamgen: processor %q: store %q is not declared for this step", c.name, name)
	}
	return c.t.Store(name)
}

// RecordMetadata is the topic, partition and offset of the input record
// being processed; ok is false in punctuations.
func (c *ProcessorContext[KOut, VOut]) RecordMetadata() (md RecordMetadata, ok bool) {
	r := c.t.Current()
	if r == nil {
		return md, false
	}
	return RecordMetadata{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}, true
}

// TaskID names a task: a sub-topology (Sub) and a partition. Its String
// form, 1_3, is what the engine logs and what names the task's state
// directory.
type TaskID = engine.TaskID

// TaskID is the task running the processor.
func (c *ProcessorContext[KOut, VOut]) TaskID() TaskID { return c.t.id }

// AddStateStore declares a store that is not created by a DSL operator: a
// store of the spec's `stores:` section, used by process steps, built-in
// (spec.Kind) or user-written (spec.Custom). Steps that use it list its
// name (Process's stores).
func AddStateStore(b *Builder, spec StoreSpec) { b.declareStore(spec) }

// MarkOwnLayout records that the store a DSL operator declared keeps keys
// or values Kafka Streams would not have written the same way (msgpack
// records), so its changelog carries streamgen's layout marker and a
// changelog without it is refused on restore (see StoreSpec.OwnLayout).
// The generator knows the store's types, the operator only its serdes,
// hence a separate call after the operator's.
func MarkOwnLayout(b *Builder, store string) {
	spec, ok := b.stores[store]
	if !ok {
		b.errorf("store %q: marked as streamgen's own layout but never declared", store)
		return
	}
	spec.OwnLayout = true
}

// Process runs a user processor on every record (KStream#process). The
// processor may change the key, so generated code repartitions before a
// later grouping or join. stores names the stores the processor may use;
// they must be declared (AddStateStore or by a DSL operator).
func Process[KIn, VIn, KOut, VOut any](s Stream[KIn, VIn], name string, ctor func() Processor[KIn, VIn, KOut, VOut], stores []string) Stream[KOut, VOut] {
	return process(s, name, "process", ctor, stores, nil)
}

// ProcessValues runs a user processor that keeps the key
// (KStream#processValues): forwarding a record with another key fails with
// ErrKeyChanged, so no repartition is ever needed after it.
func ProcessValues[K, VIn, VOut any](s Stream[K, VIn], name string, ctor func() Processor[K, VIn, K, VOut], stores []string) Stream[K, VOut] {
	return process(s, name, "process_values", ctor, stores, func(cur *Record[K, VIn]) func(Record[K, VOut]) error {
		eq := keyEqual[K]()
		return func(r Record[K, VOut]) error {
			// In a punctuation there is no input record to compare with:
			// Kafka's FixedKeyRecords come from earlier input, which a
			// processor may keep and forward later.
			if cur.Timestamp == noRecord {
				return nil
			}
			if r.KeyNull != cur.KeyNull || (!r.KeyNull && !eq(r.Key, cur.Key)) {
				return fmt.Errorf("%w: node %q", ErrKeyChanged, name)
			}
			return nil
		}
	})
}

// noRecord marks that no input record is being processed.
const noRecord = -1 << 63

func process[KIn, VIn, KOut, VOut any](s Stream[KIn, VIn], name, op string, ctor func() Processor[KIn, VIn, KOut, VOut], stores []string, fixed func(cur *Record[KIn, VIn]) func(Record[KOut, VOut]) error) Stream[KOut, VOut] {
	info := s.b.g.Process(name, op, s.info, stores)
	declared := map[string]bool{}
	for _, st := range stores {
		declared[st] = true
	}
	out, next := newStream[KOut, VOut](s.b, info)
	var p Processor[KIn, VIn, KOut, VOut]
	cur := &Record[KIn, VIn]{Timestamp: noRecord}
	s.b.onInit(info, func(t *task) error {
		p = ctor()
		if p == nil {
			return fmt.Errorf("streamgen: node %q: processor constructor returned nil", name)
		}
		ctx := &ProcessorContext[KOut, VOut]{t: t, name: name, next: next, stores: declared}
		if fixed != nil {
			ctx.check = fixed(cur)
		}
		t.onClose(p.Close)
		return p.Init(ctx)
	})
	s.to(nodeFunc[KIn, VIn](func(r Record[KIn, VIn]) error {
		*cur = r
		err := p.Process(r)
		cur.Timestamp = noRecord
		return err
	}))
	return out
}

// keyEqual compares keys: == for comparable types, reflect.DeepEqual for
// the others (byte-slice keys). Only ProcessValues uses it, once per
// forward.
func keyEqual[K any]() func(a, b K) bool {
	if reflect.TypeFor[K]().Comparable() {
		return func(a, b K) bool { return any(a) == any(b) || reflect.DeepEqual(a, b) }
	}
	return func(a, b K) bool { return reflect.DeepEqual(a, b) }
}

// onClose registers fn to run when the task closes.
func (t *task) onClose(fn func() error) { t.closers = append(t.closers, fn) }
