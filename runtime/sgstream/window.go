package sgstream

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// Windowed aggregations: Kafka Streams' TimeWindowedKStream (tumbling,
// hopping and sliding windows) and SessionWindowedKStream, with the exact
// window assignment, lateness inequalities, forward order and record
// timestamps of Kafka Streams 4.x (KStreamWindowAggregate,
// KStreamSlidingWindowAggregate, KStreamSessionWindowAggregate).
//
// Every operator keeps its own observed stream time (the largest timestamp
// it has seen, including the record being processed), as Kafka does; it is
// not persisted, so after a restart it starts again from the first record,
// exactly like Kafka's processors.

// EmitStrategy says when a windowed aggregation forwards results (KIP-825).
type EmitStrategy int

const (
	// EmitOnUpdate forwards every update of a window (Kafka's default,
	// EmitStrategy.onWindowUpdate()).
	EmitOnUpdate EmitStrategy = iota
	// EmitOnClose forwards each window once, when it closes
	// (EmitStrategy.onWindowClose()): after a record advanced the window
	// close time, the store is scanned for the windows that closed since the
	// last scan. The close time of the last scan is kept as store metadata,
	// committed with the store, so a restarted task does not emit again.
	EmitOnClose
)

func (e EmitStrategy) String() string {
	switch e {
	case EmitOnUpdate:
		return "on_update"
	case EmitOnClose:
		return "on_close"
	}
	return fmt.Sprintf("EmitStrategy(%d)", int(e))
}

// timeFirstRetentionSlack is added to the retention of the store of an
// EmitOnClose aggregation. Kafka Streams backs those with its time-ordered
// ("time first") RocksDB stores, which return entries with timestamp >=
// observedStreamTime - retention, one millisecond more than its other window
// and session stores (>= observedStreamTime - retention + 1,
// AbstractDualSchemaRocksDBSegmentedBytesStore#getActualFrom). The sgstate
// stores implement the latter rule; one extra millisecond of retention turns
// it into the former, so a window that closes exactly when it expires is
// still emitted, as in Kafka.
const timeFirstRetentionSlack = time.Millisecond

// TimeWindows are tumbling (Advance 0 or equal to Size) or hopping windows
// [start, start+Size) aligned to the epoch; Kafka's TimeWindows.
type TimeWindows struct {
	Size    time.Duration
	Advance time.Duration // 0 = Size (tumbling)
	Grace   time.Duration
	// Retention of the store; 0 = Size + Grace, Kafka's default. It may not
	// be smaller than Size + Grace.
	Retention time.Duration
}

func (w TimeWindows) sizeMs() int64 { return w.Size.Milliseconds() }

func (w TimeWindows) advanceMs() int64 {
	if w.Advance == 0 {
		return w.Size.Milliseconds()
	}
	return w.Advance.Milliseconds()
}

// Validate reports invalid windows with Kafka's rules: 0 < advance <= size,
// grace >= 0, retention >= size + grace.
func (w TimeWindows) Validate() error {
	s, a := w.sizeMs(), w.advanceMs()
	switch {
	case s <= 0:
		return fmt.Errorf("streamgen: time windows: size must be at least 1ms, got %v", w.Size)
	case a <= 0 || a > s:
		return fmt.Errorf("streamgen: time windows: advance must be in (0, size], got %v with size %v", w.Advance, w.Size)
	case w.Grace < 0:
		return fmt.Errorf("streamgen: time windows: grace must not be negative, got %v", w.Grace)
	case w.Retention != 0 && w.Retention < w.Size+w.Grace:
		return fmt.Errorf("streamgen: time windows: retention %v is smaller than size plus grace (%v)", w.Retention, w.Size+w.Grace)
	}
	return nil
}

// StoreRetention is the window store retention: Retention, or Size + Grace.
func (w TimeWindows) StoreRetention() time.Duration {
	if w.Retention != 0 {
		return w.Retention
	}
	return w.Size + w.Grace
}

// WindowStarts returns the starts of the windows that contain ts, ascending
// (Kafka's TimeWindows.windowsFor): every multiple of the advance s with
// s <= ts < s + size and s >= 0, so records near 0 fall in fewer windows.
func (w TimeWindows) WindowStarts(ts int64) []int64 {
	return w.appendWindowStarts(nil, ts)
}

