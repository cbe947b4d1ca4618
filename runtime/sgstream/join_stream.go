package sgstream

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/streamgen/streamgen/internal/topograph"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// Stream-stream joins follow KStreamImplJoin, KStreamJoinWindow and
// KStreamKStreamJoin{,LeftSide,RightSide} of Kafka Streams 4.x:
//
//   - each side first runs the join against the other side's window store,
//     then puts its own record into its own store (KStreamJoinWindow
//     forwards before it puts), so a record never sees itself;
//   - both sides share one stream time per task (TimeTracker), advanced by
//     every record that reaches the join, null keys and values included;
//   - expiry is the window stores' business: a fetch returns only entries
//     newer than the store's observed stream time minus its retention, and
//     older puts are dropped;
//   - unmatched left (and, for outer joins, right) records wait in the outer
//     store until their window closes and are emitted by the emission pass
//     that runs before the join of a record carrying the current stream
//     time (KIP-633).

// Side bytes of the outer store keys and values (Kafka's
// TimestampedKeyAndJoinSide and LeftOrRightValue): right sorts before left
// at the same timestamp.
const (
	joinSideRight byte = 0
	joinSideLeft  byte = 1
)

type streamJoin[K, V1, V2, VR any] struct {
	t      *task
	name   string
	kind   JoinKind
	before int64 // ms; the left side fetches [ts-before, ts+after]
	after  int64
	grace  int64
	joiner Joiner[K, V1, V2, VR]
	sd     StreamJoinSerdes[K, V1, V2]
	out    recordNode[K, VR]

	leftStore, rightStore sgstate.WindowStore
	outer                 sgstate.KeyValueStore // nil for inner joins
	// putNulls mirrors Kafka's in-memory window store, whose put of a null
	// value advances its observed stream time; the RocksDB store (Kafka's
	// default) skips such puts entirely.
	putNulls bool

	// The shared TimeTracker of the two sides.
	streamTime int64
	minTime    int64
	nextEmit   int64
	interval   int64

	kbuf, vbuf, obuf []byte
	// leftMatches and rightMatches collect the matches found on each
	// side, reused from record to record (see fetchMatches).
	leftMatches  *matches[V1]
	rightMatches *matches[V2]
}

func joinStreams[K, V1, V2, VR any](left Stream[K, V1], right Stream[K, V2], name string, kind JoinKind, w JoinWindows, joiner Joiner[K, V1, V2, VR], sd StreamJoinSerdes[K, V1, V2], opts []WindowStoreOpt) Stream[K, VR] {
	b := left.b
	info := b.g.StreamJoin(name, sd.StoreName, left.info, right.info, kind == LeftJoin, kind == OuterJoin)
	if err := w.Validate(); err != nil {
		b.errorf("join %q: %v", name, err)
	}
	if kind != InnerJoin && kind != LeftJoin && kind != OuterJoin {
		b.errorf("join %q: unknown join kind %v", name, kind)
	}
	if sd.Key == nil || sd.Left == nil || sd.Right == nil {
		b.errorf("join %q: stream-stream joins need key, left and right serdes", name)
	}
	thisName, otherName, outerName := topograph.StreamJoinStores(name, sd.StoreName, kind == LeftJoin, kind == OuterJoin)
	window := func(store string) StoreSpec {
		s := StoreSpec{Name: store, Kind: WindowStore, Logged: true, RetainDuplicates: true,
			WindowSize: w.Size(), Retention: w.StoreRetention()}
		for _, o := range opts {
			o.applyStore(&s)
		}
		return s
	}
	thisSpec := window(thisName)
	b.declareStore(thisSpec)
	b.declareStore(window(otherName))
	if kind != InnerJoin {
		// Kafka Streams' layout (see store), so a Kafka Streams join's
		// unmatched records can be taken over; generated code marks it
		// as its own when the keys or values are msgpack records.
		// Held in memory: every match looks its own record up in it.
		s := StoreSpec{Name: outerName, Kind: KeyValueStore, Logged: true, Held: true}
		for _, o := range opts {
			o.applyStore(&s)
		}
		b.declareStore(s)
	}

	out, next := newStream[K, VR](b, info)
	j := &streamJoin[K, V1, V2, VR]{
		t: b.task, name: name, kind: kind,
		before: w.Before.Milliseconds(), after: w.After.Milliseconds(), grace: w.Grace.Milliseconds(),
		joiner: joiner, sd: sd, out: next, putNulls: thisSpec.InMemory,
		streamTime: -1, minTime: math.MaxInt64,
	}
	j.leftMatches = newMatches(name, sd.Left.Decode)
	j.rightMatches = newMatches(name, sd.Right.Decode)
	b.onInit(info, func(t *task) error {
		var err error
		if j.leftStore, err = openJoinWindowStore(t, thisName); err != nil {
			return err
		}
		if j.rightStore, err = openJoinWindowStore(t, otherName); err != nil {
			return err
		}
		if kind != InnerJoin {
			s, err := t.Store(outerName)
			if err != nil {
				return err
			}
			kv, ok := s.(sgstate.KeyValueStore)
			if !ok {
				return fmt.Errorf("streamgen: store %q is a %T, not a key-value store", outerName, s)
			}
			j.outer = kv
		}
		j.t = t
		j.interval = emitInterval(t.cfg.OuterJoinEmitInterval, engine.DefaultOuterJoinEmitInterval)
		return nil
	})
	left.to(nodeFunc[K, V1](j.processLeft))
	right.to(nodeFunc[K, V2](j.processRight))
	return out
}

