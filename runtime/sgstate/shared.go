package sgstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// SharedDBDir is the directory, inside the root given to OpenSharedDB, of
// the shared Pebble DB.
const SharedDBDir = "pebble"

// sharedMarker is the file a store of a SharedDB keeps in its own
// directory. Its absence means the store's keys in the shared DB (if any)
// are not the store's: its directory was deleted, the way a store is wiped,
// so they are dropped before the store opens.
const sharedMarker = "SHARED"

// DefaultSharedMemTableSize is the memtable size of a SharedDB without a
// memory budget: one memtable for all its stores, in place of one per
// store that Pebble grows up to DefaultMemTableSize.
const DefaultSharedMemTableSize = 8 << 20

// sharedFormatVersion is the layout of a SharedDB: every store's keys
// under its prefix (sharedPrefix), the DB's own metadata under the empty
// prefix. Bump it when that changes.
const sharedFormatVersion = "1"

// sharedMetaFormat is the DB's format key: an empty store id, which no
// store has (their ids are not empty), then the store's meta prefix.
var sharedMetaFormat = []byte{0x00, pebbleMetaPrefix, 'f', 'o', 'r', 'm', 'a', 't'}

// SharedDB is one Pebble DB that holds many persistent stores of a process,
// each under a key prefix of its own, so that they share one set of
// memtables, one MANIFEST and one commit pipeline in place of one of each
// per store (about 250 KiB of fixed buffers and a memtable a store). A
// store opens in it when its StoreContext.Shared is set and it has no WAL
// (PebbleOptions.WAL and Sync are unset): the stores that restore from a
// changelog.
//
// Each store of a SharedDB keeps everything it kept in a DB of its own
// under its prefix, which its directory (StoreContext.Dir) relative to the
// root names: format version, layout, fingerprint and checkpoint, all
// written in the store's atomic commit batches. So the kill -9 semantics
// hold per store: the DB is durable as of its last memtable flush, which
// ends with some commit of each store, and each store reopens at its own
// checkpoint. The store's directory holds only a marker file; a store
// whose directory is missing it has its keys dropped before it opens, so
// deleting a store's directory still wipes it (and nothing of any other
// store). A directory that holds a Pebble DB of an earlier streamgen
// version keeps being opened as that DB.
//
// A store's key prefix can be open once at a time. A SharedDB is safe for
// concurrent use by the stores of several goroutines.
type SharedDB struct {
	db   *pebble.DB
	root string

	// gen counts commits of all stores: a store records the value after
	// its commit, and a flush started after that covers it.
	gen atomic.Uint64

	mu         sync.Mutex
	closed     bool
	open       map[string]bool
	flushedGen uint64          // gen before the last flush started
	flushed    <-chan struct{} // closed when the last flush completes
	flushAsked time.Time
	mem        budgetCount
}

