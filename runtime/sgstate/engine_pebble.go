package sgstate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// storeFormatVersion is the on-disk format of the Pebble stores: the key
// prefixes and encodings in this package. Bump it when they change; stores
// written by another version refuse to open (the state is then rebuilt from
// the changelog).
const storeFormatVersion = "1"

// Pebble key space: one DB per store and task, or a key prefix per store
// in a SharedDB. Under it, metadata lives under 0x00, store data under
// 0x01; the data key space is what the store code sees.
const (
	pebbleMetaPrefix = 0x00
	pebbleDataPrefix = 0x01
)

const (
	metaFormat      = "format"
	metaLayout      = "layout"
	metaFingerprint = "fingerprint"
	metaCheckpoint  = "checkpoint"
)

// pebbleEngine stages writes in memory, as the memory engine does: an
// overlay skiplist of data keys (tombstones for deletes), the range
// deletions of expired segments, and metadata. Reads look at the overlay
// first and then at the DB; Commit writes everything, with the checkpoint
// key, in one atomic batch.
//
// It used to stage in a Pebble indexed batch. Reads through an indexed
// batch go through Pebble's merging iterators even for keys written in the
// same transaction, which is where a windowed aggregation spent its time
// (it reads back every window it writes); the overlay answers those from a
// map, and a batch that is only written is cheap to build at commit.
type pebbleEngine struct {
	db   *pebble.DB
	wo   *pebble.WriteOptions
	kbuf []byte

	// shared is the SharedDB the store is in, nil for a DB of its own;
	// pfx is then the store's key prefix (sharedPrefix of sharedID), in
	// front of every key, and lastGen the generation of its last commit.
	shared   *SharedDB
	sharedID string
	pfx      []byte
	lastGen  uint64

	// overlay holds staged sets and deletes (tomb) of data keys.
	overlay *skiplist
	// ranges are staged range deletions [start, end) of data keys. Staged
	// writes inside a range made before it are dropped from the overlay,
	// so Commit applies the ranges first and the overlay after them.
	ranges [][2][]byte
	// metaStage holds staged metadata writes; nil is a staged delete.
	metaStage map[string][]byte

	// it is a DB iterator kept from one scan to the next, repositioned with
	// SetBounds: creating and closing an iterator for every scan was most
	// of what a stream-stream join spent per record. Only this engine
	// writes the DB, in commit, direct and checkVersion, and each of them
	// drops it, so it always reads the committed state. A scan started
	// from inside another scan's callback (itBusy) uses an iterator of its
	// own.
	it      *pebble.Iterator
	itBusy  bool
	itStale bool // dropped while busy: close when the scan ends
	bounds  []byte

	// Without a WAL (PebbleOptions.WAL), a commit is durable once the
	// memtable holding it is flushed. unflushed says commits were written
	// since the last flush was asked for; lastCP is the encoded checkpoint
	// of the last commit, so that a commit that changes nothing is seen
	// as the application going idle; flushed is the last asked-for flush,
	// closed when it completes; flushAsked when it was asked for (the
	// store's opening before the first).
	noWAL      bool
	unflushed  bool
	lastCP     []byte
	flushed    <-chan struct{}
	flushAsked time.Time

	// mem counts the memtable bytes written since the last flush for the
	// store's MemoryBudget (PebbleOptions.Budget), if it has one.
	mem budgetCount

	// extra are staged writes the store keeps outside the overlay (a
	// window store's segments in memory), written in the commit batch
	// after the overlay. nil: none.
	extra extraStaged
}

// extraStaged is a store's staged writes that the engine does not hold
// but commits: keeping them out of the overlay spares every write a second
// ordered insert, when the store holds them in order already.
type extraStaged interface {
	hasStaged() bool
	// appendStaged calls add for every staged write, with its key in the
	// engine's data key space; v is nil for a delete.
	appendStaged(add func(k, v []byte) error) error
}

// maxUnflushedAge bounds how old the newest durable commit of a store
// without a WAL may get while it is written without pause: a commit starts
// a flush when the last one was asked for longer ago. After kill -9 such a
// store restores about this long's changelog (Kafka Streams flushes its
// RocksDB stores, which have no WAL either, with each checkpoint).
const maxUnflushedAge = time.Second

