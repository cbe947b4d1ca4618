package sgstream

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"sort"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// ErrProcessing is matched by errors.Is for every error a task returns while
// processing a record; the error names the topic, partition and offset.
var ErrProcessing = errors.New("streamgen: processing failed")

// ErrDeserialization is matched by errors.Is for records whose key or value
// bytes could not be decoded.
var ErrDeserialization = errors.New("streamgen: deserialization failed")

// ErrInvalidTimestamp is matched by errors.Is for records whose extracted
// timestamp is negative under the fail policy.
var ErrInvalidTimestamp = errors.New("streamgen: invalid timestamp")

// emitInterval resolves a engine.TaskConfig emit throttle in ms: 0 (unset) is def,
// negative (engine.NoEmitThrottle) is 0.
func emitInterval(d, def time.Duration) int64 {
	switch {
	case d == 0:
		return def.Milliseconds()
	case d < 0:
		return 0
	}
	return d.Milliseconds()
}

// RawRecord is a record as it comes from or goes to Kafka: what tests pipe
// into the test driver and read from it (runtime/sgtest), and what the
// dead-letter topic receives.
type RawRecord = engine.RawRecord

// Policy is an error-handling policy: what a task does with a record that
// fails to decode or to process (the spec's on_error).
type Policy = engine.Policy

// The error policies.
const (
	PolicyFail       = engine.PolicyFail
	PolicyContinue   = engine.PolicyContinue
	PolicyDeadLetter = engine.PolicyDeadLetter
)

// TimestampPolicy handles negative extracted timestamps (the spec's
// invalid_timestamp).
type TimestampPolicy = engine.TimestampPolicy

// The invalid-timestamp policies. TimestampDeadLetter writes the record
// to the dead-letter topic, as PolicyDeadLetter does for records that fail
// to decode or process.
const (
	TimestampFail          = engine.TimestampFail
	TimestampSkip          = engine.TimestampSkip
	TimestampPartitionTime = engine.TimestampPartitionTime
	TimestampDeadLetter    = engine.TimestampDeadLetter
)

// task runs one sub-topology for one partition (engine.Task).
type task struct {
	id      engine.TaskID
	topo    *topology
	cfg     engine.TaskConfig
	b       *Builder
	stores  map[string]sgstate.Store
	inited  bool
	current *RawRecord

	streamTime int64
	// src is the source of the record being processed, or of the last one:
	// consecutive records mostly come from one topic, so Process looks the
	// source up by topic only when the topic changes.
	src *sourceEntry

	streamPunct []*punctuation
	wallPunct   []*punctuation
	stats       engine.TaskStats

	// closers run when the task closes, before its stores close (user
	// processors' Close).
	closers []func() error
	// cache is the record cache, nil without one (see kvstore.go).
	cache *recordCache
	// ctxTs is the record-context timestamp while hasCtxTs: that of a
	// cached update being flushed (cachedBase.enterContext).
	ctxTs    int64
	hasCtxTs bool
	// fwd are the forward counters of this task's nodes (metrics.go).
	fwd []nodeCounter
	// procMeta is the processor metadata committed with the offsets
	// (engine.Progress.Processor): resumed from TaskConfig.Resume, updated
	// by emit-on-close aggregations as they emit.
	procMeta map[string]int64
}

type punctuation struct {
	interval int64
	next     int64
	fn       func(ts int64) error
}

