package sgstream

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// TypedWindowStore is a typed view of a sgstate.WindowStore. Keys go through
// the key serde, so the store's key bytes, order and changelog are Kafka's;
// values through the value serde. It is the general window store wrapper:
// windowed aggregations use it with TimestampedValueSerde values (Kafka's
// TimestampedWindowStore layout), stream-stream joins can use it with plain
// values.
//
// Values handed to callbacks are decoded copies the callback may keep. A
// TypedWindowStore reuses encoding buffers, so it belongs to one task.
type TypedWindowStore[K, V any] struct {
	Store      sgstate.WindowStore
	Key        serdes.Serde[K]
	Value      serdes.Serde[V]
	kbuf, vbuf []byte
}

// NewTypedWindowStore wraps s.
func NewTypedWindowStore[K, V any](s sgstate.WindowStore, key serdes.Serde[K], value serdes.Serde[V]) *TypedWindowStore[K, V] {
	return &TypedWindowStore[K, V]{Store: s, Key: key, Value: value}
}

func (s *TypedWindowStore[K, V]) keyBytes(key K) ([]byte, error) {
	return encodeFor(s.Store.Name(), "key", s.Key, &s.kbuf, key)
}

func (s *TypedWindowStore[K, V]) decode(b []byte) (V, error) {
	return decodeFor(s.Store.Name(), s.Value, b)
}

// Fetch returns the value of key's window starting at start. With
// duplicates retained, it is the last one put.
func (s *TypedWindowStore[K, V]) Fetch(key K, start int64) (v V, found bool, err error) {
	kb, err := s.keyBytes(key)
	if err != nil {
		return v, false, err
	}
	b, ok, err := viewWindow(s.Store, kb, start)
	if err != nil || !ok {
		return v, false, err
	}
	v, err = s.decode(b)
	return v, err == nil, err
}

// viewWindow returns the value of key's window starting at start, a view
// when the store offers one (sgstate.WindowViewer: the value is decoded at
// once, a copy would be garbage), else a copy.
func viewWindow(ws sgstate.WindowStore, key []byte, start int64) ([]byte, bool, error) {
	if vw, ok := ws.(sgstate.WindowViewer); ok {
		return vw.View(key, start)
	}
	return getWindow(ws, key, start)
}

// getWindow is WindowGetter.Get, or a one-window backward fetch (the last
// of duplicates) for a store without it.
func getWindow(ws sgstate.WindowStore, key []byte, start int64) ([]byte, bool, error) {
	if g, ok := ws.(sgstate.WindowGetter); ok {
		return g.Get(key, start)
	}
	return fetchOneWindow(ws, key, start)
}

// fetchOneWindow is getWindow's fallback, apart so that the variables its
// callback sets escape to the heap only when it runs.
func fetchOneWindow(ws sgstate.WindowStore, key []byte, start int64) (v []byte, found bool, err error) {
	err = ws.BackwardFetch(key, start, start, func(_ int64, b []byte) error {
		v, found = bytes.Clone(b), true
		return errStop
	})
	if err == errStop {
		err = nil
	}
	return v, found, err
}

// encodeFor appends v to *buf (reused between calls) with ser, naming the
// store and what was encoded (key or value) on error.
func encodeFor[T any](store, what string, ser serdes.Serde[T], buf *[]byte, v T) ([]byte, error) {
	b, err := ser.Append((*buf)[:0], v)
	if err != nil {
		return nil, fmt.Errorf("%w: store %q: serialize %s: %w", ErrProcessing, store, what, err)
	}
	*buf = b
	return nonNil(b), nil // an empty encoding is a value, nil a delete
}

// decodeFor decodes a stored value with ser, naming the store on error.
func decodeFor[T any](store string, ser serdes.Serde[T], b []byte) (T, error) {
	v, err := ser.Decode(b)
	if err != nil {
		return v, fmt.Errorf("%w: store %q: decode value: %w", ErrProcessing, store, err)
	}
	return v, nil
}

// errStop ends a store iteration early; it never leaves this package.
var errStop = fmt.Errorf("streamgen: stop iteration")

// Put stores value for key's window starting at start.
func (s *TypedWindowStore[K, V]) Put(key K, start int64, value V) error {
	kb, err := s.keyBytes(key)
	if err != nil {
		return err
	}
	vb, err := encodeFor(s.Store.Name(), "value", s.Value, &s.vbuf, value)
	if err != nil {
		return err
	}
	return s.Store.Put(kb, start, vb)
}

// Delete removes key's window starting at start.
func (s *TypedWindowStore[K, V]) Delete(key K, start int64) error {
	kb, err := s.keyBytes(key)
	if err != nil {
		return err
	}
	return s.Store.Put(kb, start, nil)
}