func openJoinWindowStore(t *task, name string) (sgstate.WindowStore, error) {
	s, err := t.Store(name)
	if err != nil {
		return nil, err
	}
	ws, ok := s.(sgstate.WindowStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: store %q is a %T, not a window store", name, s)
	}
	return ws, nil
}

// joinMatch is a record found in the other side's window store.
type joinMatch[V any] struct {
	ts    int64
	value V
}

func (j *streamJoin[K, V1, V2, VR]) forward(key K, keyNull bool, v VR, ts int64, headers []Header) error {
	return j.out.Process(Record[K, VR]{Key: key, KeyNull: keyNull, Value: v, ValueNull: isNull(v), Timestamp: ts, Headers: headers})
}

func (j *streamJoin[K, V1, V2, VR]) keyBytes(key K) ([]byte, error) {
	var err error
	if j.kbuf, err = j.sd.Key.Append(j.kbuf[:0], key); err != nil {
		return nil, fmt.Errorf("%w: join %q: serialize key: %w", ErrProcessing, j.name, err)
	}
	return j.kbuf, nil
}

// encode serializes a record's key and, with value, its side's value into the
// join's buffers, which it takes until release gives them back: a record
// costs no copy of either, and a join nested in the forwarding of another
// (which a topology, being acyclic, never makes) would allocate its own.
// The value is never nil (an empty value is not a null; see nonNil).
func (j *streamJoin[K, V1, V2, VR]) encode(key K, side string, value func(dst []byte) ([]byte, error)) (kb, vb []byte, err error) {
	kb, err = j.keyBytes(key)
	if err != nil {
		return nil, nil, err
	}
	if vb, err = value(j.vbuf[:0]); err != nil {
		return nil, nil, fmt.Errorf("%w: join %q: serialize %s value: %w", ErrProcessing, j.name, side, err)
	}
	j.kbuf, j.vbuf = nil, nil
	return kb, nonNil(vb), nil
}

// release gives encode's buffers back.
func (j *streamJoin[K, V1, V2, VR]) release(kb, vb []byte) {
	j.kbuf, j.vbuf = kb[:0], vb[:0]
}

