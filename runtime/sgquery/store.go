package sgquery

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// Store is a queryable store as the HTTP endpoint sees it. Make one with
// NewKeyValue, NewWindow or NewSession; generated code lists one per
// queryable store in sgapp.App.Stores.
type Store interface {
	// Name is the store name.
	Name() string
	// Kind is the store's shape.
	Kind() sgstream.StoreKind
	def() *storeDef
}

// storeDef is the untyped part of a store view: what the HTTP endpoint
// needs to turn URL text into key bytes and stored bytes into JSON.
type storeDef struct {
	name string
	kind sgstream.StoreKind
	// timestamped: stored values start with the 8-byte timestamp of the
	// record that wrote them (Kafka's ValueAndTimestamp): key-value stores
	// and the window stores of windowed aggregations.
	timestamped bool
	// size is the window size in ms (window stores), to report window ends.
	size int64
	// codec is the replay format's JSON codec of the key and value types.
	codec sgreplay.TopicCodec
	// stringKey: the key type is a string, so URL text is the key itself
	// rather than JSON.
	stringKey bool
}

func (d *storeDef) Name() string             { return d.name }
func (d *storeDef) Kind() sgstream.StoreKind { return d.kind }
func (d *storeDef) def() *storeDef           { return d }

func newDef[K, V any](name string, kind sgstream.StoreKind, key serdes.Serde[K], value serdes.Serde[V]) storeDef {
	return storeDef{name: name, kind: kind, codec: sgreplay.Topic(name, key, value),
		stringKey: reflect.TypeFor[K]().Kind() == reflect.String}
}

// keyFromText parses a key as it appears in a URL: the text itself for a
// string key type, else its JSON (an enum's name may be written bare).
func (d *storeDef) keyFromText(text string) ([]byte, error) {
	var m json.RawMessage
	switch {
	case d.stringKey:
		m, _ = json.Marshal(text)
	case json.Valid([]byte(text)):
		m = json.RawMessage(text)
	default:
		m, _ = json.Marshal(text)
	}
	return d.keyFromJSON(m)
}

// keyFromJSON serializes a key given as JSON.
func (d *storeDef) keyFromJSON(m json.RawMessage) ([]byte, error) {
	if len(m) == 0 || string(m) == "null" {
		return nil, fmt.Errorf("%w: store %q: a key cannot be null", ErrBadKey, d.name)
	}
	kb, _, err := d.codec.EncodeJSON(m, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: store %q: %s is not a key of this store: %v", ErrBadKey, d.name, m, err)
	}
	if kb == nil {
		kb = []byte{}
	}
	return kb, nil
}

func (d *storeDef) keyJSON(kb []byte) (json.RawMessage, error) {
	k, _, err := d.codec.DecodeJSON(kb, nil)
	if err != nil {
		return nil, fmt.Errorf("streamgen: store %q: %w", d.name, err)
	}
	return k, nil
}

// valueJSON renders a stored value and its timestamp (hasTs false when
// the store keeps none).
func (d *storeDef) valueJSON(raw []byte) (v json.RawMessage, ts int64, hasTs bool, err error) {
	if d.timestamped {
		if len(raw) < 8 {
			return nil, 0, false, fmt.Errorf("streamgen: store %q: value has %d bytes, want at least 8 (timestamp)", d.name, len(raw))
		}
		ts, raw, hasTs = int64(binary.BigEndian.Uint64(raw)), raw[8:], true
	}
	_, v, err = d.codec.DecodeJSON(nil, raw)
	if err != nil {
		return nil, 0, false, fmt.Errorf("streamgen: store %q: %w", d.name, err)
	}
	return v, ts, hasTs, nil
}

// entry is one answer of a store read, in stored bytes. The slices are
// copies the reader owns.
type entry struct {
	key        []byte
	start, end int64 // windows and sessions
	value      []byte
}

// query is a read of one key or one partition.
type query struct {
	// key is the serialized key of a point read; nil for a scan.
	key []byte
	// from and to bound keys (key-value scans; nil open).
	from, to []byte
	// timeFrom and timeTo bound window starts (window reads), or
	// session ends (session scans); session point reads return the
	// sessions overlapping [timeFrom, timeTo].
	timeFrom, timeTo int64
}

