package sgstate

// heldEngine is a Pebble store that also holds its whole state in memory:
// a memory engine answers every read and stages every write, and Pebble is
// only the durable copy, which gets the staged writes in the commit batch
// (with the checkpoint, as any Pebble store's) and is read once, when the
// store opens. It suits a small store that is read on every record, where
// Pebble would answer most reads after a search of its memtables and
// sstables for a key that is not there: a stream-stream join's buffer of
// unmatched records (Kafka's KeyAndJoinSide store), which every match
// looks up to delete.
//
// Metadata, the checkpoint and flushing are Pebble's; data never is read
// back from it while the store is open.
type heldEngine struct {
	mem *memEngine
	db  *pebbleEngine
}

var _ extraStaged = (*memEngine)(nil)

// holdPebble loads the committed data of e into memory and returns the
// engine that keeps it there.
func holdPebble(e *pebbleEngine) (*heldEngine, error) {
	h := &heldEngine{mem: newMemEngine(), db: e}
	w := h.mem.staged()
	err := e.scan(nil, nil, false, func(k, v []byte) error { return w.set(k, v) })
	if err != nil {
		h.mem.abort()
		return nil, err
	}
	if err := h.mem.commit(nil); err != nil {
		return nil, err
	}
	e.extra = h.mem
	return h, nil
}

func (h *heldEngine) get(k []byte) ([]byte, bool, error)       { return h.mem.get(k) }
func (h *heldEngine) getStaged(k []byte) ([]byte, bool, error) { return h.mem.get(k) }

func (h *heldEngine) scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return h.mem.scan(lower, upper, reverse, fn)
}

func (h *heldEngine) scanStaged(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return h.mem.scan(lower, upper, reverse, fn)
}

func (h *heldEngine) staged() writer { return heldStaged{h} }

func (h *heldEngine) hasStaged() bool { return h.db.hasStaged() }

// direct writes restored records to both copies: Pebble's batch and the
// memory engine, whose writes become committed once the batch is.
func (h *heldEngine) direct(fn func(w writer) error) error {
	if h.hasStaged() {
		return ErrStagedWrites
	}
	err := h.db.direct(func(w writer) error {
		return fn(teeWriter{w, h.mem.staged()})
	})
	if err != nil {
		h.mem.abort()
		return err
	}
	return h.mem.commit(nil)
}

func (h *heldEngine) getMeta(k string) ([]byte, bool, error) { return h.db.getMeta(k) }

// commit writes the memory engine's staged writes to Pebble (its extra
// staged writes) with the checkpoint, then makes them committed in memory.
func (h *heldEngine) commit(cp map[string]int64) error {
	if err := h.db.commit(cp); err != nil {
		return err
	}
	return h.mem.commit(nil)
}

func (h *heldEngine) abort() error {
	h.mem.abort()
	return h.db.abort()
}

func (h *heldEngine) checkpoint() (map[string]int64, error) { return h.db.checkpoint() }
func (h *heldEngine) flush() error                          { return h.db.flush() }

func (h *heldEngine) close() error {
	h.mem.abort()
	return h.db.close()
}

// heldStaged stages data writes in memory and metadata in Pebble's
// staging, which commits it.
type heldStaged struct{ h *heldEngine }

func (w heldStaged) set(k, v []byte) error { return memStaged{w.h.mem}.set(k, v) }
func (w heldStaged) del(k []byte) error    { return memStaged{w.h.mem}.del(k) }
func (w heldStaged) delRange(start, end []byte) error {
	return memStaged{w.h.mem}.delRange(start, end)
}
func (w heldStaged) setMeta(k string, v []byte) error { return w.h.db.staged().setMeta(k, v) }

// teeWriter writes to two writers.
type teeWriter struct{ a, b writer }

func (t teeWriter) set(k, v []byte) error {
	if err := t.a.set(k, v); err != nil {
		return err
	}
	return t.b.set(k, v)
}

func (t teeWriter) del(k []byte) error {
	if err := t.a.del(k); err != nil {
		return err
	}
	return t.b.del(k)
}

func (t teeWriter) delRange(start, end []byte) error {
	if err := t.a.delRange(start, end); err != nil {
		return err
	}
	return t.b.delRange(start, end)
}

func (t teeWriter) setMeta(k string, v []byte) error { return t.a.setMeta(k, v) }

// appendStaged hands the staged writes to add (v nil: a delete): as a
// heldEngine's extra staged writes, they go into Pebble's commit batch.
func (e *memEngine) appendStaged(add func(k, v []byte) error) error {
	for _, n := range e.dirty {
		if v, ok := stagedWrite(n.stage, n.staged); ok {
			if err := add(n.key, v); err != nil {
				return err
			}
		}
	}
	return nil
}