func (j *streamJoin[K, V1, V2, VR]) processLeft(r Record[K, V1]) error {
	if r.Timestamp > j.streamTime {
		j.streamTime = r.Timestamp
	}
	leftOuter := j.kind != InnerJoin
	if leftOuter && r.KeyNull && !r.ValueNull {
		var none V2
		return j.forward(r.Key, true, j.joiner(r.Key, r.Value, none, MissingRight), r.Timestamp, r.Headers)
	}
	if r.KeyNull || r.ValueNull {
		return j.skip(r.KeyNull, r.Key, r.Timestamp, j.leftStore)
	}
	kb, vb, err := j.encode(r.Key, "left", func(dst []byte) ([]byte, error) { return j.sd.Left.Append(dst, r.Value) })
	if err != nil {
		return err
	}
	defer j.release(kb, vb)

	if r.Timestamp == j.streamTime && j.outer != nil {
		if err := j.emitNonJoined(j.after, r.Headers); err != nil {
			return err
		}
	}
	from, to := max(0, r.Timestamp-j.before), max(0, r.Timestamp+j.after)
	matches, err := fetchMatches(j.rightMatches, j.rightStore, kb, from, to)
	defer matches.release()
	if err != nil {
		return err
	}
	for _, m := range matches.found {
		if err := j.unstore(m.ts, joinSideRight, kb); err != nil {
			return err
		}
		if err := j.forward(r.Key, false, j.joiner(r.Key, r.Value, m.value, 0), max(r.Timestamp, m.ts), r.Headers); err != nil {
			return err
		}
	}
	if len(matches.found) == 0 && leftOuter {
		if j.outer == nil || to < j.streamTime {
			var none V2
			if err := j.forward(r.Key, false, j.joiner(r.Key, r.Value, none, MissingRight), r.Timestamp, r.Headers); err != nil {
				return err
			}
		} else {
			j.minTime = min(j.minTime, r.Timestamp)
			if err := j.store(r.Timestamp, joinSideLeft, kb, vb); err != nil {
				return err
			}
		}
	}
	return j.leftStore.Put(kb, r.Timestamp, vb)
}

func (j *streamJoin[K, V1, V2, VR]) processRight(r Record[K, V2]) error {
	if r.Timestamp > j.streamTime {
		j.streamTime = r.Timestamp
	}
	rightOuter := j.kind == OuterJoin
	if rightOuter && r.KeyNull && !r.ValueNull {
		var none V1
		return j.forward(r.Key, true, j.joiner(r.Key, none, r.Value, MissingLeft), r.Timestamp, r.Headers)
	}
	if r.KeyNull || r.ValueNull {
		return j.skip(r.KeyNull, r.Key, r.Timestamp, j.rightStore)
	}
	kb, vb, err := j.encode(r.Key, "right", func(dst []byte) ([]byte, error) { return j.sd.Right.Append(dst, r.Value) })
	if err != nil {
		return err
	}
	defer j.release(kb, vb)

	if r.Timestamp == j.streamTime && j.outer != nil {
		if err := j.emitNonJoined(j.before, r.Headers); err != nil {
			return err
		}
	}
	// The right side looks with the flipped bounds.
	from, to := max(0, r.Timestamp-j.after), max(0, r.Timestamp+j.before)
	matches, err := fetchMatches(j.leftMatches, j.leftStore, kb, from, to)
	defer matches.release()
	if err != nil {
		return err
	}
	for _, m := range matches.found {
		if err := j.unstore(m.ts, joinSideLeft, kb); err != nil {
			return err
		}
		if err := j.forward(r.Key, false, j.joiner(r.Key, m.value, r.Value, 0), max(r.Timestamp, m.ts), r.Headers); err != nil {
			return err
		}
	}
	if len(matches.found) == 0 && rightOuter {
		if j.outer == nil || to < j.streamTime {
			var none V1
			if err := j.forward(r.Key, false, j.joiner(r.Key, none, r.Value, MissingLeft), r.Timestamp, r.Headers); err != nil {
				return err
			}
		} else {
			j.minTime = min(j.minTime, r.Timestamp)
			if err := j.store(r.Timestamp, joinSideRight, kb, vb); err != nil {
				return err
			}
		}
	}
	return j.rightStore.Put(kb, r.Timestamp, vb)
}