// read runs q on partition p of the store, locally.
func (d *storeDef) read(ctx context.Context, src Source, p int32, q query) ([]entry, error) {
	var out []entry
	err := src.ReadLocal(ctx, d.name, p, func(s sgstate.Store) error {
		var err error
		out, err = d.readStore(s, q)
		return err
	})
	return out, err
}

func (d *storeDef) readStore(s sgstate.Store, q query) ([]entry, error) {
	var out []entry
	clone := func(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }
	// collect keeps one answer: a point read's key is q.key, a scan's is
	// copied out of the store.
	collect := func(k []byte, start, end int64, v []byte) error {
		if q.key == nil {
			k = clone(k)
		}
		out = append(out, entry{key: k, start: start, end: end, value: clone(v)})
		return nil
	}
	switch d.kind {
	case sgstream.KeyValueStore:
		r, err := engine.QueryKV(s)
		if err != nil {
			return nil, err
		}
		if q.key != nil {
			v, ok, err := r.Get(q.key)
			if err != nil || !ok {
				return nil, err
			}
			return []entry{{key: q.key, value: v}}, nil
		}
		err = r.Range(q.from, q.to, func(k, v []byte) error { return collect(k, 0, 0, v) })
		return out, err
	case sgstream.WindowStore:
		ws, err := storeAs[sgstate.WindowStore](d, s, "window")
		if err != nil {
			return nil, err
		}
		window := func(k []byte, start int64, v []byte) error { return collect(k, start, start+d.size, v) }
		if q.key != nil {
			err = ws.Fetch(q.key, q.timeFrom, q.timeTo, func(start int64, v []byte) error { return window(q.key, start, v) })
		} else {
			err = ws.FetchAll(q.timeFrom, q.timeTo, window)
		}
		return out, err
	case sgstream.SessionStore:
		ss, err := storeAs[sgstate.SessionStore](d, s, "session")
		if err != nil {
			return nil, err
		}
		if q.key != nil {
			err = ss.FindSessions(q.key, q.timeFrom, q.timeTo, func(start, end int64, v []byte) error { return collect(q.key, start, end, v) })
		} else {
			err = ss.FetchEndedBetween(q.timeFrom, q.timeTo, collect)
		}
		return out, err
	}
	return nil, fmt.Errorf("streamgen: store %q: unknown store kind %d", d.name, d.kind)
}

// storeAs is s as the interface T of a store kind, what names.
func storeAs[T any](d *storeDef, s sgstate.Store, what string) (T, error) {
	t, ok := s.(T)
	if !ok {
		return t, fmt.Errorf("streamgen: store %q is a %T, not a %s store", d.name, s, what)
	}
	return t, nil
}

