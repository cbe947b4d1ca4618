package sgstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// Versioned tables (KIP-889, KIP-914) and the stream-table join grace
// period (KIP-923), as Kafka Streams 4.x runs them:
//
//   - A table read into a versioned store keeps every version within its
//     history retention. An update older than the key's latest version is
//     stored (reads as of its time see it) and forwarded marked as not
//     latest; an update older than the retention is neither (Kafka's
//     PUT_RETURN_CODE_NOT_PUT).
//   - to_stream forwards every update, out-of-order ones included; a
//     filter forwards them too, and no longer skips an update that fails
//     before and after (KTableFilter with versioned semantics).
//   - A table-table join drops the out-of-order updates of a versioned
//     side (KTableKTable*Join, "Skipping out-of-order record").
//   - A stream-table join reads a versioned table as of the stream
//     record's timestamp; with a grace period it first holds stream records
//     in a time-ordered buffer and joins each once stream time has passed
//     its timestamp plus the grace.

// VersionedStore is a typed view of a sgstate.VersionedKeyValueStore. A
// null value is a tombstone version.
type VersionedStore[K, V any] struct {
	s     sgstate.VersionedKeyValueStore
	key   serdes.Serde[K]
	value serdes.Serde[V]
	kbuf  []byte
	vbuf  []byte
}

// NewVersionedStore wraps s, which must be a sgstate.VersionedKeyValueStore.
func NewVersionedStore[K, V any](s sgstate.Store, key serdes.Serde[K], value serdes.Serde[V]) (*VersionedStore[K, V], error) {
	vs, ok := s.(sgstate.VersionedKeyValueStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: store %q is a %T, not a versioned store", s.Name(), s)
	}
	return &VersionedStore[K, V]{s: vs, key: key, value: value}, nil
}

func (s *VersionedStore[K, V]) encodeKey(key K) ([]byte, error) {
	var err error
	if s.kbuf, err = s.key.Append(s.kbuf[:0], key); err != nil {
		return nil, fmt.Errorf("%w: store %q: serialize key: %w", ErrProcessing, s.s.Name(), err)
	}
	return s.kbuf, nil
}

// Put writes a version (null: a tombstone) and returns its validTo, as
// sgstate.VersionedKeyValueStore.Put.
func (s *VersionedStore[K, V]) Put(key K, value V, null bool, ts int64) (int64, error) {
	kb, err := s.encodeKey(key)
	if err != nil {
		return 0, err
	}
	var vb []byte
	if !null {
		if s.vbuf, err = s.value.Append(s.vbuf[:0], value); err != nil {
			return 0, fmt.Errorf("%w: store %q: serialize value: %w", ErrProcessing, s.s.Name(), err)
		}
		vb = nonNil(s.vbuf) // an empty value is a version, nil a tombstone
	}
	return s.s.Put(kb, vb, ts)
}

// Get returns the latest value and its timestamp.
func (s *VersionedStore[K, V]) Get(key K) (V, int64, bool, error) {
	return s.GetAsOf(key, sgstate.VersionedLatest)
}

// GetAsOf returns the value valid at asOf and its timestamp.
func (s *VersionedStore[K, V]) GetAsOf(key K, asOf int64) (v V, ts int64, found bool, err error) {
	kb, err := s.encodeKey(key)
	if err != nil {
		return v, 0, false, err
	}
	raw, ts, ok, err := s.s.GetAsOf(kb, asOf)
	if err != nil || !ok {
		return v, 0, false, err
	}
	if v, err = s.value.Decode(raw); err != nil {
		return v, 0, false, fmt.Errorf("%w: store %q: decode value: %w", ErrProcessing, s.s.Name(), err)
	}
	return v, ts, true, nil
}

// asOfGetter is the value getter of a versioned table: Kafka's
// KTableValueGetter with isVersioned() true.
type asOfGetter[K, V any] interface {
	valueGetter[K, V]
	GetAsOf(key K, asOf int64) (value V, timestamp int64, found bool, err error)
}

// VersionedTableSource reads a topic as a table materialized in a
// versioned store with the given history retention (Kafka Streams'
// builder.table with Materialized.as(Stores.persistentVersionedKeyValueStore)).
// The store is logged and not cached (versioned stores have no cache).
func VersionedTableSource[K, V any](b *Builder, name string, cfg SourceConfig[K, V], store string, historyRetention time.Duration) Table[K, V] {
	info := b.g.TableSource(name, engine.TopicSpec{Name: cfg.Topic, Role: cfg.role, Partitions: cfg.Partitions}, store)
	b.declareStore(StoreSpec{Name: store, Kind: engine.VersionedStore, Logged: true, Retention: historyRetention})
	getter := func(t *task) (valueGetter[K, V], error) {
		s, err := t.Store(store)
		if err != nil {
			return nil, err
		}
		return NewVersionedStore(s, cfg.Key, cfg.Value)
	}
	tbl, out := newTable(b, info, getter, store, cfg.Key, cfg.Value)
	tbl.versioned = true
	up := &versionedUpserter[K, V]{out: out}
	b.onInit(info, func(t *task) error {
		s, err := t.Store(store)
		if err != nil {
			return err
		}
		up.t = t
		up.vs, err = NewVersionedStore(s, cfg.Key, cfg.Value)
		return err
	})
	b.addSource(info, cfg.Topic, func(t *task, raw *RawRecord) error {
		r, ok, err := decodeRecord(t, raw, cfg)
		if err != nil || !ok {
			return err
		}
		return up.Process(r)
	})
	return tbl
}

