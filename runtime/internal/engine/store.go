package engine

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstate"
)

// StoreKind is the shape of a store.
type StoreKind int

const (
	KeyValueStore StoreKind = iota
	WindowStore
	SessionStore
	// VersionedStore is a versioned key-value store (KIP-889): a table
	// read with a history retention.
	VersionedStore
)

// StoreSpec is what the builder knows about a store; the StoreProvider of
// the driver or engine turns it into a sgstate.Store for each task.
type StoreSpec struct {
	Name             string
	Kind             StoreKind
	InMemory         bool
	Logged           bool
	Retention        time.Duration // window and session stores; a versioned store's history retention
	WindowSize       time.Duration // window stores
	RetainDuplicates bool          // stream-stream join stores
	// Held keeps a persistent key-value store's whole state in memory as
	// well, Pebble being its durable copy (sgstate.NewHeldKeyValue): the
	// buffer of a stream-stream join's unmatched records, which every
	// match looks up.
	Held bool
	// Custom builds a user-written store; nil for built-in stores.
	Custom func() sgstate.Store
	// Fingerprint identifies the key/value schema stored, so a Pebble store
	// written by an incompatible topology is refused on open.
	Fingerprint string
	// Cached puts the store behind the task's record cache when the task
	// has one (TaskConfig.CacheMaxBytes): DSL tables and aggregations set
	// it, windowed aggregations too (time windows always, sliding and
	// session windows when they emit on update), as Kafka Streams caches
	// Materialized stores by default. Stores that retain duplicates (joins)
	// are never cached.
	Cached bool
	// Timestamped says the store holds Kafka Streams' ValueAndTimestamp
	// (the DSL's tables, aggregations and materialized joins), so its
	// changelog is Kafka's timestamped layout: the raw value, the timestamp
	// as the record's (see sgstate.StoreContext.TimestampedValues). Stores
	// with a layout of streamgen's own (suppress and join buffers,
	// subscription stores) log their values whole.
	Timestamped bool
	// OwnLayout says the store's changelog is in a layout of streamgen's
	// own, which Kafka Streams neither writes nor reads for a store of
	// that name: suppress and join buffers, subscription stores, stores of
	// process steps, and stores whose keys or values are msgpack records.
	// Its changelog records carry the layout marker (see LayoutHeader),
	// and restoring it refuses records without one rather than reading
	// another layout's bytes as its own.
	OwnLayout bool
}

// StoreDir is the directory of a persistent store of task t under a state
// directory: <dir>/<task id>/<store>, or <dir>/global/<store> for global
// stores. The Kafka engine and the test driver use the same layout, so a
// state directory written by either can be inspected the same way.
func StoreDir(stateDir string, id TaskID, store string) string {
	task := id.String()
	if id.IsGlobal() {
		task = "global"
	}
	return filepath.Join(stateDir, task, store)
}

// JoinMemTableSize is the Pebble memtable size of a stream-stream join's
// stores (window stores retaining duplicates, held stores) unless the
// options set one or a memory budget sizes it. Their reads seldom reach
// Pebble (the unmatched records are held in memory, and the window
// stores' newest segments up to sgstate.WindowOptions.MemoryBytes), which
// keeps their durable copy, flushed about every second: a memtable of
// sgstate.DefaultMemTableSize would only hold more of it in memory.
const JoinMemTableSize = 4 << 20

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
		// Without a changelog to restore from, every commit must reach
		// Pebble's write-ahead log.
		o.WAL = o.WAL || !spec.Logged
		if (spec.Held || spec.RetainDuplicates) && o.Budget == nil && o.MemTableSize == 0 && (o.Pebble == nil || o.Pebble.MemTableSize == 0) {
			o.MemTableSize = JoinMemTableSize
		}
		opts = &o
	}
	switch spec.Kind {
	case KeyValueStore:
		switch {
		case opts == nil:
			return sgstate.NewMemoryKeyValue(spec.Name), nil
		case spec.Held:
			return sgstate.NewHeldKeyValue(spec.Name, opts), nil
		}
		return sgstate.NewPebbleKeyValue(spec.Name, opts), nil
	case WindowStore, SessionStore:
		return newBuiltinTimeStore(spec, opts)
	case VersionedStore:
		o := sgstate.VersionedOptions{HistoryRetention: spec.Retention.Milliseconds()}
		if opts == nil {
			return sgstate.NewMemoryVersioned(spec.Name, o), nil
		}
		return sgstate.NewPebbleVersioned(spec.Name, o, opts), nil
	}
	return nil, fmt.Errorf("streamgen: store %q: unknown store kind %d", spec.Name, spec.Kind)
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

// KVReader is the read side of a key-value store, as interactive queries
// use it (see QueryKV).
type KVReader interface {
	// Get returns a copy of key's value.
	Get(key []byte) (value []byte, ok bool, err error)
	// Range visits keys in [from, to] (nil bounds are open) ascending;
	// slices are valid during the callback only.
	Range(from, to []byte, fn func(key, value []byte) error) error
}

// QueryKV returns a read-only view of a task's key-value store for readers
// outside the task's processing (interactive queries). The caller must keep
// the task from processing while it reads (the engine holds the worker's
// state lock).
//
// A store behind the record cache (sgstream's, which implements
// QueryReader) is read through it, as Kafka Streams' interactive queries
// read through CachingKeyValueStore: reads see the latest value of every
// key, cached or not, without the side effects of the task's own reads.
func QueryKV(s sgstate.Store) (KVReader, error) {
	switch kv := s.(type) {
	case interface{ QueryReader() KVReader }:
		return kv.QueryReader(), nil
	case sgstate.KeyValueStore:
		return kv, nil
	case sgstate.VersionedKeyValueStore:
		return latestReader{kv}, nil
	}
	return nil, fmt.Errorf("streamgen: store %q is a %T, not a key-value store", s.Name(), s)
}

// latestReader reads a versioned store's latest values, which is what
// Kafka Streams' key-queries of a versioned store answer without a
// timestamp bound. Values come in the timestamped layout of the key-value
// stores (timestamp, 8 bytes big-endian, then the value), so a reader of
// a table's store decodes both kinds alike.
type latestReader struct {
	s sgstate.VersionedKeyValueStore
}

func (r latestReader) Get(key []byte) ([]byte, bool, error) {
	v, ts, ok, err := r.s.Get(key)
	if !ok || err != nil {
		return nil, false, err
	}
	return append(binary.BigEndian.AppendUint64(nil, uint64(ts)), v...), true, nil
}

func (r latestReader) Range(from, to []byte, fn func(key, value []byte) error) error {
	return r.s.All(func(k, v []byte, ts int64) error {
		if (from != nil && string(k) < string(from)) || (to != nil && string(k) > string(to)) {
			return nil
		}
		return fn(k, append(binary.BigEndian.AppendUint64(nil, uint64(ts)), v...))
	})
}