// readLocalPartitions runs a scan on every partition this instance runs,
// in partition order.
func (d *storeDef) readLocalPartitions(ctx context.Context, src Source, q query) ([]entry, error) {
	info, err := src.StoreInfo(d.name)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, p := range partitionsOf(info) {
		es, err := d.read(ctx, src, p, q)
		if errors.Is(err, ErrNotLocal) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

// pointRead reads key kb on its partition, locally.
func (d *storeDef) pointRead(ctx context.Context, src Source, kb []byte, q query) ([]entry, int32, error) {
	p, _, err := partitionOf(src, d.name, kb)
	if err != nil {
		return nil, 0, err
	}
	q.key = kb
	es, err := d.read(ctx, src, p, q)
	return es, p, err
}

// standbyRead is pointRead on this instance's standby copy.
func (d *storeDef) standbyRead(ctx context.Context, src StandbySource, p int32, kb []byte, q query) ([]entry, int64, error) {
	q.key = kb
	var out []entry
	lag, err := src.ReadStandby(ctx, d.name, p, func(s sgstate.Store) error {
		var err error
		out, err = d.readStore(s, q)
		return err
	})
	return out, lag, err
}

func keyMetadata(ctx context.Context, src Source, store string, kb []byte) (KeyMetadata, error) {
	p, _, err := partitionOf(src, store, kb)
	if err != nil {
		return KeyMetadata{}, err
	}
	h, err := src.Owner(ctx, store, p)
	return KeyMetadata{Partition: p, Owner: h}, err
}

func serializeKey[K any](store string, s serdes.Serde[K], key K) ([]byte, error) {
	kb, err := s.Append(nil, key)
	if err != nil {
		return nil, fmt.Errorf("%w: store %q: serialize key: %v", ErrBadKey, store, err)
	}
	if kb == nil {
		kb = []byte{}
	}
	return kb, nil
}

// errUnbound is the error of a typed view used before On bound it to an
// engine.
func errUnbound(store string) error {
	return fmt.Errorf("streamgen: store %q: not bound to an engine (use On)", store)
}

// boundKey serializes key for a view bound to src.
func boundKey[K any](src Source, store string, ser serdes.Serde[K], key K) ([]byte, error) {
	if src == nil {
		return nil, errUnbound(store)
	}
	return serializeKey(store, ser, key)
}

// keyMetadataFor is KeyMetadata of every typed view.
func keyMetadataFor[K any](ctx context.Context, src Source, store string, ser serdes.Serde[K], key K) (KeyMetadata, error) {
	kb, err := boundKey(src, store, ser, key)
	if err != nil {
		return KeyMetadata{}, err
	}
	return keyMetadata(ctx, src, store, kb)
}

func decodeTimestamped[V any](store string, s serdes.Serde[V], raw []byte) (V, int64, error) {
	var v V
	if len(raw) < 8 {
		return v, 0, fmt.Errorf("streamgen: store %q: value has %d bytes, want at least 8 (timestamp)", store, len(raw))
	}
	v, err := s.Decode(raw[8:])
	if err != nil {
		return v, 0, fmt.Errorf("streamgen: store %q: decode value: %w", store, err)
	}
	return v, int64(binary.BigEndian.Uint64(raw)), nil
}

// serdePair is the typed half of every view: the store's key and value
// serdes.
type serdePair[K, V any] struct {
	key   serdes.Serde[K]
	value serdes.Serde[V]
}

// KeySerde is the serde of the store's keys. Generated code declares each
// store once and reads its serdes from there (the typed test driver).
func (p serdePair[K, V]) KeySerde() serdes.Serde[K] { return p.key }

// ValueSerde is the serde of the store's values as the topology writes
// them, without the timestamp a timestamped store adds.
func (p serdePair[K, V]) ValueSerde() serdes.Serde[V] { return p.value }

// KeyValue is a typed, read-only view of a key-value store: a table or an
// aggregation (values carry the timestamp of the record that last wrote
// them, as Kafka Streams' timestamped stores do).
type KeyValue[K, V any] struct {
	storeDef
	serdePair[K, V]
	src Source
}

// NewKeyValue describes the key-value store called name; bind it to an
// engine with On before reading.
func NewKeyValue[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V]) *KeyValue[K, V] {
	d := newDef(name, sgstream.KeyValueStore, key, value)
	d.timestamped = true
	return &KeyValue[K, V]{storeDef: d, serdePair: serdePair[K, V]{key, value}}
}

// On returns a copy of s that reads from src (such as a *sgkafka.Engine).
func (s *KeyValue[K, V]) On(src Source) *KeyValue[K, V] {
	c := *s
	c.src = src
	return &c
}

func (s *KeyValue[K, V]) source() (Source, error) {
	if s.src == nil {
		return nil, errUnbound(s.name)
	}
	return s.src, nil
}

// Get returns key's value and the timestamp it was written with; found is
// false when the key has none. It fails with ErrNotLocal when another
// instance holds the key (see KeyMetadata) and with ErrUnavailable while
// no instance can answer.
func (s *KeyValue[K, V]) Get(ctx context.Context, key K) (value V, ts int64, found bool, err error) {
	src, err := s.source()
	if err != nil {
		return value, 0, false, err
	}
	kb, err := serializeKey(s.name, s.key, key)
	if err != nil {
		return value, 0, false, err
	}
	es, _, err := s.pointRead(ctx, src, kb, query{})
	if err != nil || len(es) == 0 {
		return value, 0, false, err
	}
	value, ts, err = decodeTimestamped(s.name, s.value, es[0].value)
	return value, ts, err == nil, err
}

// Range visits the keys in [from, to] (nil bounds are open) that this
// instance holds, partition by partition, ascending by serialized key within
// a partition (as Kafka Streams' local range over several tasks). The
// callback runs after the store was read, so it may take its time.
func (s *KeyValue[K, V]) Range(ctx context.Context, from, to *K, fn func(key K, value V, ts int64) error) error {
	src, err := s.source()
	if err != nil {
		return err
	}
	q := query{}
	if from != nil {
		if q.from, err = serializeKey(s.name, s.key, *from); err != nil {
			return err
		}
	}
	if to != nil {
		if q.to, err = serializeKey(s.name, s.key, *to); err != nil {
			return err
		}
	}
	es, err := s.readLocalPartitions(ctx, src, q)
	if err != nil {
		return err
	}
	return eachKeyed(s.name, s.key, es, func(k K, e entry) error {
		v, ts, err := decodeTimestamped(s.name, s.value, e.value)
		if err != nil {
			return err
		}
		return fn(k, v, ts)
	})
}

// eachKeyed visits scanned entries with their decoded keys: the scans of
// the key-value and window stores decode keys alike and differ in values.
func eachKeyed[K any](name string, key serdes.Serde[K], es []entry, fn func(K, entry) error) error {
	for _, e := range es {
		k, err := key.Decode(e.key)
		if err != nil {
			return fmt.Errorf("streamgen: store %q: decode key: %w", name, err)
		}
		if err := fn(k, e); err != nil {
			return err
		}
	}
	return nil
}

// KeyMetadata is the partition that holds key and the instance running it.
func (s *KeyValue[K, V]) KeyMetadata(ctx context.Context, key K) (KeyMetadata, error) {
	return keyMetadataFor(ctx, s.src, s.name, s.key, key)
}

// WindowValue is one window of a key in a window store.
type WindowValue[V any] struct {
	// Start and End bound the window [Start, End) in ms.
	Start, End int64
	Value      V
	// Timestamp is the timestamp of the record that last updated the
	// window (windowed aggregations); for plain window stores, Start.
	Timestamp int64
}

// Window is a typed, read-only view of a window store.
type Window[K, V any] struct {
	storeDef
	serdePair[K, V]
	src Source
}

// NewWindow describes the plain window store called name (one a processor
// declares), whose windows are size long and whose values are stored as
// they are.
func NewWindow[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V], size time.Duration) *Window[K, V] {
	return newWindow(name, key, value, size, false)
}