func (w TimeWindows) appendWindowStarts(dst []int64, ts int64) []int64 {
	size, adv := w.sizeMs(), w.advanceMs()
	start := max(0, ts-size+adv) / adv * adv
	for ; start <= ts; start += adv {
		dst = append(dst, start)
	}
	return dst
}

// windowEnd is start + size, saturated as Kafka's TimeWindow end is.
func windowEnd(start, size int64) int64 {
	if start > math.MaxInt64-size {
		return math.MaxInt64
	}
	return start + size
}

// SlidingWindows are Kafka's SlidingWindows (KIP-450): windows of
// TimeDifference with both bounds inclusive, created only where records
// are.
type SlidingWindows struct {
	TimeDifference time.Duration
	Grace          time.Duration
	// Retention of the store; 0 = 2*TimeDifference + Grace, Kafka's default
	// (a record may need the windows that start up to two time differences
	// before it). It may not be smaller than that.
	Retention time.Duration
}

// Validate reports invalid windows with Kafka's rules.
func (w SlidingWindows) Validate() error {
	switch {
	case w.TimeDifference < 0 || w.TimeDifference.Milliseconds() < 0:
		return fmt.Errorf("streamgen: sliding windows: time difference must not be negative, got %v", w.TimeDifference)
	case w.Grace < 0:
		return fmt.Errorf("streamgen: sliding windows: grace must not be negative, got %v", w.Grace)
	case w.Retention != 0 && w.Retention < 2*w.TimeDifference+w.Grace:
		return fmt.Errorf("streamgen: sliding windows: retention %v is smaller than twice the time difference plus grace (%v)", w.Retention, 2*w.TimeDifference+w.Grace)
	}
	return nil
}

// StoreRetention is Retention, or 2*TimeDifference + Grace.
func (w SlidingWindows) StoreRetention() time.Duration {
	if w.Retention != 0 {
		return w.Retention
	}
	return 2*w.TimeDifference + w.Grace
}

// SessionWindows are Kafka's SessionWindows: a session is [first record,
// last record], both inclusive, and a record joins every session that ends
// no more than Gap before it or starts no more than Gap after it.
type SessionWindows struct {
	Gap   time.Duration
	Grace time.Duration
	// Retention of the store; 0 = Gap + Grace, Kafka's default. It may not
	// be smaller than that.
	Retention time.Duration
}

// Validate reports invalid windows with Kafka's rules.
func (w SessionWindows) Validate() error {
	switch {
	case w.Gap.Milliseconds() <= 0:
		return fmt.Errorf("streamgen: session windows: gap must be at least 1ms, got %v", w.Gap)
	case w.Grace < 0:
		return fmt.Errorf("streamgen: session windows: grace must not be negative, got %v", w.Grace)
	case w.Retention != 0 && w.Retention < w.Gap+w.Grace:
		return fmt.Errorf("streamgen: session windows: retention %v is smaller than gap plus grace (%v)", w.Retention, w.Gap+w.Grace)
	}
	return nil
}

// StoreRetention is Retention, or Gap + Grace.
func (w SessionWindows) StoreRetention() time.Duration {
	if w.Retention != 0 {
		return w.Retention
	}
	return w.Gap + w.Grace
}

// TimeWindowedStream is a grouped stream windowed by time or sliding
// windows, ready for CountWindowed, ReduceWindowed or AggregateWindowed
// (Kafka's TimeWindowedKStream, which sliding windows also return).
type TimeWindowedStream[K, V any] struct {
	Grouped GroupedStream[K, V]
	Name    string
	// Exactly one of Time and Sliding is set.
	Time    *TimeWindows
	Sliding *SlidingWindows
}

// SessionWindowedStream is a grouped stream windowed by sessions, ready for
// CountSession, ReduceSession or AggregateSession.
type SessionWindowedStream[K, V any] struct {
	Grouped GroupedStream[K, V]
	Name    string
	Windows SessionWindows
}