// versionedUpserter is KTableSource's processor over a versioned store.
type versionedUpserter[K, V any] struct {
	t   *task
	vs  *VersionedStore[K, V]
	out recordNode[K, tableChange[V]]
}

func (u *versionedUpserter[K, V]) Process(r Record[K, V]) error {
	if r.KeyNull {
		return skipNullTableKey(u.t)
	}
	// The old value is the latest one, even for an out-of-order update,
	// as KTableSource reads it.
	old, _, found, err := u.vs.Get(r.Key)
	if err != nil {
		return err
	}
	validTo, err := u.vs.Put(r.Key, r.Value, r.ValueNull, r.Timestamp)
	if err != nil || validTo == sgstate.VersionedNotPut {
		return err
	}
	ch := tableChange[V]{New: r.Value, NewNull: r.ValueNull, Old: old, OldNull: !found, NotLatest: validTo != sgstate.VersionedLatest}
	return u.out.Process(Record[K, tableChange[V]]{Key: r.Key, Value: ch, Timestamp: r.Timestamp, Headers: r.Headers})
}

// filterAsOf is filterGetter over a versioned parent: reads as of a time
// are filtered too (KTableFilterValueGetter passes isVersioned through).
type filterAsOf[K, V any] struct {
	filterGetter[K, V]
	parent asOfGetter[K, V]
}

func (g filterAsOf[K, V]) GetAsOf(key K, asOf int64) (v V, ts int64, found bool, err error) {
	v, ts, found, err = g.parent.GetAsOf(key, asOf)
	if err != nil || !found || g.pred(key, v) != g.keep {
		var zero V
		return zero, 0, false, err
	}
	return v, ts, true, nil
}

func newFilterGetter[K, V any](parent valueGetter[K, V], pred func(K, V) bool, keep bool) valueGetter[K, V] {
	fg := filterGetter[K, V]{parent, pred, keep}
	if vg, ok := parent.(asOfGetter[K, V]); ok {
		return filterAsOf[K, V]{fg, vg}
	}
	return fg
}

// mapAsOf is mapGetter over a versioned parent
// (KTableMapValuesValueGetter passes isVersioned through).
type mapAsOf[K, V, V2 any] struct {
	mapGetter[K, V, V2]
	parent asOfGetter[K, V]
}

func (g mapAsOf[K, V, V2]) GetAsOf(key K, asOf int64) (v2 V2, ts int64, found bool, err error) {
	v, ts, found, err := g.parent.GetAsOf(key, asOf)
	if err != nil || !found {
		return v2, 0, false, err
	}
	return g.mapped(key, v, ts)
}

func newMapGetter[K, V, V2 any](parent valueGetter[K, V], fn func(K, V) V2) valueGetter[K, V2] {
	mg := mapGetter[K, V, V2]{parent, fn}
	if vg, ok := parent.(asOfGetter[K, V]); ok {
		return mapAsOf[K, V, V2]{mg, vg}
	}
	return mg
}

// GraceBufferStore is the name of a stream-table join's grace buffer
// store: Kafka Streams' "<join name>-Buffer".
func GraceBufferStore(join string) string { return join + "-Buffer" }

// JoinStreamTableGrace is JoinStreamTable with a grace period (Kafka's
// Joined.withGracePeriod, KIP-923); the table must be versioned. Stream
// records wait in a logged buffer store (GraceBufferStore) until stream
// time, the largest timestamp buffered, reaches their timestamp plus
// grace, and then join the table as of their timestamp, in the order of
// timestamp, serialized key and arrival (the buffer's key layout). A record
// older than stream time minus grace joins at once; only a buffered record
// lets the buffer emit. key and value serialize the buffered records.
func JoinStreamTableGrace[K, V1, V2, VR any](s Stream[K, V1], t Table[K, V2], name string, kind JoinKind, grace time.Duration, joiner Joiner[K, V1, V2, VR], key serdes.Serde[K], value serdes.Serde[V1]) Stream[K, VR] {
	if !t.versioned {
		s.b.errorf("join %q: a grace period needs a versioned table; %q is not", name, t.info.Name)
	}
	return joinStreamTableOpts(s, t, name, kind, joiner, &graceBuffer[K, V1]{grace: grace.Milliseconds(), key: key, value: value, store: GraceBufferStore(name)})
}

// graceBuffer is RocksDBTimeOrderedKeyValueBuffer as the stream-table join
// uses it. Keys are timestamp (8, big-endian) | serialized key | sequence
// number (4), Kafka's TimeFirstWindowKeySchema, so the store's byte order is
// the buffer's emission order; values hold the record's value and headers.
// The buffer's observed stream time is the largest timestamp ever put; it
// is kept under the empty key, which sorts before every entry.
type graceBuffer[K, V any] struct {
	grace    int64
	key      serdes.Serde[K]
	value    serdes.Serde[V]
	store    string
	kv       sgstate.KeyValueStore
	observed int64
	seq      uint32
	kb, vb   []byte
}