// skip drops a record with a null key or value. KStreamJoinWindow still
// puts a null value with a non-null key into its store, which Kafka's
// in-memory window store counts towards its observed stream time (the
// RocksDB store ignores it).
func (j *streamJoin[K, V1, V2, VR]) skip(keyNull bool, key K, ts int64, own sgstate.WindowStore) error {
	j.t.Logger().Warn("skipping record due to null key or value", "join", j.name)
	j.t.Drop()
	if keyNull || !j.putNulls {
		return nil
	}
	kb, err := j.keyBytes(key)
	if err != nil {
		return err
	}
	return own.Put(kb, ts, nil)
}

// matches collects the records a fetch finds, decoded. Its add, bound
// once, is the fetch's callback, so a fetch allocates no closure.
type matches[V any] struct {
	join   string
	decode func([]byte) (V, error)
	found  []joinMatch[V]
	add    func(ts int64, b []byte) error
	store  string // the store fetched, for errors
	busy   bool   // between fetchMatches and release
}

func newMatches[V any](join string, decode func([]byte) (V, error)) *matches[V] {
	m := &matches[V]{join: join, decode: decode}
	m.add = func(ts int64, b []byte) error {
		v, err := m.decode(b)
		if err != nil {
			return fmt.Errorf("%w: join %q: store %q: decode value: %w", ErrProcessing, m.join, m.store, err)
		}
		m.found = append(m.found, joinMatch[V]{ts: ts, value: v})
		return nil
	}
	return m
}

// fetchMatches collects the other side's records of key in [from, to],
// in timestamp order, duplicates in insertion order, before anything is
// forwarded, so downstream processing never runs inside a store iteration.
// It uses the side's collector m until its release (see encode); a fetch
// nested in the forwarding of another would make its own.
func fetchMatches[V any](m *matches[V], s sgstate.WindowStore, kb []byte, from, to int64) (*matches[V], error) {
	if m.busy {
		m = newMatches(m.join, m.decode)
	}
	m.busy, m.store = true, s.Name()
	err := s.Fetch(kb, from, to, m.add)
	return m, err
}

// release ends a fetch, its matches cleared so that the collector keeps no
// decoded value alive.
func (m *matches[V]) release() {
	clear(m.found)
	m.found, m.busy = m.found[:0], false
}

// outerKey is Kafka's TimestampedKeyAndJoinSide layout: the timestamp (8
// bytes big-endian), the side byte, the key bytes. Iterating the store
// therefore visits records by timestamp, right before left, then by key.
func (j *streamJoin[K, V1, V2, VR]) outerKey(ts int64, side byte, kb []byte) []byte {
	j.obuf = binary.BigEndian.AppendUint64(j.obuf[:0], uint64(ts))
	j.obuf = append(append(j.obuf, side), kb...)
	return j.obuf
}

// store appends a record to the outer store's list for (ts, side, key), as
// Kafka's ListValueStore does for duplicates. The list is Kafka's
// ListSerde of byte arrays (a variable-size flag byte, the count, then each
// element with its length), each element a LeftOrRightValue (side byte,
// value bytes).
func (j *streamJoin[K, V1, V2, VR]) store(ts int64, side byte, kb, vb []byte) error {
	key := j.outerKey(ts, side, kb)
	old, ok, err := j.outer.Get(key)
	if err != nil {
		return err
	}
	elem := len(vb) + 1
	var list []byte
	if ok && len(old) >= 5 {
		n := binary.BigEndian.Uint32(old[1:5])
		list = make([]byte, 0, len(old)+4+elem)
		list = append(list, old[0])
		list = binary.BigEndian.AppendUint32(list, n+1)
		list = append(list, old[5:]...)
	} else {
		list = make([]byte, 0, 9+elem)
		list = append(list, 1) // ListSerde VARIABLE_SIZE
		list = binary.BigEndian.AppendUint32(list, 1)
	}
	list = binary.BigEndian.AppendUint32(list, uint32(elem))
	list = append(list, side)
	list = append(list, vb...)
	return j.outer.Put(key, list)
}

// unstore deletes the outer store entry of a record that just found a
// match (Kafka's putIfAbsent(otherKey, null): delete only if present).
func (j *streamJoin[K, V1, V2, VR]) unstore(ts int64, side byte, kb []byte) error {
	if j.outer == nil {
		return nil
	}
	key := j.outerKey(ts, side, kb)
	_, ok, err := j.outer.Get(key)
	if err != nil || !ok {
		return err
	}
	return j.outer.Delete(key)
}