// openPebbleEngine opens the store in dir: in shared when it is not nil
// and the store has no WAL, in a DB of its own otherwise.
func openPebbleEngine(name, dir string, o PebbleOptions, layout string, logger *slog.Logger, shared *SharedDB) (*pebbleEngine, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if shared != nil && !o.wal() && !ownDB(dir) {
		return openSharedEngine(name, dir, o, layout, shared)
	}
	var mem budgetCount
	if o.Budget != nil {
		o.Cache, o.MemTableSize = o.Budget.join()
		mem = budgetCount{b: o.Budget, size: o.MemTableSize}
	}
	db, err := pebble.Open(dir, o.pebbleOptions(logger))
	if err != nil {
		mem.leave()
		return nil, fmt.Errorf("streamgen: state store %q: open pebble: %w", name, err)
	}
	// With a WAL, always a synced commit: it is the only way to make Pebble
	// write the batch to its WAL file before Commit returns (NoSync leaves
	// it in a 32 KiB in-process buffer, lost with the process). Unless
	// o.Sync, the WAL's fsync is skipped (walWriteThroughFS).
	e := &pebbleEngine{db: db, wo: pebble.Sync, overlay: newSkiplist(), metaStage: map[string][]byte{}, noWAL: !o.wal(), flushAsked: time.Now(), mem: mem}
	if e.noWAL {
		e.wo = pebble.NoSync
	}
	if err := e.checkVersion(name, o.Fingerprint, layout); err != nil {
		e.dropIter() // its scan may have left the kept iterator open
		db.Close()
		mem.leave()
		return nil, err
	}
	return e, nil
}

// ownDB reports whether dir holds a Pebble DB of its own, written before
// stores shared a DB: it stays that store's DB.
func ownDB(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	return len(m) > 0
}

// openSharedEngine opens the store in dir inside shared.
func openSharedEngine(name, dir string, o PebbleOptions, layout string, shared *SharedDB) (*pebbleEngine, error) {
	pfx, err := shared.acquire(name, dir)
	if err != nil {
		return nil, err
	}
	id, _ := shared.storeID(dir)
	e := &pebbleEngine{db: shared.db, wo: pebble.NoSync, shared: shared, sharedID: id, pfx: pfx,
		overlay: newSkiplist(), metaStage: map[string][]byte{}, noWAL: true, flushAsked: time.Now()}
	if err := e.checkVersion(name, o.Fingerprint, layout); err != nil {
		e.dropIter()
		shared.release(id)
		return nil, err
	}
	return e, nil
}

// checkVersion records format, layout and fingerprint on first open and
// compares them on later opens (style convention 19).
func (e *pebbleEngine) checkVersion(name, fingerprint, layout string) error {
	// What a store records, written in this order and compared in it.
	props := []struct {
		key, what, want string
		mismatch        error
		hint            string
	}{
		{metaFormat, "store format version", storeFormatVersion, ErrFormatMismatch, ""},
		{metaLayout, "layout", layout, ErrFormatMismatch, ""},
		{metaFingerprint, "schema fingerprint", fingerprint, ErrSchemaMismatch, " (delete the store directory to rebuild it from the changelog)"},
	}
	_, found, err := e.getMeta(metaFormat)
	if err != nil {
		return err
	}
	if !found {
		empty := true
		err := e.scan(nil, nil, false, func(_, _ []byte) error { empty = false; return io.EOF })
		if err != nil && err != io.EOF {
			return err
		}
		if !empty {
			return fmt.Errorf("%w: store %q has data but no format version: on disk %q, this binary %q",
				ErrFormatMismatch, name, "", storeFormatVersion)
		}
		b := e.db.NewBatch()
		for _, p := range props {
			b.Set(e.metaKey(p.key), []byte(p.want), nil)
		}
		err = b.Commit(e.wo)
		e.dropIter()
		e.committed(b)
		return err
	}
	for _, p := range props {
		got, _, err := e.getMeta(p.key)
		if err != nil {
			return err
		}
		if string(got) != p.want {
			return fmt.Errorf("%w: store %q: %s on disk %q, this binary %q%s",
				p.mismatch, name, p.what, got, p.want, p.hint)
		}
	}
	return nil
}

