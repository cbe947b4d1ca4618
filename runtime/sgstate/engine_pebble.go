package sgstate

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
)

// storeFormatVersion is the on-disk format of the Pebble stores: the key
// prefixes and encodings in this package. Bump it when they change; stores
// written by another version refuse to open (the state is then rebuilt from
// the changelog).
const storeFormatVersion = "1"

// Pebble key space: one DB per store and task. Metadata lives under 0x00,
// store data under 0x01; the data key space is what the store code sees.
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

// pebbleEngine stages writes in an indexed batch (reads see their own
// writes) and commits it together with the checkpoint key in one atomic
// batch.
type pebbleEngine struct {
	db    *pebble.DB
	batch *pebble.Batch // nil: nothing staged
	wo    *pebble.WriteOptions
	kbuf  []byte
}

func openPebbleEngine(name, dir string, o PebbleOptions, layout string, logger *slog.Logger) (*pebbleEngine, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, o.pebbleOptions(logger))
	if err != nil {
		return nil, fmt.Errorf("streamgen: state store %q: open pebble: %w", name, err)
	}
	// Always a synced commit: it is the only way to make Pebble write the
	// batch to its WAL file before Commit returns (NoSync leaves it in a
	// 32 KiB in-process buffer, lost with the process). Unless o.Sync, the
	// WAL's fsync is skipped (walWriteThroughFS).
	e := &pebbleEngine{db: db, wo: pebble.Sync}
	if err := e.checkVersion(name, o.Fingerprint, layout); err != nil {
		db.Close()
		return nil, err
	}
	return e, nil
}

// checkVersion records format, layout and fingerprint on first open and
// compares them on later opens (style convention 19).
func (e *pebbleEngine) checkVersion(name, fingerprint, layout string) error {
	format, found, err := e.getMeta(metaFormat)
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
		b.Set(e.metaKey(metaFormat), []byte(storeFormatVersion), nil)
		b.Set(e.metaKey(metaLayout), []byte(layout), nil)
		b.Set(e.metaKey(metaFingerprint), []byte(fingerprint), nil)
		return b.Commit(pebble.Sync)
	}
	if string(format) != storeFormatVersion {
		return fmt.Errorf("%w: store %q: store format version on disk %q, this binary %q",
			ErrFormatMismatch, name, format, storeFormatVersion)
	}
	gotLayout, _, err := e.getMeta(metaLayout)
	if err != nil {
		return err
	}
	if string(gotLayout) != layout {
		return fmt.Errorf("%w: store %q: layout on disk %q, this binary %q",
			ErrFormatMismatch, name, gotLayout, layout)
	}
	fp, _, err := e.getMeta(metaFingerprint)
	if err != nil {
		return err
	}
	if string(fp) != fingerprint {
		return fmt.Errorf("%w: store %q: schema fingerprint on disk %q, this binary %q (delete the store directory to rebuild it from the changelog)",
			ErrSchemaMismatch, name, fp, fingerprint)
	}
	return nil
}

func (e *pebbleEngine) dataKey(k []byte) []byte {
	e.kbuf = append(append(e.kbuf[:0], pebbleDataPrefix), k...)
	return e.kbuf
}

func (e *pebbleEngine) metaKey(k string) []byte {
	return append([]byte{pebbleMetaPrefix}, k...)
}

type pebbleReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

func (e *pebbleEngine) reader() pebbleReader {
	if e.batch != nil {
		return e.batch
	}
	return e.db
}

func (e *pebbleEngine) getRaw(r pebbleReader, k []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(k)
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
	return e.getRaw(e.reader(), e.dataKey(k))
}

func (e *pebbleEngine) scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	opts := pebble.IterOptions{LowerBound: append([]byte{pebbleDataPrefix}, lower...)}
	if upper != nil {
		opts.UpperBound = append([]byte{pebbleDataPrefix}, upper...)
	} else {
		opts.UpperBound = []byte{pebbleDataPrefix + 1}
	}
	it, err := e.reader().NewIter(&opts)
	if err != nil {
		return fmt.Errorf("streamgen: pebble iterator: %w", err)
	}
	var ok bool
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = stepIter(it, reverse) {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("streamgen: pebble iterator: %w", err)
		}
		if err := fn(it.Key()[1:], v); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("streamgen: pebble iterator: %w", err)
	}
	return nil
}

