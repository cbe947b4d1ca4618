package sgstate

import (
	"errors"
	"log/slog"
)

// Store is what every state store implements, built-in or user-written.
// Custom stores plug into a topology through this interface alone; the
// engine type-asserts for the optional Transactional and Restorer
// capabilities and treats stores without them like Kafka's non-transactional
// stores (wiped and restored from the changelog after a dirty close).
//
// Stores are not safe for concurrent use: a task's goroutine owns them.
type Store interface {
	// Name is the store name, unique within a topology. It names the
	// changelog topic <application.id>-<name>-changelog.
	Name() string
	// Init opens the store. It is called once per task before the task
	// processes records, and again after Close if the task is re-created.
	Init(ctx *StoreContext) error
	// Flush pushes buffered writes towards the backing medium. For the
	// built-in stores it does not make staged writes durable (Commit does),
	// so it is cheap and safe to call at any time.
	Flush() error
	// Close releases the store. Staged (uncommitted) writes are dropped, as
	// by Abort, so closing without Commit is a dirty close that keeps the
	// committed state only.
	Close() error
}

// StoreContext is handed to Store.Init by the caller (the processor graph or
// the engine), once per task and store.
type StoreContext struct {
	// Dir is this store's directory inside the task's state directory, for
	// persistent stores. The caller creates it; in-memory stores ignore it.
	Dir string
	// Shared, when set, is the Pebble DB a persistent store without a WAL
	// opens in, under a key prefix named by Dir (which must be inside the
	// SharedDB's root and then holds only a marker file), in place of a
	// DB of its own in Dir. Stores with a WAL, and stores whose Dir holds
	// a DB of their own already, ignore it.
	Shared *SharedDB
	// Changelog receives every write at the time of the write, in the
	// store's changelog key format (see ChangelogRecord). nil means the store
	// is not logged.
	Changelog ChangelogWriter
	// Logger receives the store's diagnostics (Pebble's own logging goes to
	// it at Debug, errors at Error). nil discards.
	Logger *slog.Logger
	// TimestampedValues says every value starts with the 8-byte big-endian
	// timestamp of Kafka Streams' ValueAndTimestamp (DSL tables and
	// aggregations, see sgstream.KVStore). The changelog then carries what
	// Kafka Streams' timestamped stores log (ChangeLoggingTimestamped*Store):
	// the raw value, with that timestamp as the record's timestamp, and
	// restoration puts the record's timestamp back in front. So a changelog
	// written by a Java application restores here, and one written here
	// restores in Java.
	TimestampedValues bool
	// RecordTimestamp returns the timestamp of the record being processed;
	// it stamps changelog records the way Kafka Streams does (the record
	// context's timestamp). nil: key-value stores log timestamp 0, window
	// stores the window start, session stores the session end.
	RecordTimestamp func() int64
}

// ChangelogWriter is where a logged store sends its writes. The engine
// appends them to the open Kafka transaction, so a Kafka abort and a store
// Abort together roll back both copies of the state.
//
// key and value are only valid during the call; an implementation that keeps
// them must copy. value nil is a tombstone.
type ChangelogWriter interface {
	Log(key, value []byte, timestamp int64)
}

// ChangelogRecord is one changelog entry as read back during restoration.
// Key is in the store's changelog format, which is Kafka Streams' binary
// layout so changelogs are interchangeable with Java applications:
//   - key-value store: the key itself;
//   - window store: key | windowStart (8 bytes, big-endian) | seqnum (4 bytes, big-endian; 0 unless retainDuplicates);
//   - session store: key | end (8 bytes, big-endian) | start (8 bytes, big-endian).
//
// Value nil deletes.
type ChangelogRecord struct {
	Key       []byte
	Value     []byte
	Timestamp int64
}