var graceObservedKey = []byte{}

var (
	be          = binary.BigEndian
	errStopScan = errors.New("streamgen: stop scan")
)

func (g *graceBuffer[K, V]) init(t *task) error {
	s, err := t.Store(g.store)
	if err != nil {
		return err
	}
	kv, ok := s.(sgstate.KeyValueStore)
	if !ok {
		return fmt.Errorf("streamgen: join buffer %q is a %T, not a key-value store", g.store, s)
	}
	g.kv, g.observed, g.seq = kv, -1, 0
	raw, ok, err := kv.Get(graceObservedKey)
	if err != nil || !ok {
		return err
	}
	if len(raw) != 8 {
		return fmt.Errorf("streamgen: join buffer %q: corrupt stream time", g.store)
	}
	g.observed = int64(be.Uint64(raw))
	return nil
}

// put buffers r unless it is older than stream time minus grace, which it
// reports as false.
func (g *graceBuffer[K, V]) put(r Record[K, V]) (bool, error) {
	if g.observed-g.grace > r.Timestamp {
		return false, nil
	}
	g.seq = (g.seq + 1) & 0x7FFFFFFF
	kb := be.AppendUint64(g.kb[:0], uint64(r.Timestamp))
	kb, err := g.key.Append(kb, r.Key)
	if err != nil {
		return false, fmt.Errorf("%w: join buffer %q: serialize key: %w", ErrProcessing, g.store, err)
	}
	g.kb = be.AppendUint32(kb, g.seq)
	vb, err := g.value.Append(appendHeaders(g.vb[:0], r.Headers), r.Value)
	if err != nil {
		return false, fmt.Errorf("%w: join buffer %q: serialize value: %w", ErrProcessing, g.store, err)
	}
	g.vb = vb
	if err := g.kv.Put(g.kb, g.vb); err != nil {
		return false, err
	}
	if r.Timestamp > g.observed {
		g.observed = r.Timestamp
		if err := g.kv.Put(graceObservedKey, be.AppendUint64(nil, uint64(g.observed))); err != nil {
			return false, err
		}
	}
	return true, nil
}

// evict removes and passes to fn, in order, every record with timestamp <=
// stream time - grace.
func (g *graceBuffer[K, V]) evict(fn func(Record[K, V]) error) error {
	// Kafka fetches the time range [0, stream time - grace]: nothing while
	// that bound is negative.
	if g.observed-g.grace < 0 {
		return nil
	}
	upper := be.AppendUint64(nil, uint64(g.observed-g.grace+1))
	var due [][2][]byte
	err := g.kv.Range([]byte{0}, nil, func(k, v []byte) error {
		if string(k) >= string(upper) {
			return errStopScan
		}
		due = append(due, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
		return nil
	})
	if err != nil && err != errStopScan {
		return err
	}
	for _, e := range due {
		k, v := e[0], e[1]
		if len(k) < 12 {
			return fmt.Errorf("streamgen: join buffer %q: corrupt key", g.store)
		}
		r := Record[K, V]{Timestamp: int64(be.Uint64(k))}
		if r.Key, err = g.key.Decode(k[8 : len(k)-4]); err != nil {
			return fmt.Errorf("%w: join buffer %q: decode key: %w", ErrProcessing, g.store, err)
		}
		rest, hs, err := readHeaders(v)
		if err != nil {
			return fmt.Errorf("streamgen: join buffer %q: %w", g.store, err)
		}
		r.Headers = hs
		if r.Value, err = g.value.Decode(rest); err != nil {
			return fmt.Errorf("%w: join buffer %q: decode value: %w", ErrProcessing, g.store, err)
		}
		if err := g.kv.Delete(k); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// appendHeaders writes a header count (4) and each header as suppress's
// buffer does.
func appendHeaders(b []byte, hs []Header) []byte {
	b = be.AppendUint32(b, uint32(len(hs)))
	for _, h := range hs {
		b = appendChunk(b, []byte(h.Key))
		if h.Value == nil {
			b = be.AppendUint32(b, 0xFFFFFFFF)
		} else {
			b = appendChunk(b, h.Value)
		}
	}
	return b
}

func readHeaders(b []byte) (rest []byte, hs []Header, err error) {
	if len(b) < 4 {
		return nil, nil, errBadBufferEntry
	}
	n := int(be.Uint32(b))
	rest = b[4:]
	for i := 0; i < n; i++ {
		var hk, hv []byte
		var null bool
		if hk, rest, _, err = readChunk(rest); err != nil {
			return nil, nil, err
		}
		if hv, rest, null, err = readChunk(rest); err != nil {
			return nil, nil, err
		}
		if !null && hv == nil {
			hv = []byte{}
		}
		hs = append(hs, Header{Key: string(hk), Value: hv})
	}
	return rest, hs, nil
}