// dataKey is the DB key of data key k, in a buffer reused by the next call.
func (e *pebbleEngine) dataKey(k []byte) []byte {
	e.kbuf = append(append(append(e.kbuf[:0], e.pfx...), pebbleDataPrefix), k...)
	return e.kbuf
}

// newDataKey is dataKey in a new slice.
func (e *pebbleEngine) newDataKey(k []byte) []byte {
	return append(append(append(make([]byte, 0, len(e.pfx)+1+len(k)), e.pfx...), pebbleDataPrefix), k...)
}

func (e *pebbleEngine) metaKey(k string) []byte {
	return append(append(append(make([]byte, 0, len(e.pfx)+1+len(k)), e.pfx...), pebbleMetaPrefix), k...)
}

// userKey is the data key of the DB key k.
func (e *pebbleEngine) userKey(k []byte) []byte { return k[len(e.pfx)+1:] }

func (e *pebbleEngine) getRaw(k []byte) ([]byte, bool, error) {
	v, closer, err := e.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("streamgen: pebble get: %w", err)
	}
	out := append(make([]byte, 0, len(v)), v...)
	closer.Close()
	return out, true, nil
}

func (e *pebbleEngine) get(k []byte) ([]byte, bool, error) {
	if n := e.overlay.get(k); n != nil {
		if n.tomb {
			return nil, false, nil
		}
		return cloneBytes(n.value), true, nil
	}
	if e.rangeDeleted(k) {
		return nil, false, nil
	}
	return e.getRaw(e.dataKey(k))
}

// getStaged reads the overlay only, which saves a lookup in the DB (through
// its memtables and levels) for keys that cannot be there.
func (e *pebbleEngine) getStaged(k []byte) ([]byte, bool, error) {
	if n := e.overlay.get(k); n != nil && !n.tomb {
		return cloneBytes(n.value), true, nil
	}
	return nil, false, nil
}

// rangeDeleted reports whether a staged range deletion covers k.
func (e *pebbleEngine) rangeDeleted(k []byte) bool {
	for _, r := range e.ranges {
		if bytes.Compare(k, r[0]) >= 0 && bytes.Compare(k, r[1]) < 0 {
			return true
		}
	}
	return false
}

// scan merges the overlay with a DB iterator; an overlay entry hides the
// DB's entry for the same key, a staged range deletion hides DB entries.
func (e *pebbleEngine) scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	it, cached, err := e.iter(lower, upper)
	if err != nil {
		return err
	}
	err = e.scanIter(it, lower, upper, reverse, fn)
	var ierr error
	if cached {
		e.itBusy = false
		if ierr = it.Error(); ierr != nil || e.itStale {
			e.dropIter()
		}
	} else {
		ierr = it.Close()
	}
	if err == nil && ierr != nil {
		err = fmt.Errorf("streamgen: pebble iterator: %w", ierr)
	}
	return err
}

// iter returns a DB iterator over the data keys [lower, upper) (nil =
// open): the kept one (cached) unless it is in use.
func (e *pebbleEngine) iter(lower, upper []byte) (it *pebble.Iterator, cached bool, err error) {
	b := append(append(append(e.bounds[:0], e.pfx...), pebbleDataPrefix), lower...)
	n := len(b)
	b = append(b, e.pfx...)
	if upper != nil {
		b = append(append(b, pebbleDataPrefix), upper...)
	} else {
		b = append(b, pebbleDataPrefix+1)
	}
	if e.itBusy {
		// NewIter keeps its bounds until Close: give it its own copy.
		b = bytes.Clone(b)
		it, err = e.db.NewIter(&pebble.IterOptions{LowerBound: b[:n:n], UpperBound: b[n:]})
		if err != nil {
			return nil, false, fmt.Errorf("streamgen: pebble iterator: %w", err)
		}
		return it, false, nil
	}
	e.bounds = b
	if e.it == nil {
		if e.it, err = e.db.NewIter(nil); err != nil {
			e.it = nil
			return nil, false, fmt.Errorf("streamgen: pebble iterator: %w", err)
		}
	}
	e.it.SetBounds(b[:n:n], b[n:]) // SetBounds copies them
	e.itBusy = true
	return e.it, true, nil
}