// FetchRange visits key's windows with start in [from, to], ascending.
func (s *TypedWindowStore[K, V]) FetchRange(key K, from, to int64, fn func(start int64, value V) error) error {
	return s.fetchRange(key, from, to, false, fn)
}

// BackwardFetchRange visits key's windows with start in [from, to],
// descending.
func (s *TypedWindowStore[K, V]) BackwardFetchRange(key K, from, to int64, fn func(start int64, value V) error) error {
	return s.fetchRange(key, from, to, true, fn)
}

func (s *TypedWindowStore[K, V]) fetchRange(key K, from, to int64, backward bool, fn func(int64, V) error) error {
	kb, err := s.keyBytes(key)
	if err != nil {
		return err
	}
	// The key buffer is reused by fn's own store calls; keep a copy.
	kb = append([]byte(nil), kb...)
	visit := func(start int64, b []byte) error {
		v, err := s.decode(b)
		if err != nil {
			return err
		}
		return fn(start, v)
	}
	if backward {
		return s.Store.BackwardFetch(kb, from, to, visit)
	}
	return s.Store.Fetch(kb, from, to, visit)
}

// FetchAll visits every key's windows with start in [from, to], ascending by
// start, then by serialized key.
func (s *TypedWindowStore[K, V]) FetchAll(from, to int64, fn func(key K, start int64, value V) error) error {
	return s.Store.FetchAll(from, to, func(kb []byte, start int64, b []byte) error {
		k, err := s.Key.Decode(kb)
		if err != nil {
			return fmt.Errorf("%w: store %q: decode key: %w", ErrProcessing, s.Store.Name(), err)
		}
		v, err := s.decode(b)
		if err != nil {
			return err
		}
		return fn(k, start, v)
	})
}

// TimestampedValue is a value with its timestamp, Kafka's
// ValueAndTimestamp: aggregations store the largest timestamp of the
// records that made the value, and forward it as the record timestamp.
type TimestampedValue[V any] struct {
	Value     V
	Timestamp int64
}

// TimestampedValueSerde writes a TimestampedValue as Kafka's
// ValueAndTimestampSerializer does: the timestamp, 8 bytes big-endian,
// then the value bytes. Window store changelogs are thereby the same as a
// Java application's.
type TimestampedValueSerde[V any] struct {
	Inner serdes.Serde[V]
}

// Append appends the timestamp and the value.
func (s TimestampedValueSerde[V]) Append(dst []byte, v TimestampedValue[V]) ([]byte, error) {
	dst = binary.BigEndian.AppendUint64(dst, uint64(v.Timestamp))
	return s.Inner.Append(dst, v.Value)
}

// Decode reads a timestamp and a value.
func (s TimestampedValueSerde[V]) Decode(b []byte) (TimestampedValue[V], error) {
	if len(b) < 8 {
		return TimestampedValue[V]{}, fmt.Errorf("streamgen: timestamped value has %d bytes, want at least 8", len(b))
	}
	v, err := s.Inner.Decode(b[8:])
	return TimestampedValue[V]{Value: v, Timestamp: int64(binary.BigEndian.Uint64(b))}, err
}

// TypedSessionStore is a typed view of a sgstate.SessionStore. Values are
// stored as the value bytes alone, as in Kafka's session stores (a session's
// timestamp is its end).
type TypedSessionStore[K, V any] struct {
	Store      sgstate.SessionStore
	Key        serdes.Serde[K]
	Value      serdes.Serde[V]
	kbuf, vbuf []byte
}

// NewTypedSessionStore wraps s.
func NewTypedSessionStore[K, V any](s sgstate.SessionStore, key serdes.Serde[K], value serdes.Serde[V]) *TypedSessionStore[K, V] {
	return &TypedSessionStore[K, V]{Store: s, Key: key, Value: value}
}

func (s *TypedSessionStore[K, V]) keyBytes(key K) ([]byte, error) {
	return encodeFor(s.Store.Name(), "key", s.Key, &s.kbuf, key)
}

func (s *TypedSessionStore[K, V]) decode(b []byte) (V, error) {
	return decodeFor(s.Store.Name(), s.Value, b)
}

// FindSessions visits key's sessions with end >= earliestEnd and start <=
// latestStart, ascending by end then start (Kafka's findSessions).
func (s *TypedSessionStore[K, V]) FindSessions(key K, earliestEnd, latestStart int64, fn func(start, end int64, value V) error) error {
	kb, err := s.keyBytes(key)
	if err != nil {
		return err
	}
	kb = append([]byte(nil), kb...)
	return s.Store.FindSessions(kb, earliestEnd, latestStart, func(start, end int64, b []byte) error {
		v, err := s.decode(b)
		if err != nil {
			return err
		}
		return fn(start, end, v)
	})
}