func stepIter(it *pebble.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

func (e *pebbleEngine) stage() *pebble.Batch {
	if e.batch == nil {
		e.batch = e.db.NewIndexedBatch()
	}
	return e.batch
}

func (e *pebbleEngine) staged() writer { return pebbleStaged{e} }

func (e *pebbleEngine) hasStaged() bool { return e.batch != nil && !e.batch.Empty() }

func (e *pebbleEngine) direct(fn func(w writer) error) error {
	if e.hasStaged() {
		return ErrStagedWrites
	}
	b := e.db.NewBatch()
	defer b.Close()
	if err := fn(pebbleDirect{e: e, b: b}); err != nil {
		return err
	}
	if err := b.Commit(e.wo); err != nil {
		return fmt.Errorf("streamgen: pebble commit: %w", err)
	}
	return nil
}

func (e *pebbleEngine) getMeta(k string) ([]byte, bool, error) {
	return e.getRaw(e.reader(), e.metaKey(k))
}

func (e *pebbleEngine) commit(cp map[string]int64) error {
	if e.batch == nil && cp == nil {
		return nil
	}
	b := e.stage()
	if cp != nil {
		enc, err := encodeCheckpoint(cp)
		if err != nil {
			return err
		}
		b.Set(e.metaKey(metaCheckpoint), enc, nil)
	}
	err := b.Commit(e.wo)
	b.Close()
	e.batch = nil
	if err != nil {
		return fmt.Errorf("streamgen: pebble commit: %w", err)
	}
	return nil
}

func (e *pebbleEngine) abort() error {
	if e.batch != nil {
		e.batch.Close()
		e.batch = nil
	}
	return nil
}

func (e *pebbleEngine) checkpoint() (map[string]int64, error) {
	v, _, err := e.getRaw(e.db, e.metaKey(metaCheckpoint))
	if err != nil {
		return nil, err
	}
	return decodeCheckpoint(v)
}

func (e *pebbleEngine) flush() error { return nil }

func (e *pebbleEngine) close() error {
	e.abort()
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("streamgen: pebble close: %w", err)
	}
	return nil
}

type pebbleStaged struct{ e *pebbleEngine }

func (w pebbleStaged) set(k, v []byte) error {
	return w.e.stage().Set(w.e.dataKey(k), v, nil)
}

func (w pebbleStaged) del(k []byte) error {
	return w.e.stage().Delete(w.e.dataKey(k), nil)
}

func (w pebbleStaged) delRange(start, end []byte) error {
	return w.e.stage().DeleteRange(append([]byte{pebbleDataPrefix}, start...), append([]byte{pebbleDataPrefix}, end...), nil)
}

func (w pebbleStaged) setMeta(k string, v []byte) error {
	if v == nil {
		return w.e.stage().Delete(w.e.metaKey(k), nil)
	}
	return w.e.stage().Set(w.e.metaKey(k), v, nil)
}

type pebbleDirect struct {
	e *pebbleEngine
	b *pebble.Batch
}

func (w pebbleDirect) set(k, v []byte) error { return w.b.Set(w.e.dataKey(k), v, nil) }
func (w pebbleDirect) del(k []byte) error    { return w.b.Delete(w.e.dataKey(k), nil) }
func (w pebbleDirect) delRange(start, end []byte) error {
	return w.b.DeleteRange(append([]byte{pebbleDataPrefix}, start...), append([]byte{pebbleDataPrefix}, end...), nil)
}
func (w pebbleDirect) setMeta(k string, v []byte) error {
	if v == nil {
		return w.b.Delete(w.e.metaKey(k), nil)
	}
	return w.b.Set(w.e.metaKey(k), v, nil)
}