// OpenSharedDB opens (or creates) the shared DB in root/SharedDBDir, for
// the stores whose directories are under root. o applies to the DB; its
// WAL and Sync must be unset and its Fingerprint is ignored (each store
// records its own). MemTableSize defaults to DefaultSharedMemTableSize;
// with a Budget, the DB takes up to a quarter of the budget's memtable
// share per memtable. logger receives Pebble's logging; nil discards.
func OpenSharedDB(root string, o PebbleOptions, logger *slog.Logger) (*SharedDB, error) {
	if o.wal() {
		return nil, errors.New("streamgen: shared pebble db: WAL and Sync are per store: stores that need a WAL open in a DB of their own")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.MemTableSize == 0 && (o.Pebble == nil || o.Pebble.MemTableSize == 0) && o.Budget == nil {
		o.MemTableSize = DefaultSharedMemTableSize
	}
	var mem budgetCount
	if o.Budget != nil {
		o.Cache, o.MemTableSize = o.Budget.joinShared()
		mem = budgetCount{b: o.Budget, size: o.MemTableSize}
	}
	dir := filepath.Join(root, SharedDBDir)
	db, err := pebble.Open(dir, o.pebbleOptions(logger))
	if err != nil {
		mem.leave()
		return nil, fmt.Errorf("streamgen: shared pebble db %q: %w", dir, err)
	}
	s := &SharedDB{db: db, root: root, open: map[string]bool{}, flushAsked: time.Now(), mem: mem}
	err = s.checkFormat(dir)
	if err == nil {
		err = s.dropOrphans()
	}
	if err != nil {
		db.Close()
		mem.leave()
		return nil, err
	}
	return s, nil
}

// dropOrphans drops the keys of every store whose directory has no marker
// (it was deleted while the DB was closed), so that deleting a store's or
// a task's directory frees its space even if the store never opens here
// again.
func (s *SharedDB) dropOrphans() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{0x01}})
	if err != nil {
		return err
	}
	var orphans [][]byte
	for ok := it.First(); ok; {
		k := it.Key()
		n, w := binary.Uvarint(k)
		if w <= 0 || uint64(len(k)-w) < n {
			break // not a store key: leave the rest alone
		}
		id := string(k[w : w+int(n)])
		p := sharedPrefix(id)
		if !filepath.IsLocal(filepath.FromSlash(id)) {
			break
		}
		if _, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(id), sharedMarker)); errors.Is(err, fs.ErrNotExist) {
			orphans = append(orphans, p)
		}
		ok = it.SeekGE(prefixEnd(p))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	for _, p := range orphans {
		if err := s.db.DeleteRange(p, prefixEnd(p), pebble.NoSync); err != nil {
			return err
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	return s.db.Flush()
}

// checkFormat records the DB's format on first open and compares it later.
func (s *SharedDB) checkFormat(dir string) error {
	v, closer, err := s.db.Get(sharedMetaFormat)
	if errors.Is(err, pebble.ErrNotFound) {
		it, err := s.db.NewIter(nil)
		if err != nil {
			return err
		}
		empty := !it.First()
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("%w: shared pebble db %q has data but no format version: on disk %q, this binary %q (delete it to rebuild its stores from their changelogs)",
				ErrFormatMismatch, dir, "", sharedFormatVersion)
		}
		if err := s.db.Set(sharedMetaFormat, []byte(sharedFormatVersion), pebble.NoSync); err != nil {
			return err
		}
		return s.db.Flush() // no WAL: durable once flushed
	}
	if err != nil {
		return fmt.Errorf("streamgen: shared pebble db %q: %w", dir, err)
	}
	got := string(v)
	closer.Close()
	if got != sharedFormatVersion {
		return fmt.Errorf("%w: shared pebble db %q: format version on disk %q, this binary %q (delete it to rebuild its stores from their changelogs)",
			ErrFormatMismatch, dir, got, sharedFormatVersion)
	}
	return nil
}

// Close closes the DB (a second Close does nothing). Its stores must be closed first (they flush what
// they committed); a store still open is reported, and its uncommitted
// and unflushed state is lost as after a crash.
func (s *SharedDB) Close() error {
	s.mu.Lock()
	n, closed := len(s.open), s.closed
	s.closed = true
	s.mu.Unlock()
	if closed {
		return nil
	}
	err := s.db.Close()
	s.mem.leave()
	if n > 0 {
		err = errors.Join(fmt.Errorf("streamgen: shared pebble db: closed with %d stores open", n), err)
	}
	if err != nil {
		return fmt.Errorf("streamgen: shared pebble db: %w", err)
	}
	return nil
}