// FetchSession returns the value of key's session [start, end].
func (s *TypedSessionStore[K, V]) FetchSession(key K, start, end int64) (v V, found bool, err error) {
	err = s.FindSessions(key, end, start, func(st, e int64, value V) error {
		if st == start && e == end {
			v, found = value, true
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	return v, found, err
}

// Put stores value for key's session [start, end].
func (s *TypedSessionStore[K, V]) Put(key K, start, end int64, value V) error {
	kb, err := s.keyBytes(key)
	if err != nil {
		return err
	}
	vb, err := encodeFor(s.Store.Name(), "value", s.Value, &s.vbuf, value)
	if err != nil {
		return err
	}
	return s.Store.Put(kb, start, end, vb)
}

// Remove deletes key's session [start, end].
func (s *TypedSessionStore[K, V]) Remove(key K, start, end int64) error {
	kb, err := s.keyBytes(key)
	if err != nil {
		return err
	}
	return s.Store.Remove(kb, start, end)
}

// FetchEndedBetween visits every session with end in [from, to], ascending
// by end, then serialized key, then start.
func (s *TypedSessionStore[K, V]) FetchEndedBetween(from, to int64, fn func(key K, start, end int64, value V) error) error {
	return s.Store.FetchEndedBetween(from, to, func(kb []byte, start, end int64, b []byte) error {
		k, err := s.Key.Decode(kb)
		if err != nil {
			return fmt.Errorf("%w: store %q: decode key: %w", ErrProcessing, s.Store.Name(), err)
		}
		v, err := s.decode(b)
		if err != nil {
			return err
		}
		return fn(k, start, end, v)
	})
}

// emitMetaKey is the metadata key of the last emitted window close time;
// Kafka keys processor metadata by store name, and the store is ours.
const emitMetaKey = "sgstream.emit.last_close_time"

// emitState is the emit-on-close bookkeeping shared by the three windowed
// aggregations (Kafka's lastEmitWindowCloseTime and TimeTracker).
type emitState struct {
	t *task
	// store names the aggregation's store, the key of its last emission
	// in the task's processor metadata (committed with the offsets).
	store string
	// meta is where the last emission is committed (every built-in store
	// is a sgstate.MetadataStore); nil for a custom store without it,
	// which keeps that time in memory only, so a restarted task may emit
	// closed windows again.
	meta     sgstate.MetadataStore
	interval int64
	next     int64
	// last is the window close time of the last emission, or -1 (Kafka's
	// NO_TIMESTAMP) if there never was one.
	last int64
}

func newEmitState(t *task, store sgstate.Store) (*emitState, error) {
	e := &emitState{t: t, store: store.Name(), last: -1, interval: emitInterval(t.cfg.WindowEmitInterval, engine.DefaultWindowEmitInterval)}
	if m, ok := store.(sgstate.MetadataStore); ok {
		e.meta = m
		b, found, err := m.Metadata(emitMetaKey)
		if err != nil {
			return nil, fmt.Errorf("streamgen: store %q: read emit metadata: %w", store.Name(), err)
		}
		if found && len(b) == 8 {
			e.last = int64(binary.BigEndian.Uint64(b))
		}
	} else if _, ok := t.procMeta[e.store]; !ok {
		t.Logger().Warn("store keeps no metadata and no commit carried any; windows closed before a restart may be emitted again", "store", store.Name())
	}
	// The local store and the offset commit may each be ahead: the store
	// when the commit is older than its state, the commit when the task
	// moved here without its state. The later emission wins, as Kafka
	// Streams merges processor metadata by maximum.
	if v, ok := t.procMeta[e.store]; ok && v > e.last {
		e.last = v
	}
	return e, nil
}

// due applies Kafka's throttle and reports whether closeTime advanced past
// the last emission (shouldEmitFinal).
func (e *emitState) due(closeTime int64) bool {
	now := e.t.WallClock()
	if now < e.next {
		return false
	}
	e.next = now + e.interval
	return e.last == -1 || e.last < closeTime
}

// emitted records an emission at closeTime.
func (e *emitState) emitted(closeTime int64) error {
	e.last = closeTime
	e.t.setProcessorMetadata(e.store, closeTime)
	if e.meta == nil {
		return nil
	}
	return e.meta.SetMetadata(emitMetaKey, binary.BigEndian.AppendUint64(nil, uint64(closeTime)))
}