// Transactional is implemented by every built-in store. It keeps local state
// consistent with the last committed Kafka transaction (exactly-once v2, the
// KIP-892 idea): writes since the last Commit or Abort are staged — reads see
// them, the committed state does not — and Commit makes them part of the
// committed state atomically together with the changelog checkpoint.
type Transactional interface {
	// Commit makes the staged writes committed, atomically with checkpoint
	// (changelog topic-partition → next offset to restore from; opaque to
	// the store). A nil checkpoint keeps the previous one. Call it after the
	// Kafka transaction committed.
	Commit(checkpoint map[string]int64) error
	// Abort drops the staged writes; reads see the committed state again.
	Abort() error
	// Checkpoint returns the checkpoint of the last Commit, or nil if there
	// never was one (then the changelog must be replayed from the start).
	Checkpoint() (map[string]int64, error)
}

// UncommittedSizer is a store that says how much memory its writes since
// its last commit hold, which only a commit releases.
type UncommittedSizer interface {
	UncommittedBytes() int64
}

// Restorer is implemented by every built-in store: the engine replays the
// changelog through it before the task processes records, then calls
// Commit with the checkpoint it reached.
type Restorer interface {
	// RestoreBatch applies changelog records directly to the committed state
	// (they are not logged again). It fails with ErrStagedWrites if writes are
	// staged, because restoring under them would be ambiguous.
	RestoreBatch(records []ChangelogRecord) error
}

// MetadataStore is implemented by every built-in store: a few small named
// values that travel with the store's state through its transactions.
// Kafka Streams commits processor metadata (such as an emit-on-close
// aggregation's lastEmitWindowCloseTime) together with the consumed offsets,
// so a restarted task resumes from it; here the equivalent is to commit it
// atomically with the store's staged writes and checkpoint.
//
// SetMetadata is staged like any other write: Metadata sees it at once,
// Commit makes it committed state together with the data (on Pebble in the
// same atomic batch, so it survives a restart), Abort and Close drop it.
// A nil value deletes the key. Metadata is local: it is not written to the
// changelog, so a store rebuilt from the changelog alone starts without it,
// and an in-memory store loses it on Close with the rest of its state.
// Keys live in their own namespace and cannot clash with the store's
// internal bookkeeping.
type MetadataStore interface {
	// Metadata returns a copy of key's value; ok is false when it is unset.
	Metadata(key string) (value []byte, ok bool, err error)
	// SetMetadata stages value for key (nil deletes).
	SetMetadata(key string, value []byte) error
}

// StateStore is the full contract of the built-in stores.
type StateStore interface {
	Store
	Transactional
	Restorer
	MetadataStore
}

// KeyValueStore is an ordered byte-keyed store. Keys are ordered bytewise.
//
// Get returns a copy the caller owns. Iteration callbacks receive slices that
// are valid only during the callback; copy what you keep. A callback may write
// to the store it iterates; whether the running iteration observes the write
// is unspecified. An error returned by a callback stops the iteration and is
// returned as is.
type KeyValueStore interface {
	Store
	Get(key []byte) (value []byte, ok bool, err error)
	// Put writes value; nil value deletes (an empty non-nil value is stored).
	Put(key, value []byte) error
	Delete(key []byte) error
	// Range visits keys in [from, to] (both inclusive) ascending; a nil
	// bound is open.
	Range(from, to []byte, fn func(key, value []byte) error) error
	// ReverseRange is Range descending.
	ReverseRange(from, to []byte, fn func(key, value []byte) error) error
	// PrefixScan visits keys starting with prefix, ascending.
	PrefixScan(prefix []byte, fn func(key, value []byte) error) error
	// All visits every key ascending.
	All(fn func(key, value []byte) error) error
	// ApproximateNumEntries estimates the number of keys (exact for the
	// memory store up to staged overwrites; a scan for Pebble).
	ApproximateNumEntries() (int64, error)
}