// NewTimestampedWindow describes the window store called name of a
// windowed aggregation, whose windows are size long and whose values carry
// the timestamp of the record that last updated them (Kafka Streams'
// TimestampedWindowStore).
func NewTimestampedWindow[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V], size time.Duration) *Window[K, V] {
	return newWindow(name, key, value, size, true)
}

func newWindow[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V], size time.Duration, timestamped bool) *Window[K, V] {
	d := newDef(name, sgstream.WindowStore, key, value)
	d.size, d.timestamped = size.Milliseconds(), timestamped
	return &Window[K, V]{storeDef: d, serdePair: serdePair[K, V]{key, value}}
}

// On returns a copy of s that reads from src.
func (s *Window[K, V]) On(src Source) *Window[K, V] {
	c := *s
	c.src = src
	return &c
}

func (s *Window[K, V]) decode(e entry) (WindowValue[V], error) {
	w := WindowValue[V]{Start: e.start, End: e.end, Timestamp: e.start}
	var err error
	if s.timestamped {
		w.Value, w.Timestamp, err = decodeTimestamped(s.name, s.value, e.value)
		return w, err
	}
	if w.Value, err = s.value.Decode(e.value); err != nil {
		return w, fmt.Errorf("streamgen: store %q: decode value: %w", s.name, err)
	}
	return w, nil
}