// NewTask implements engine.Topology.
func (tp *topology) NewTask(id engine.TaskID, cfg engine.TaskConfig) (engine.Task, error) {
	t, err := tp.newTask(id, cfg)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// newTask builds a task for sub-topology id.Sub on partition id.Partition.
func (tp *topology) newTask(id engine.TaskID, cfg engine.TaskConfig) (*task, error) {
	if cfg.Collector == nil || cfg.Stores == nil {
		return nil, fmt.Errorf("streamgen: task %s: collector and store provider are required", id)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = func() int64 { return time.Now().UnixMilli() }
	}
	t := &task{id: id, topo: tp, cfg: cfg, stores: map[string]sgstate.Store{},
		streamTime: math.MinInt64}
	b := newBuilder(tp.appID, t)
	tp.build(b)
	if len(b.errs) > 0 {
		return nil, joinErrors(b.errs)
	}
	t.b = b
	t.resume(cfg.Resume)
	return t, nil
}

// resume takes over the progress the task's last owner committed: its
// partition times (and so its stream time, their maximum, as Kafka
// Streams' PartitionGroup sets it) and its processor metadata.
func (t *task) resume(p engine.Progress) {
	for topic, pt := range p.PartitionTimes {
		src := t.b.sources[topic]
		if src == nil || pt < 0 {
			continue
		}
		src.partitionTime, src.hasPartitionTime = pt, true
		t.streamTime = max(t.streamTime, pt)
	}
	if len(p.Processor) > 0 {
		t.procMeta = maps.Clone(p.Processor)
	}
}

// Progress implements engine.Task.
func (t *task) Progress() engine.Progress {
	p := engine.Progress{Processor: maps.Clone(t.procMeta)}
	for _, topic := range t.topo.subs[t.id.Sub].Topics {
		if src := t.b.sources[topic]; src != nil && src.hasPartitionTime {
			if p.PartitionTimes == nil {
				p.PartitionTimes = map[string]int64{}
			}
			p.PartitionTimes[topic] = src.partitionTime
		}
	}
	return p
}

// setProcessorMetadata records a processor metadata value to commit.
func (t *task) setProcessorMetadata(key string, v int64) {
	if t.procMeta == nil {
		t.procMeta = map[string]int64{}
	}
	t.procMeta[key] = v
}

// Init opens the task's stores and initialises its stateful nodes.
func (t *task) Init() error {
	if t.inited {
		return nil
	}
	sub := t.topo.subs[t.id.Sub]
	for _, name := range sub.Stores {
		spec := t.topo.stores[name]
		if spec == nil {
			return fmt.Errorf("streamgen: task %s: store %q used but never declared", t.id, name)
		}
		s, err := t.cfg.Stores.OpenStore(t, spec)
		if err != nil {
			return fmt.Errorf("streamgen: task %s: open store %q: %w", t.id, name, err)
		}
		t.stores[name] = t.wrapCache(spec, s)
	}
	for _, in := range t.b.inits {
		if t.topo.nodes[in.node].Sub != t.id.Sub {
			continue
		}
		if err := in.fn(t); err != nil {
			return fmt.Errorf("streamgen: task %s: init node %q: %w", t.id, t.b.g.Nodes[in.node].Name, err)
		}
	}
	t.inited = true
	return nil
}

// Store returns an open store of this task.
func (t *task) Store(name string) (sgstate.Store, error) {
	s, ok := t.stores[name]
	if !ok {
		return nil, fmt.Errorf("streamgen: task %s: store %q is not open in this task", t.id, name)
	}
	return s, nil
}

// Stores returns the task's open stores by name.
func (t *task) Stores() map[string]sgstate.Store { return t.stores }

// Logger is the task's logger.
func (t *task) Logger() *slog.Logger { return t.cfg.Logger }

// StreamTime is the task's stream time: the largest timestamp it has
// processed, or math.MinInt64 before the first record.
func (t *task) StreamTime() int64 { return t.streamTime }

// Current is the raw record being processed (nil in punctuations).
func (t *task) Current() *RawRecord { return t.current }

// WallClock is the task's wall-clock time in ms.
func (t *task) WallClock() int64 { return t.cfg.Now() }

// Send writes a record through the task's collector.
func (t *task) Send(topic string, partition int32, key, value []byte, ts int64, headers []Header, partitionKey []byte) error {
	return t.cfg.Collector.Send(topic, partition, key, value, ts, headers, partitionKey)
}

// Drop counts a record an operator dropped (late, null key …).
func (t *task) Drop() { t.stats.Dropped++ }

// ScheduleStreamTime registers a stream-time punctuation: it fires when
// stream time reaches the next multiple of interval (aligned to 0), with the
// current stream time, and skips missed intervals as Kafka Streams does.
func (t *task) ScheduleStreamTime(interval time.Duration, fn func(ts int64) error) {
	iv := interval.Milliseconds()
	if iv <= 0 {
		iv = 1
	}
	t.streamPunct = append(t.streamPunct, &punctuation{interval: iv, next: math.MinInt64, fn: fn})
}

// ScheduleWallClock registers a wall-clock punctuation: first at now +
// interval, then every interval, missed intervals skipped.
func (t *task) ScheduleWallClock(interval time.Duration, fn func(ts int64) error) {
	iv := interval.Milliseconds()
	if iv <= 0 {
		iv = 1
	}
	t.wallPunct = append(t.wallPunct, &punctuation{interval: iv, next: t.cfg.Now() + iv, fn: fn})
}

func (t *task) punctuateStreamTime() error {
	for _, p := range t.streamPunct {
		if p.next == math.MinInt64 {
			// Aligned to 0: the first schedule is the multiple of the
			// interval at or after the first known stream time.
			p.next = ceilDiv(t.streamTime, p.interval) * p.interval
		}
		if t.streamTime >= p.next {
			if err := p.fn(t.streamTime); err != nil {
				return err
			}
			p.next = (t.streamTime/p.interval + 1) * p.interval
		}
	}
	return nil
}

// PunctuateWallClock fires the wall-clock punctuations that are due.
func (t *task) PunctuateWallClock() error {
	now := t.cfg.Now()
	for _, p := range t.wallPunct {
		if now >= p.next {
			if err := t.guard(func() error { return p.fn(now) }); err != nil {
				return err
			}
			p.next = now + p.interval - (now-p.next)%p.interval
		}
	}
	return nil
}

// ID is the task's id.
func (t *task) ID() engine.TaskID { return t.id }

// Stats are the task's counters so far.
func (t *task) Stats() engine.TaskStats { return t.stats }

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}