// WindowedBy windows a grouped stream by tumbling or hopping windows. Like
// Kafka's windowedBy it adds no node; name labels build errors.
func WindowedBy[K, V any](g GroupedStream[K, V], name string, w TimeWindows) TimeWindowedStream[K, V] {
	if err := w.Validate(); err != nil {
		g.Stream.b.errorf("windowed_by %q: %v", name, err)
	}
	return TimeWindowedStream[K, V]{Grouped: g, Name: name, Time: &w}
}

// WindowedBySliding windows a grouped stream by sliding windows.
func WindowedBySliding[K, V any](g GroupedStream[K, V], name string, w SlidingWindows) TimeWindowedStream[K, V] {
	if err := w.Validate(); err != nil {
		g.Stream.b.errorf("windowed_by %q: %v", name, err)
	}
	return TimeWindowedStream[K, V]{Grouped: g, Name: name, Sliding: &w}
}

// WindowedBySession windows a grouped stream by session windows.
func WindowedBySession[K, V any](g GroupedStream[K, V], name string, w SessionWindows) SessionWindowedStream[K, V] {
	if err := w.Validate(); err != nil {
		g.Stream.b.errorf("windowed_by %q: %v", name, err)
	}
	return SessionWindowedStream[K, V]{Grouped: g, Name: name, Windows: w}
}

// WindowStoreOpt adjusts the store of a windowed aggregation or a
// stream-stream join. It is sealed, as DriverOpt is: the constructors below
// are the options there are.
type WindowStoreOpt interface{ applyStore(*StoreSpec) }

type windowStoreOpt func(*StoreSpec)

func (f windowStoreOpt) applyStore(s *StoreSpec) { f(s) }

// WindowStoreInMemory keeps the store in memory (Kafka's in-memory window
// and session stores); it is rebuilt from the changelog on restart.
// Default: persistent (Pebble) under the engine, in memory in the test
// driver without a state directory.
func WindowStoreInMemory() WindowStoreOpt {
	return windowStoreOpt(func(s *StoreSpec) { s.InMemory = true })
}

// WindowStoreNotLogged disables the changelog of the store. Default:
// logged.
func WindowStoreNotLogged() WindowStoreOpt {
	return windowStoreOpt(func(s *StoreSpec) { s.Logged = false })
}

// WindowStoreFingerprint sets the schema fingerprint checked when a
// persistent store is reopened. Default: none (not checked).
func WindowStoreFingerprint(fp string) WindowStoreOpt {
	return windowStoreOpt(func(s *StoreSpec) { s.Fingerprint = fp })
}

// CountWindowed counts the records of each window (Kafka's
// TimeWindowedKStream.count). For time windows records with a null value
// are counted (Kafka skips only null keys there); sliding windows skip null
// values.
func CountWindowed[K, V any](w TimeWindowedStream[K, V], name, store string, emit EmitStrategy, opts ...WindowStoreOpt) Table[Windowed[K], int64] {
	return windowedAggregate(w, name, store, emit, countFuncs[K, V](), serdes.Int64, opts)
}

// ReduceWindowed combines the values of each window with reducer (Kafka's
// TimeWindowedKStream.reduce): the first value of a window is its
// aggregate, later ones are reduced into it.
func ReduceWindowed[K, V any](w TimeWindowedStream[K, V], name, store string, emit EmitStrategy, reducer func(agg, value V) V, opts ...WindowStoreOpt) Table[Windowed[K], V] {
	return windowedAggregate(w, name, store, emit, reduceFuncs[K](reducer), w.Grouped.Value, opts)
}

// AggregateWindowed folds the values of each window into an aggregate that
// starts from init() (Kafka's TimeWindowedKStream.aggregate). aggSerde
// serializes aggregates in the store, its changelog and downstream.
func AggregateWindowed[K, V, VA any](w TimeWindowedStream[K, V], name, store string, emit EmitStrategy, init func() VA, agg func(key K, value V, agg VA) VA, aggSerde serdes.Serde[VA], opts ...WindowStoreOpt) Table[Windowed[K], VA] {
	return windowedAggregate(w, name, store, emit, aggregateFuncs(init, agg, nil), aggSerde, opts)
}

// CountSession counts the records of each session (Kafka's
// SessionWindowedKStream.count); records with a null value count.
func CountSession[K, V any](s SessionWindowedStream[K, V], name, store string, emit EmitStrategy, opts ...WindowStoreOpt) Table[Windowed[K], int64] {
	return sessionAggregate(s, name, store, emit, countFuncs[K, V](), serdes.Int64, opts)
}