// parseJoinList splits a ListSerde value into its elements.
func parseJoinList(b []byte) ([][]byte, error) {
	if len(b) < 5 {
		return nil, fmt.Errorf("outer join list has %d bytes", len(b))
	}
	n := int(binary.BigEndian.Uint32(b[1:5]))
	b = b[5:]
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		if len(b) < 4 {
			return nil, fmt.Errorf("outer join list truncated")
		}
		l := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if l < 0 || l > len(b) {
			return nil, fmt.Errorf("outer join list element of %d bytes, %d left", l, len(b))
		}
		out = append(out, b[:l])
		b = b[l:]
	}
	return out, nil
}

// nonJoined is an outer store record whose window closed.
type nonJoined struct {
	ts    int64
	side  byte
	key   []byte
	value []byte
}

// emitNonJoined is emitNonJoinedOuterRecords: x is After when a left
// record triggers and Before for a right one. The arithmetic wraps like
// Java's longs: with no lower bound known (minTime = MaxInt64) the sum
// overflows and the pass runs, which is how a restarted task finds records
// restored into the outer store.
func (j *streamJoin[K, V1, V2, VR]) emitNonJoined(x int64, headers []Header) error {
	if j.minTime+x+j.grace >= j.streamTime {
		return nil
	}
	now := j.t.WallClock()
	if now < j.nextEmit {
		return nil
	}
	j.nextEmit = now + j.interval
	j.minTime = math.MaxInt64

	var emit []nonJoined
	var del [][]byte
	leftOpen, rightOpen := false, false
	err := j.outer.All(func(k, v []byte) error {
		if len(k) < 9 {
			return fmt.Errorf("%w: join %q: outer store key of %d bytes", ErrProcessing, j.name, len(k))
		}
		ts, side := int64(binary.BigEndian.Uint64(k)), k[8]
		j.minTime = ts
		if leftOpen && rightOpen {
			return errStop
		}
		// The look-back is the window's, not the side's flipped one:
		// After for left records, Before for right records.
		lookBack := j.before
		if side == joinSideLeft {
			lookBack = j.after
		}
		if ts+lookBack+j.grace >= j.streamTime {
			if side == joinSideLeft {
				leftOpen = true
			} else {
				rightOpen = true
			}
			return nil
		}
		elems, err := parseJoinList(v)
		if err != nil {
			return fmt.Errorf("%w: join %q: %w", ErrProcessing, j.name, err)
		}
		key := append([]byte(nil), k[9:]...)
		for _, e := range elems {
			if len(e) < 1 {
				return fmt.Errorf("%w: join %q: empty outer join value", ErrProcessing, j.name)
			}
			emit = append(emit, nonJoined{ts: ts, side: e[0], key: key, value: append([]byte(nil), e[1:]...)})
		}
		del = append(del, append([]byte(nil), k...))
		return nil
	})
	if err != nil && err != errStop {
		return err
	}
	for _, e := range emit {
		key, err := j.sd.Key.Decode(e.key)
		if err != nil {
			return fmt.Errorf("%w: join %q: outer store: decode key: %w", ErrProcessing, j.name, err)
		}
		var res VR
		if e.side == joinSideLeft {
			lv, err := j.sd.Left.Decode(e.value)
			if err != nil {
				return fmt.Errorf("%w: join %q: outer store: decode left value: %w", ErrProcessing, j.name, err)
			}
			var none V2
			res = j.joiner(key, lv, none, MissingRight)
		} else {
			rv, err := j.sd.Right.Decode(e.value)
			if err != nil {
				return fmt.Errorf("%w: join %q: outer store: decode right value: %w", ErrProcessing, j.name, err)
			}
			var none V1
			res = j.joiner(key, none, rv, MissingLeft)
		}
		if err := j.forward(key, false, res, e.ts, headers); err != nil {
			return err
		}
	}
	for _, k := range del {
		if err := j.outer.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