// Process runs one raw record through the task. Errors are handled by the
// task's policies; an error is returned only under the fail policy (or when
// the dead-letter write fails), and it names topic, partition and offset.
func (t *task) Process(raw *RawRecord) error {
	if !t.inited {
		if err := t.Init(); err != nil {
			return err
		}
	}
	src := t.src
	if src == nil || src.topic != raw.Topic {
		var ok bool
		if src, ok = t.b.sources[raw.Topic]; !ok {
			return fmt.Errorf("streamgen: task %s: no source reads topic %q", t.id, raw.Topic)
		}
		t.src = src
	}
	t.current = raw
	defer func() { t.current = nil }()
	t.stats.Processed++
	err := t.guard(func() error { return src.process(t, raw) })
	if err != nil {
		policy := t.cfg.Processing
		if errors.Is(err, ErrDeserialization) {
			policy = t.cfg.Deserialization
		}
		if stopsTask(err) {
			policy = PolicyFail
			if errors.Is(err, ErrInvalidTimestamp) && t.cfg.InvalidTime == TimestampDeadLetter {
				policy = PolicyDeadLetter
			}
		}
		if herr := t.handle(policy, raw, err); herr != nil {
			return herr
		}
		t.countCause(err)
	}
	if len(t.streamPunct) == 0 {
		return nil
	}
	// Punctuations have no current record (no record metadata), as in
	// Kafka Streams.
	t.current = nil
	return t.guard(t.punctuateStreamTime)
}

// countCause counts a bad record that was skipped or dead-lettered under
// its cause, for the summaries that say why records went missing.
func (t *task) countCause(err error) {
	switch {
	case errors.Is(err, ErrDeserialization):
		t.stats.BadDeserialization++
	case errors.Is(err, ErrInvalidTimestamp):
		t.stats.BadTimestamp++
	}
}

// stopsTask reports whether err stops the task under every policy: these
// are not errors of one record that skipping or dead-lettering could
// contain. A negative timestamp under the fail timestamp policy is the
// user's explicit choice to stop (under the dead_letter timestamp policy
// Process dead-letters it instead), and a full suppress buffer configured to
// shut down is Kafka's shutDownWhenFull, a StreamsException rather than a
// processing error: skipping the record would silently lose the result the
// buffer exists to hold back.
func stopsTask(err error) bool {
	return errors.Is(err, ErrInvalidTimestamp) || errors.Is(err, ErrSuppressBufferFull)
}

// guard turns a panic in user code into an error with its stack, so no
// panic reaches a user.
func (t *task) guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		}
	}()
	return fn()
}