// dropIter closes the kept iterator after the DB changed (or, if a scan
// is using it, when that scan ends).
func (e *pebbleEngine) dropIter() {
	if e.it == nil {
		return
	}
	if e.itBusy {
		e.itStale = true
		return
	}
	e.it.Close()
	e.it, e.itStale = nil, false
}

// scanStaged scans the overlay only, which saves positioning a DB iterator
// (a seek through every memtable and level) on a range that cannot hold
// committed keys.
func (e *pebbleEngine) scanStaged(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return e.scanIter(nil, lower, upper, reverse, fn)
}

// scanIter is scan's merge, over an iterator bounded to [lower, upper), or
// over the overlay alone if it is nil; it leaves the iterator open.
func (e *pebbleEngine) scanIter(it *pebble.Iterator, lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	ok := false // it has an entry
	switch {
	case it == nil:
	case reverse:
		ok = it.Last()
	default:
		ok = it.First()
	}
	var a *slNode // the overlay's next entry
	if e.overlay.n > 0 {
		if reverse {
			a = e.overlay.seekLT(upper)
		} else {
			a = e.overlay.seekGE(lower)
		}
	}
	for {
		for ok && len(e.ranges) > 0 && e.rangeDeleted(e.userKey(it.Key())) {
			ok = stepIter(it, reverse)
		}
		if a != nil && !inBounds(a.key, lower, upper, reverse) {
			a = nil
		}
		if !ok && a == nil {
			break
		}
		useA, skipDB := a != nil, false
		if a != nil && ok {
			c := bytes.Compare(a.key, e.userKey(it.Key()))
			if reverse {
				c = -c
			}
			useA, skipDB = c <= 0, c == 0
		}
		if useA {
			n := a
			a = step(a, reverse)
			if skipDB {
				ok = stepIter(it, reverse)
			}
			if n.tomb {
				continue
			}
			if err := fn(n.key, n.value); err != nil {
				return err
			}
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("streamgen: pebble iterator: %w", err)
		}
		if err := fn(e.userKey(it.Key()), v); err != nil {
			return err
		}
		ok = stepIter(it, reverse)
	}
	return nil
}