// Fetch visits key's windows that start in [timeFrom, timeTo] (ms, both
// inclusive), ascending by start (Kafka Streams' WindowStore#fetch).
func (s *Window[K, V]) Fetch(ctx context.Context, key K, timeFrom, timeTo int64, fn func(w WindowValue[V]) error) error {
	return fetchKey(ctx, &s.storeDef, s.src, s.key, key, timeFrom, timeTo, s.decode, fn)
}

// fetchKey reads key's entries with times in [timeFrom, timeTo] on its
// partition and visits them decoded, in store order: the point reads of
// window and session stores.
func fetchKey[K, T any](ctx context.Context, d *storeDef, src Source, ser serdes.Serde[K], key K, timeFrom, timeTo int64, decode func(entry) (T, error), fn func(T) error) error {
	kb, err := boundKey(src, d.name, ser, key)
	if err != nil {
		return err
	}
	es, _, err := d.pointRead(ctx, src, kb, query{timeFrom: timeFrom, timeTo: timeTo})
	if err != nil {
		return err
	}
	for _, e := range es {
		v, err := decode(e)
		if err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// FetchAll visits the windows starting in [timeFrom, timeTo] of every key
// this instance holds, partition by partition, ascending by start then key
// within a partition.
func (s *Window[K, V]) FetchAll(ctx context.Context, timeFrom, timeTo int64, fn func(key K, w WindowValue[V]) error) error {
	if s.src == nil {
		return errUnbound(s.name)
	}
	es, err := s.readLocalPartitions(ctx, s.src, query{timeFrom: timeFrom, timeTo: timeTo})
	if err != nil {
		return err
	}
	return eachKeyed(s.name, s.key, es, func(k K, e entry) error {
		w, err := s.decode(e)
		if err != nil {
			return err
		}
		return fn(k, w)
	})
}

// KeyMetadata is the partition that holds key and the instance running it.
func (s *Window[K, V]) KeyMetadata(ctx context.Context, key K) (KeyMetadata, error) {
	return keyMetadataFor(ctx, s.src, s.name, s.key, key)
}

// SessionValue is one session of a key in a session store.
type SessionValue[V any] struct {
	// Start and End bound the session [Start, End], both inclusive, in ms.
	Start, End int64
	Value      V
}

// Session is a typed, read-only view of a session store.
type Session[K, V any] struct {
	storeDef
	serdePair[K, V]
	src Source
}

// NewSession describes the session store called name.
func NewSession[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V]) *Session[K, V] {
	return &Session[K, V]{storeDef: newDef(name, sgstream.SessionStore, key, value), serdePair: serdePair[K, V]{key, value}}
}

// On returns a copy of s that reads from src.
func (s *Session[K, V]) On(src Source) *Session[K, V] {
	c := *s
	c.src = src
	return &c
}

// Fetch visits key's sessions that overlap [timeFrom, timeTo] (end >=
// timeFrom and start <= timeTo), ascending by end then start. Fetch(ctx,
// key, 0, math.MaxInt64, fn) is Kafka Streams' SessionStore#fetch(key).
func (s *Session[K, V]) Fetch(ctx context.Context, key K, timeFrom, timeTo int64, fn func(SessionValue[V]) error) error {
	return fetchKey(ctx, &s.storeDef, s.src, s.key, key, timeFrom, timeTo, s.decode, fn)
}

func (s *Session[K, V]) decode(e entry) (SessionValue[V], error) {
	v, err := s.value.Decode(e.value)
	if err != nil {
		return SessionValue[V]{}, fmt.Errorf("streamgen: store %q: decode value: %w", s.name, err)
	}
	return SessionValue[V]{Start: e.start, End: e.end, Value: v}, nil
}

// KeyMetadata is the partition that holds key and the instance running it.
func (s *Session[K, V]) KeyMetadata(ctx context.Context, key K) (KeyMetadata, error) {
	return keyMetadataFor(ctx, s.src, s.name, s.key, key)
}