func (t *task) handle(policy Policy, raw *RawRecord, err error) error {
	where := fmt.Sprintf("topic %q partition %d offset %d", raw.Topic, raw.Partition, raw.Offset)
	switch policy {
	case PolicyContinue:
		t.stats.Skipped++
		t.cfg.Logger.Warn("skipping bad record", "topic", raw.Topic, "partition", raw.Partition, "offset", raw.Offset, "error", err.Error())
		return nil
	case PolicyDeadLetter:
		headers := deadLetterHeaders(raw, err)
		if serr := t.cfg.Collector.Send(t.cfg.DeadLetterTopic, -1, raw.Key, raw.Value, raw.Timestamp, headers, raw.Key); serr != nil {
			return fmt.Errorf("streamgen: %s: writing to dead-letter topic %q: %w (original error: %v)", where, t.cfg.DeadLetterTopic, serr, err)
		}
		t.stats.DeadLettered++
		return nil
	default:
		if errors.Is(err, ErrProcessing) || errors.Is(err, ErrDeserialization) || errors.Is(err, ErrInvalidTimestamp) {
			return fmt.Errorf("%s: %w", where, err)
		}
		return fmt.Errorf("%s: %w: %w", where, ErrProcessing, err)
	}
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// observe updates stream time and the partition time of the topic of the
// record being processed (Process's source) with the record's extracted
// timestamp; it applies the invalid-timestamp policy first. It reports
// false when the record must be skipped.
func (t *task) observe(topic string, ts int64) (int64, bool, error) {
	src := t.src
	if src == nil || src.topic != topic {
		// Only source nodes call observe, under Process, so src is the
		// record's source; a stray caller must not move another topic's
		// partition time.
		src = &sourceEntry{}
	}
	if ts < 0 {
		switch t.cfg.InvalidTime {
		case TimestampSkip:
			t.skipInvalidTime(topic, ts)
			return 0, false, nil
		case TimestampPartitionTime:
			if !src.hasPartitionTime || src.partitionTime < 0 {
				t.skipInvalidTime(topic, ts)
				return 0, false, nil
			}
			ts = src.partitionTime
		default:
			return 0, false, fmt.Errorf("%w: extracted timestamp %d is negative", ErrInvalidTimestamp, ts)
		}
	}
	if !src.hasPartitionTime || ts > src.partitionTime {
		src.partitionTime, src.hasPartitionTime = ts, true
	}
	if ts > t.streamTime {
		t.streamTime = ts
	}
	return ts, true, nil
}

// skipInvalidTime counts and logs a record skipped for its negative
// timestamp. It is a bad record skipped like one under the continue policy,
// so it counts in Skipped, and the log names where it is, as that policy's
// log does.
func (t *task) skipInvalidTime(topic string, ts int64) {
	t.stats.Skipped++
	t.stats.BadTimestamp++
	attrs := []any{"topic", topic, "timestamp", ts}
	if r := t.current; r != nil {
		attrs = append(attrs, "partition", r.Partition, "offset", r.Offset)
	}
	t.cfg.Logger.Warn("skipping record with negative timestamp", attrs...)
}

// Commit makes the task's store writes durable and visible as committed
// state, with the given changelog checkpoint. The engine calls it after the
// Kafka transaction committed; the test driver after every record.
func (t *task) Commit(checkpoint map[string]int64) error {
	if err := t.FlushCaches(); err != nil {
		return err
	}
	for _, name := range t.sortedStoreNames() {
		s := t.stores[name]
		if err := s.Flush(); err != nil {
			return fmt.Errorf("streamgen: task %s: flush store %q: %w", t.id, name, err)
		}
		if tx, ok := s.(sgstate.Transactional); ok {
			if err := tx.Commit(checkpoint); err != nil {
				return fmt.Errorf("streamgen: task %s: commit store %q: %w", t.id, name, err)
			}
		}
	}
	return nil
}

// UncommittedBytes sums what the task's stores hold uncommitted.
func (t *task) UncommittedBytes() int64 {
	var n int64
	for _, s := range t.stores {
		if u, ok := s.(sgstate.UncommittedSizer); ok {
			n += u.UncommittedBytes()
		}
	}
	return n
}

// Abort drops the task's store writes since the last commit.
func (t *task) Abort() error {
	var errs []error
	for _, name := range t.sortedStoreNames() {
		if tx, ok := t.stores[name].(sgstate.Transactional); ok {
			if err := tx.Abort(); err != nil {
				errs = append(errs, fmt.Errorf("streamgen: task %s: abort store %q: %w", t.id, name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Close closes the task's stores.
func (t *task) Close() error {
	var errs []error
	for _, c := range t.closers {
		if err := c(); err != nil {
			errs = append(errs, fmt.Errorf("streamgen: task %s: close: %w", t.id, err))
		}
	}
	t.closers = nil
	for _, name := range t.sortedStoreNames() {
		if err := t.stores[name].Close(); err != nil {
			errs = append(errs, fmt.Errorf("streamgen: task %s: close store %q: %w", t.id, name, err))
		}
	}
	t.stores = map[string]sgstate.Store{}
	t.inited = false
	return errors.Join(errs...)
}

func (t *task) sortedStoreNames() []string {
	names := make([]string, 0, len(t.stores))
	for n := range t.stores {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func joinErrors(errs []error) error { return errors.Join(errs...) }