func stepIter(it *pebble.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

func (e *pebbleEngine) staged() writer { return pebbleStaged{e} }

func (e *pebbleEngine) hasStaged() bool {
	return e.overlay.n > 0 || len(e.ranges) > 0 || len(e.metaStage) > 0 || e.extra != nil && e.extra.hasStaged()
}

func (e *pebbleEngine) direct(fn func(w writer) error) error {
	if e.hasStaged() {
		return ErrStagedWrites
	}
	b := e.db.NewBatch()
	defer b.Close()
	if err := fn(pebbleDirect{e: e, b: b}); err != nil {
		return err
	}
	err := b.Commit(e.wo)
	e.dropIter()
	if err != nil {
		return fmt.Errorf("streamgen: pebble commit: %w", err)
	}
	if e.committed(b) {
		return e.startFlush(0)
	}
	return nil
}

// committed records a batch the store committed and reports whether it
// should flush for its memory budget.
func (e *pebbleEngine) committed(b *pebble.Batch) bool {
	e.unflushed = true
	if e.shared != nil {
		var flush bool
		e.lastGen, flush = e.shared.committed(b)
		return flush
	}
	return e.mem.add(b)
}

func (e *pebbleEngine) getMeta(k string) ([]byte, bool, error) {
	if v, ok := e.metaStage[k]; ok {
		if v == nil {
			return nil, false, nil
		}
		return cloneBytes(v), true, nil
	}
	return e.getRaw(e.metaKey(k))
}

func (e *pebbleEngine) commit(cp map[string]int64) error {
	var enc []byte
	if cp != nil {
		var err error
		if enc, err = encodeCheckpoint(cp); err != nil {
			return err
		}
	}
	if e.shared != nil {
		// A kept iterator pins the memtables it was created over, here
		// the memtables of every store: keep it one commit at most.
		e.dropIter()
	}
	if !e.hasStaged() && (cp == nil || bytes.Equal(enc, e.lastCP)) {
		// Nothing new since the last commit: the application is idle, a
		// good time to make what it committed durable.
		return e.flushIdle()
	}
	b := e.db.NewBatch()
	defer b.Close()
	for _, r := range e.ranges {
		if err := b.DeleteRange(e.newDataKey(r[0]), e.newDataKey(r[1]), nil); err != nil {
			return fmt.Errorf("streamgen: pebble commit: %w", err)
		}
	}
	for n := range e.overlay.all {
		var err error
		if n.tomb {
			err = b.Delete(e.dataKey(n.key), nil)
		} else {
			err = b.Set(e.dataKey(n.key), n.value, nil)
		}
		if err != nil {
			return fmt.Errorf("streamgen: pebble commit: %w", err)
		}
	}
	if e.extra != nil {
		err := e.extra.appendStaged(func(k, v []byte) error {
			if v == nil {
				return b.Delete(e.dataKey(k), nil)
			}
			return b.Set(e.dataKey(k), v, nil)
		})
		if err != nil {
			return fmt.Errorf("streamgen: pebble commit: %w", err)
		}
	}
	for k, v := range e.metaStage {
		var err error
		if v == nil {
			err = b.Delete(e.metaKey(k), nil)
		} else {
			err = b.Set(e.metaKey(k), v, nil)
		}
		if err != nil {
			return fmt.Errorf("streamgen: pebble commit: %w", err)
		}
	}
	if cp != nil {
		if err := b.Set(e.metaKey(metaCheckpoint), enc, nil); err != nil {
			return fmt.Errorf("streamgen: pebble commit: %w", err)
		}
	}
	err := b.Commit(e.wo)
	e.dropIter()
	if err != nil {
		// The staged writes stay staged: the caller aborts or retries.
		return fmt.Errorf("streamgen: pebble commit: %w", err)
	}
	e.resetStage()
	if cp != nil {
		e.lastCP = enc
	}
	if e.committed(b) {
		// Over the store's share of its memory budget: a flush like that of
		// a full memtable, which carries this commit's checkpoint.
		return e.startFlush(0)
	}
	if e.shared == nil && time.Since(e.flushAsked) < maxUnflushedAge {
		return nil
	}
	// A SharedDB checks the age of its own last flush: one flush a
	// maxUnflushedAge for all its stores, not one per store.
	return e.flushAged(maxUnflushedAge)
}

// flushIdle starts a flush of the memtable if the store has no WAL and
// commits since the last flush; it does not wait for it. A store written
// without pause flushes every maxUnflushedAge and when its memtable fills,
// so after kill -9 it restores at most about that much changelog.
func (e *pebbleEngine) flushIdle() error { return e.flushAged(0) }

// flushAged is flushIdle, except that in a SharedDB no flush starts if the
// DB's last one was asked for less than minAge ago.
func (e *pebbleEngine) flushAged(minAge time.Duration) error {
	if !e.noWAL || !e.unflushed {
		return nil
	}
	return e.startFlush(minAge)
}

// startFlush asks Pebble to flush the memtable and does not wait for it.
// In a SharedDB, a flush that started after the store's last commit
// covers it, and minAge is passed on to SharedDB.flush.
func (e *pebbleEngine) startFlush(minAge time.Duration) error {
	if e.shared != nil {
		ch, err := e.shared.flush(e.lastGen, minAge)
		if err == nil && ch != nil {
			e.flushed, e.unflushed = ch, false
		}
		return err
	}
	ch, err := e.db.AsyncFlush()
	if err != nil {
		return fmt.Errorf("streamgen: pebble flush: %w", err)
	}
	e.flushed, e.unflushed, e.flushAsked = ch, false, time.Now()
	e.mem.bytes = 0
	return nil
}

// waitFlushed starts a flush of unflushed commits and waits for every flush
// asked for: after it, everything committed survives kill -9.
func (e *pebbleEngine) waitFlushed() error {
	if err := e.flushIdle(); err != nil {
		return err
	}
	if e.flushed != nil {
		<-e.flushed
		e.flushed = nil
	}
	return nil
}

// resetStage drops every staged write.
func (e *pebbleEngine) resetStage() {
	e.overlay.reset()
	e.ranges = nil
	clear(e.metaStage)
}

func (e *pebbleEngine) abort() error {
	e.resetStage()
	return nil
}

func (e *pebbleEngine) checkpoint() (map[string]int64, error) {
	v, _, err := e.getRaw(e.metaKey(metaCheckpoint))
	if err != nil {
		return nil, err
	}
	return decodeCheckpoint(v)
}

func (e *pebbleEngine) flush() error { return nil }

func (e *pebbleEngine) close() error {
	e.abort()
	e.itBusy = false
	e.dropIter()
	// Without a WAL, Pebble's Close drops the memtable: flush it, so that a
	// store closed cleanly reopens at its last commit.
	ferr := e.waitFlushed()
	if e.shared != nil {
		e.shared.release(e.sharedID)
		e.shared = nil
		if ferr != nil {
			return fmt.Errorf("streamgen: pebble close: %w", ferr)
		}
		return nil
	}
	cerr := e.db.Close()
	e.mem.leave()
	if err := errors.Join(ferr, cerr); err != nil {
		return fmt.Errorf("streamgen: pebble close: %w", err)
	}
	return nil
}

type pebbleStaged struct{ e *pebbleEngine }

func (w pebbleStaged) set(k, v []byte) error {
	overlaySet(w.e.overlay, k, v, false)
	return nil
}

func (w pebbleStaged) del(k []byte) error {
	overlaySet(w.e.overlay, k, nil, true)
	return nil
}

func (w pebbleStaged) delRange(start, end []byte) error {
	for _, n := range w.e.overlay.inRange(start, end, nil) {
		w.e.overlay.remove(n.key)
	}
	w.e.ranges = addRange(w.e.ranges, start, end)
	return nil
}

// addRange adds the range deletion [start, end) to ranges, leaving out
// what another range covers: a window store expires its segments with
// ranges that all start at its first key, one each time a segment
// expires, thousands between two at_least_once commits. Kept apart, each
// get would test them all and Pebble would fragment them into as many
// overlapping tombstones, quadratic in their number (10 M windowed counts
// held 9 GB). The overlay writes a covered range removed are gone already
// (delRange), so dropping the range changes nothing.
func addRange(ranges [][2][]byte, start, end []byte) [][2][]byte {
	covers := func(outer, inner [2][]byte) bool {
		return bytes.Compare(outer[0], inner[0]) <= 0 && bytes.Compare(inner[1], outer[1]) <= 0
	}
	nr := [2][]byte{start, end}
	for _, r := range ranges {
		if covers(r, nr) {
			return ranges
		}
	}
	ranges = slices.DeleteFunc(ranges, func(r [2][]byte) bool { return covers(nr, r) })
	return append(ranges, [2][]byte{cloneBytes(start), cloneBytes(end)})
}

func (w pebbleStaged) setMeta(k string, v []byte) error {
	w.e.metaStage[k] = cloneBytes(v)
	return nil
}

type pebbleDirect struct {
	e *pebbleEngine
	b *pebble.Batch
}

func (w pebbleDirect) set(k, v []byte) error { return w.b.Set(w.e.dataKey(k), v, nil) }
func (w pebbleDirect) del(k []byte) error    { return w.b.Delete(w.e.dataKey(k), nil) }
func (w pebbleDirect) delRange(start, end []byte) error {
	return w.b.DeleteRange(w.e.newDataKey(start), w.e.newDataKey(end), nil)
}
func (w pebbleDirect) setMeta(k string, v []byte) error {
	if v == nil {
		return w.b.Delete(w.e.metaKey(k), nil)
	}
	return w.b.Set(w.e.metaKey(k), v, nil)
}

// uncommittedBytes approximates the memory the staged writes hold: the
// overlay's, and a window or session store's staged band entries, which
// the bands let go of only once committed (a held store's memory engine
// keeps its state whether committed or not, and counts none).
func (e *pebbleEngine) uncommittedBytes() int64 {
	n := e.overlay.bytes
	if s, ok := e.extra.(interface{ stagedBytes() int64 }); ok {
		n += s.stagedBytes()
	}
	return n
}