// ReduceSession combines the values of each session with reducer; merging
// sessions reduces the later session's aggregate into the earlier one's.
func ReduceSession[K, V any](s SessionWindowedStream[K, V], name, store string, emit EmitStrategy, reducer func(agg, value V) V, opts ...WindowStoreOpt) Table[Windowed[K], V] {
	return sessionAggregate(s, name, store, emit, reduceFuncs[K](reducer), s.Grouped.Value, opts)
}

// AggregateSession folds the values of each session into an aggregate;
// merger combines the aggregates of sessions that a record bridges (Kafka's
// SessionWindowedKStream.aggregate with a Merger).
func AggregateSession[K, V, VA any](s SessionWindowedStream[K, V], name, store string, emit EmitStrategy, init func() VA, agg func(key K, value V, agg VA) VA, merger func(key K, agg1, agg2 VA) VA, aggSerde serdes.Serde[VA], opts ...WindowStoreOpt) Table[Windowed[K], VA] {
	return sessionAggregate(s, name, store, emit, aggregateFuncs(init, agg, merger), aggSerde, opts)
}

// aggFuncs is the aggregation an operator applies, with Kafka's null
// handling: an aggregate may be null (reduce starts from a null aggregate,
// and a user function may return a nil record), and a null aggregate is a
// delete in the store and a tombstone downstream.
type aggFuncs[K, V, VA any] struct {
	init  func() (agg VA, null bool)
	add   func(key K, value V, valueNull bool, agg VA, aggNull bool) (VA, bool)
	merge func(key K, a VA, aNull bool, b VA, bNull bool) (VA, bool)
}

// countFuncs are Kafka's countInitializer, countAggregator and countMerger.
func countFuncs[K, V any]() aggFuncs[K, V, int64] {
	return aggFuncs[K, V, int64]{
		init: func() (int64, bool) { return 0, false },
		add:  func(_ K, _ V, _ bool, agg int64, _ bool) (int64, bool) { return agg + 1, false },
		merge: func(_ K, a int64, _ bool, b int64, _ bool) (int64, bool) {
			return a + b, false
		},
	}
}

// reduceFuncs are Kafka's reduceInitializer (null), aggregatorForReducer
// (the first value becomes the aggregate) and, for sessions,
// mergerForAggregator (merge(a, b) = aggregate b into a).
func reduceFuncs[K, V any](reducer func(agg, value V) V) aggFuncs[K, V, V] {
	return reduceFuncsOf[K](func(agg, v V, _ bool) (V, bool) {
		r := reducer(agg, v)
		return r, isNull(r)
	})
}

// reduceFuncsOf builds the reduce functions from reduce, which combines a
// present aggregate with a value that may be null (vNull) and says whether
// the result is null.
func reduceFuncsOf[K, V any](reduce func(agg, v V, vNull bool) (V, bool)) aggFuncs[K, V, V] {
	add := func(_ K, v V, vNull bool, agg V, aggNull bool) (V, bool) {
		if aggNull {
			return v, vNull
		}
		return reduce(agg, v, vNull)
	}
	return aggFuncs[K, V, V]{
		init: func() (V, bool) {
			var zero V
			return zero, true
		},
		add: add,
		merge: func(k K, a V, aNull bool, b V, bNull bool) (V, bool) {
			return add(k, b, bNull, a, aNull)
		},
	}
}

func aggregateFuncs[K, V, VA any](init func() VA, agg func(K, V, VA) VA, merger func(K, VA, VA) VA) aggFuncs[K, V, VA] {
	return aggregateFuncsOf(init, plainAdder(agg), merger)
}

// aggregateFuncsOf builds the aggregate functions from add, which also
// learns whether the value is null.
func aggregateFuncsOf[K, V, VA any](init func() VA, add func(k K, v V, vNull bool, agg VA) VA, merger func(K, VA, VA) VA) aggFuncs[K, V, VA] {
	f := aggFuncs[K, V, VA]{
		init: func() (VA, bool) {
			v := init()
			return v, isNull(v)
		},
		add: func(k K, v V, vNull bool, a VA, _ bool) (VA, bool) {
			r := add(k, v, vNull, a)
			return r, isNull(r)
		},
	}
	if merger != nil {
		f.merge = func(k K, a VA, _ bool, b VA, _ bool) (VA, bool) {
			r := merger(k, a, b)
			return r, isNull(r)
		}
	}
	return f
}

