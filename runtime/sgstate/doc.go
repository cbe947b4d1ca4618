// Package sgstate implements streamgen's state stores: key-value, window and
// session stores, each in memory and on Pebble, plus the record cache.
//
// # Byte-level stores
//
// Stores see opaque byte keys and values; the processor graph (sgstream)
// wraps them with typed serdes. Keys order bytewise. Gets return copies;
// iteration callbacks get slices valid for the duration of the call, which
// avoids a copy per visited entry on the hot fetch path of joins.
//
// # Staging: local state follows the Kafka transaction
//
// Under exactly-once, the changelog records of a store are part of the open
// Kafka transaction. If the transaction aborts, the local store must also
// forget those writes, or it would hold state that no committed changelog
// describes. Kafka Streams 4.0 solves this bluntly: no checkpoint while
// running, and after a dirty close it wipes the state directory and replays
// the whole changelog. KIP-892 (transactional state stores) instead buffers
// uncommitted writes and applies them at commit; quix-streams does the same
// with an in-memory transaction per partition that it flushes to RocksDB
// only after the Kafka commit succeeds. This package follows that order:
//
//  1. Writes are staged: reads see them, the committed state does not.
//     Each write is also sent to StoreContext.Changelog at write time, so the
//     engine can put it into the open Kafka transaction.
//  2. After the Kafka transaction commits, the engine calls Commit with the
//     changelog offsets reached. Staged writes and that checkpoint are
//     written in one atomic batch.
//  3. If the transaction aborts, Abort drops the staged writes.
//
// Hence the committed state and its checkpoint always agree: after any crash
// the store holds exactly the state as of some committed checkpoint, and the
// engine replays the changelog from there (RestoreBatch, then Commit). The
// memory variant keeps each key's staged write beside its committed value;
// the Pebble variant stages in an overlay skiplist whose tombstones hide
// committed keys (reads look there first) and writes the overlay, its
// staged range deletions and the checkpoint key in one batch at commit. By
// default a Pebble store writes no write-ahead log (PebbleOptions.WAL): the
// Kafka changelog is the durable copy, and the store is durable as of its
// last memtable flush, which holds the checkpoint of the last commit it
// contains. A kill -9 or an OS crash loses only a suffix of commits, which
// restoration replays from the changelog; the store flushes when a commit
// finds nothing new (the application went idle) or the last flush a second
// old, when a memtable fills, and on Close.
//
// One engine abstraction (an ordered byte map with staging) sits under all
// stores, so key-value, window and session logic is written once and the
// memory and Pebble variants answer identically by construction; the tests
// run one table of cases against both.
//
// Store metadata (MetadataStore) rides the same staging: a processor's
// small bookkeeping values, such as the close time of the last emit-on-close
// emission, are committed in the same atomic step as the data they describe.
//
// # Window and session layout
//
// Window and session stores keep one key-first index (see segmented.go):
// time segment, escaped key, time, so a per-key fetch is one seek per live
// segment; the time-ordered reads of emit-on-close aggregations and
// interactive queries sort a segment's entries instead of reading a
// second, time-first index that every write would have to update. User
// keys inside composite keys are escaped (0x00 → 0x00 0xFF, terminated by
// 0x00 0x01), which preserves order and rules out prefix collisions
// between keys such as "a" and "a\x00b". Retention is Kafka's in-memory
// rule, exact on every read; storage is reclaimed one whole segment (half
// the retention by default) at a time.
//
// The segments are held in memory, one staged ordered map per segment
// (bands.go): entirely for an in-memory store, and for a Pebble store its
// newest segments up to WindowOptions.MemoryBytes, so the reads a windowed
// aggregation or a join makes per record (of windows that mostly do not
// exist yet) never reach Pebble. A Pebble store writes those segments'
// staged writes into its commit batch, keeps expired data only until one
// range tombstone covers its segment, and reads older segments (after a
// restart, or past the memory limit) from Pebble.
//
// # Held stores
//
// A held key-value store (NewHeldKeyValue) is a Pebble store that also
// holds its whole state in memory, in a memory engine that answers every
// read and stages every write (engine_held.go). Pebble is only its
// durable copy: the staged writes go into the commit batch with the
// checkpoint, as any Pebble store's, and Pebble is read once, when the
// store opens and loads its state into memory. Its files, durability and
// restoration are a Pebble key-value store's. It suits small stores read
// on every record: a stream-stream join's buffer of unmatched records
// (Kafka's KeyAndJoinSide store), which every match looks up, and which
// on Pebble mostly searched memtables and sstables for keys not there.
//
// Changelog keys use Kafka Streams' binary layouts (see ChangelogRecord), so
// changelog topics stay readable by and compatible with Java applications.
// Stores whose values are in a layout of streamgen's own (buffers,
// subscriptions, msgpack records) log the same way; the engine, which knows
// which stores those are, adds a layout marker header to their changelog
// records and refuses unmarked ones on restore, so stores stay unaware of
// it.
//
// # One Pebble DB for many stores
//
// A Pebble store has a DB of its own in its directory, or, when
// StoreContext.Shared names a SharedDB and the store writes no WAL (it
// restores from a changelog), it lives in that shared DB under a key prefix
// of its own: the length-prefixed path of its directory below the
// SharedDB's root. Every Pebble DB carries fixed buffers (about 250 KiB)
// and memtables, which an instance with 144 stores would otherwise pay 144
// times. Everything a store keeps is under its prefix (data, format,
// layout, fingerprint, checkpoint, metadata), and its commit is still one
// atomic batch, so the guarantees above hold per store: the shared DB is
// durable as of its last flush, which ends with some commit of each store,
// and after kill -9 each store reopens at its own checkpoint. Flushes are
// the DB's: a store's idle commit flushes only when no flush started after
// its last commit, and the one-second age flush is one for all its stores.
// The store's directory holds only a marker file; a store whose directory
// lacks it (deleted, to wipe the store) has its prefix range-deleted, and
// that flushed, before it opens, so a wipe touches no other store; the
// prefixes of stores whose directories went while the DB was closed are
// dropped when it opens. A
// prefix can be open once at a time, and a directory that holds a DB of
// its own (written before stores shared one) keeps it.
//
// # Versioned on-disk state
//
// A Pebble store records the store format version, its layout (kind,
// segment interval) and the caller's schema fingerprint on first open. A
// later open with different values fails with ErrFormatMismatch or
// ErrSchemaMismatch, quoting both values; the remedy is to delete the store
// directory and restore from the changelog. A SharedDB records its own
// format version (its key layout) the same way.
//
// # Record cache
//
// Cache reproduces Kafka's ThreadCache (dedup of updates per key between
// commits), counting entries as Kafka does and evicting and flushing in its
// order, so a full cache forwards what Kafka Streams' forwards. It is
// separate from the stores: the graph decides which stores are cached
// (key-value stores, and window and session stores, whose namespaces keep
// their keys ordered per user key for range reads) and what a flush
// forwards.
//
// Stores and caches are not safe for concurrent use; a task's goroutine owns
// them.
package sgstate