// WindowStore stores values by (key, windowStart). With retainDuplicates
// (stream-stream joins) every Put is kept, ordered by insertion within the
// same key and windowStart.
//
// Retention follows Kafka's InMemoryWindowStore exactly: the store's observed
// stream time is the largest windowStart ever put (dropped puts included); a
// Put with windowStart <= observed - retention is dropped; fetches return only
// windowStart >= observed - retention + 1.
//
// Callback slices are valid only during the callback, as for KeyValueStore.
type WindowStore interface {
	Store
	// Put stores value; nil deletes the entry (a no-op with retainDuplicates,
	// as in Kafka).
	Put(key []byte, windowStart int64, value []byte) error
	// Fetch visits key's windows with start in [timeFrom, timeTo] (both
	// inclusive), ascending by start, duplicates in insertion order.
	Fetch(key []byte, timeFrom, timeTo int64, fn func(windowStart int64, value []byte) error) error
	// BackwardFetch is Fetch descending (duplicates in reverse insertion order).
	BackwardFetch(key []byte, timeFrom, timeTo int64, fn func(windowStart int64, value []byte) error) error
	// FetchAll visits every key's windows with start in [timeFrom, timeTo],
	// ascending by start, then key (bytewise), then insertion order.
	FetchAll(timeFrom, timeTo int64, fn func(key []byte, windowStart int64, value []byte) error) error
	// ObservedStreamTime is the largest windowStart put so far, or
	// math.MinInt64 before the first Put.
	ObservedStreamTime() int64
}

// WindowGetter is implemented by the built-in window stores: Get returns a
// copy of the value of key's window starting at windowStart (with
// duplicates retained, the last one put), with Fetch's retention rule. It
// answers what Fetch(key, windowStart, windowStart, ...) answers, but as a
// point lookup rather than a range scan.
type WindowGetter interface {
	Get(key []byte, windowStart int64) (value []byte, found bool, err error)
}

// WindowViewer is WindowGetter without the copy, for callers that decode
// the value at once (a windowed aggregation reads every window it updates):
// the value must not be modified, and it stays valid until the store is
// closed. The built-in window stores implement it.
type WindowViewer interface {
	View(key []byte, windowStart int64) (value []byte, found bool, err error)
}

// SessionStore stores values by key and session [start, end], both
// inclusive.
//
// Retention mirrors the window store with the session end as the time:
// observed stream time is the largest end put; a Put with end <= observed -
// retention is dropped, and only sessions with end >= observed - retention + 1
// are returned.
//
// Callback slices are valid only during the callback.
type SessionStore interface {
	Store
	// Put stores value for the session; nil value removes it.
	Put(key []byte, start, end int64, value []byte) error
	Remove(key []byte, start, end int64) error
	// FindSessions visits key's sessions with end >= earliestSessionEnd and
	// start <= latestSessionStart (Kafka's inclusive bounds: to merge a record
	// at t with gap g, ask for (t-g, t+g)). The order is Kafka's: ascending by
	// end, then by start.
	FindSessions(key []byte, earliestSessionEnd, latestSessionStart int64, fn func(start, end int64, value []byte) error) error
	// FetchEndedBetween visits every session with end in [endFrom, endTo],
	// ascending by end, then key, then start (emit-final).
	FetchEndedBetween(endFrom, endTo int64, fn func(key []byte, start, end int64, value []byte) error) error
}

// Errors; test with errors.Is. The returned errors wrap these with the store
// name and details.
var (
	// ErrNotOpen: the store was used before Init or after Close.
	ErrNotOpen = errors.New("streamgen: state store is not open")
	// ErrFormatMismatch: the on-disk store was written by an incompatible
	// store format or with a different layout (kind, segment interval).
	ErrFormatMismatch = errors.New("streamgen: state store format mismatch")
	// ErrSchemaMismatch: the on-disk store was written with another record
	// schema fingerprint.
	ErrSchemaMismatch = errors.New("streamgen: state store schema fingerprint mismatch")
	// ErrStagedWrites: RestoreBatch was called while writes are staged.
	ErrStagedWrites = errors.New("streamgen: state store has staged writes")
	// ErrBadChangelogKey: a changelog record's key is too short for the
	// store's format.
	ErrBadChangelogKey = errors.New("streamgen: malformed changelog key")
)