// plainAdder is an aggregator that reads a null value as V's zero value.
func plainAdder[K, V, VA any](agg func(K, V, VA) VA) func(K, V, bool, VA) VA {
	return func(k K, v V, _ bool, a VA) VA { return agg(k, v, a) }
}

// TimeWindowedSerde serializes a time-windowed key as Kafka's
// TimeWindowedSerializer does: the key bytes followed by the window start,
// 8 bytes big-endian. The end is not written; Decode sets it to start +
// Size (for sliding windows Size is the time difference, and End is then
// the inclusive end).
type TimeWindowedSerde[K any] struct {
	Inner serdes.Serde[K]
	Size  time.Duration
}

// Append appends the key and the window start.
func (s TimeWindowedSerde[K]) Append(dst []byte, w Windowed[K]) ([]byte, error) {
	dst, err := s.Inner.Append(dst, w.Key)
	if err != nil {
		return dst, err
	}
	return binary.BigEndian.AppendUint64(dst, uint64(w.Start)), nil
}

// Decode reads a windowed key written by Append or by Kafka Streams.
func (s TimeWindowedSerde[K]) Decode(b []byte) (Windowed[K], error) {
	if len(b) < 8 {
		return Windowed[K]{}, fmt.Errorf("streamgen: time-windowed key has %d bytes, want at least 8", len(b))
	}
	n := len(b) - 8
	k, err := s.Inner.Decode(b[:n])
	if err != nil {
		return Windowed[K]{}, err
	}
	start := int64(binary.BigEndian.Uint64(b[n:]))
	return Windowed[K]{Key: k, Start: start, End: windowEnd(start, s.Size.Milliseconds())}, nil
}

// PartitionKey returns the base key bytes of a serialized windowed key, so
// windowed results are partitioned like their key (Kafka's
// WindowedStreamPartitioner); it makes the serde a WindowedKeySerde.
func (s TimeWindowedSerde[K]) PartitionKey(_ Windowed[K], keyBytes []byte) []byte {
	if len(keyBytes) < 8 {
		return keyBytes
	}
	return keyBytes[:len(keyBytes)-8]
}

// SessionWindowedSerde serializes a session-windowed key as Kafka's
// SessionWindowedSerializer (SessionKeySchema) does: the key bytes, the end
// and the start, each 8 bytes big-endian.
type SessionWindowedSerde[K any] struct {
	Inner serdes.Serde[K]
}

// Append appends the key, the end and the start.
func (s SessionWindowedSerde[K]) Append(dst []byte, w Windowed[K]) ([]byte, error) {
	dst, err := s.Inner.Append(dst, w.Key)
	if err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(w.End))
	return binary.BigEndian.AppendUint64(dst, uint64(w.Start)), nil
}

// Decode reads a session-windowed key.
func (s SessionWindowedSerde[K]) Decode(b []byte) (Windowed[K], error) {
	if len(b) < 16 {
		return Windowed[K]{}, fmt.Errorf("streamgen: session-windowed key has %d bytes, want at least 16", len(b))
	}
	n := len(b) - 16
	k, err := s.Inner.Decode(b[:n])
	if err != nil {
		return Windowed[K]{}, err
	}
	end := int64(binary.BigEndian.Uint64(b[n:]))
	start := int64(binary.BigEndian.Uint64(b[n+8:]))
	return Windowed[K]{Key: k, Start: start, End: end}, nil
}

// PartitionKey returns the base key bytes of a serialized session key.
func (s SessionWindowedSerde[K]) PartitionKey(_ Windowed[K], keyBytes []byte) []byte {
	if len(keyBytes) < 16 {
		return keyBytes
	}
	return keyBytes[:len(keyBytes)-16]
}

var (
	_ serdes.Serde[Windowed[string]] = TimeWindowedSerde[string]{}
	_ serdes.Serde[Windowed[string]] = SessionWindowedSerde[string]{}
)