// Drop deletes the keys of the store in dir and its marker (a closed
// store: wiping it), and waits until that is durable. The keys of other
// stores are not touched.
func (s *SharedDB) Drop(dir string) error {
	id, err := s.storeID(dir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	busy := s.open[id]
	s.mu.Unlock()
	if busy {
		return fmt.Errorf("streamgen: shared pebble db: store %q is open", id)
	}
	if err := os.Remove(filepath.Join(dir, sharedMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.drop(sharedPrefix(id))
}

// DiskUsage estimates the bytes the store in dir takes on disk; ok is
// false when the store is not in this DB (or the DB is closed or nil).
func (s *SharedDB) DiskUsage(dir string) (n uint64, ok bool) {
	if s == nil {
		return 0, false
	}
	id, err := s.storeID(dir)
	if err != nil {
		return 0, false
	}
	if _, err := os.Stat(filepath.Join(dir, sharedMarker)); err != nil {
		return 0, false
	}
	p := sharedPrefix(id)
	s.mu.Lock() // Close waits for it
	defer s.mu.Unlock()
	if s.closed {
		return 0, false
	}
	n, err = s.db.EstimateDiskUsage(p, prefixEnd(p))
	return n, err == nil
}

// drop deletes every key under the store prefix p and flushes.
func (s *SharedDB) drop(p []byte) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return err
	}
	found := it.First()
	if err := errors.Join(it.Error(), it.Close()); err != nil || !found {
		return err
	}
	if err := s.db.DeleteRange(p, prefixEnd(p), pebble.NoSync); err != nil {
		return fmt.Errorf("streamgen: shared pebble db: dropping a store: %w", err)
	}
	// The DB has no WAL: only a flush makes the deletion survive a crash.
	return s.db.Flush()
}

// storeID is the id of the store in dir: its path relative to the root.
func (s *SharedDB) storeID(dir string) (string, error) {
	rel, err := filepath.Rel(s.root, dir)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("streamgen: shared pebble db: store directory %q is not inside %q", dir, s.root)
	}
	return filepath.ToSlash(rel), nil
}

// acquire opens the store of directory dir: it takes its prefix and, if
// the directory has no marker, drops the prefix's keys and writes the
// marker. It returns the store's key prefix.
func (s *SharedDB) acquire(name, dir string) ([]byte, error) {
	id, err := s.storeID(dir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	busy := s.open[id]
	s.open[id] = true
	s.mu.Unlock()
	if busy {
		return nil, fmt.Errorf("streamgen: state store %q: %q is open already in the shared pebble db", name, id)
	}
	p := sharedPrefix(id)
	marker := filepath.Join(dir, sharedMarker)
	if _, err := os.Stat(marker); errors.Is(err, fs.ErrNotExist) {
		err := s.drop(p)
		if err == nil {
			err = os.WriteFile(marker, []byte("this store's data is in the shared pebble db ../../"+SharedDBDir+"\n"), 0o644)
		}
		if err != nil {
			s.release(id)
			return nil, fmt.Errorf("streamgen: state store %q: %w", name, err)
		}
	} else if err != nil {
		s.release(id)
		return nil, fmt.Errorf("streamgen: state store %q: %w", name, err)
	}
	return p, nil
}

func (s *SharedDB) release(id string) {
	s.mu.Lock()
	delete(s.open, id)
	s.mu.Unlock()
}

// committed records a commit of batch by a store and returns the commit's
// generation and whether the DB should flush for its memory budget.
func (s *SharedDB) committed(batch *pebble.Batch) (uint64, bool) {
	g := s.gen.Add(1)
	if s.mem.b == nil {
		return g, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return g, s.mem.add(batch)
}

// flush starts a flush of the memtable for a store whose last commit has
// generation gen, and returns the channel closed when the flush that
// covers it completes. No flush starts when one that covers gen did
// already, or when the last one was asked for less than minAge ago (then
// ch is nil).
func (s *SharedDB) flush(gen uint64, minAge time.Duration) (ch <-chan struct{}, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flushed != nil && s.flushedGen >= gen {
		return s.flushed, nil
	}
	if minAge > 0 && time.Since(s.flushAsked) < minAge {
		return nil, nil
	}
	g := s.gen.Load()
	ch, err = s.db.AsyncFlush()
	if err != nil {
		return nil, fmt.Errorf("streamgen: pebble flush: %w", err)
	}
	s.flushed, s.flushedGen, s.flushAsked = ch, g, time.Now()
	s.mem.bytes = 0
	return ch, nil
}

// sharedPrefix is the key prefix of store id: its length, then the id, so
// that no store's prefix is a prefix of another's.
func sharedPrefix(id string) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(id))), id...)
}
