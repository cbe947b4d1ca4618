package sgstate

import "bytes"

// engine is the ordered byte store with staging that every built-in store is
// written against. The memory and Pebble engines implement it, so the
// key-value, window and session logic exists once and both variants answer
// identically by construction.
//
// Keys passed to scan callbacks are valid only during the callback.
type engine interface {
	get(k []byte) ([]byte, bool, error) // a copy
	// scan visits [lower, upper) (nil = open) in order.
	scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error
	// staged is the writer for normal operation; its writes are staged until
	// commit.
	staged() writer
	// direct runs fn with a writer whose writes become committed state
	// atomically when fn returns nil (restoration). Fails with
	// ErrStagedWrites if writes are staged.
	direct(fn func(w writer) error) error
	hasStaged() bool
	// getMeta reads store metadata (staged view); the value is a copy.
	getMeta(k string) ([]byte, bool, error)
	commit(checkpoint map[string]int64) error
	abort() error
	checkpoint() (map[string]int64, error)
	flush() error
	close() error
}

type writer interface {
	set(k, v []byte) error
	del(k []byte) error
	// delRange deletes [start, end).
	delRange(start, end []byte) error
	// setMeta writes store metadata; v nil deletes the key.
	setMeta(k string, v []byte) error
}

// memEngine keeps committed state in one skiplist and staged writes in an
// overlay skiplist whose tombstones hide committed keys. Commit folds the
// overlay in; Abort drops it.
type memEngine struct {
	committed *skiplist
	overlay   *skiplist
	meta      map[string][]byte
	// metaStage holds staged metadata writes; a nil value is a staged
	// delete.
	metaStage map[string][]byte
	cp        map[string]int64
}

func newMemEngine() *memEngine {
	return &memEngine{committed: newSkiplist(), overlay: newSkiplist(), meta: map[string][]byte{}, metaStage: map[string][]byte{}}
}

func (e *memEngine) get(k []byte) ([]byte, bool, error) {
	if n := e.overlay.get(k); n != nil {
		if n.tomb {
			return nil, false, nil
		}
		return cloneBytes(n.value), true, nil
	}
	if n := e.committed.get(k); n != nil {
		return cloneBytes(n.value), true, nil
	}
	return nil, false, nil
}

func (e *memEngine) scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	if e.overlay.n == 0 {
		return scanList(e.committed, lower, upper, reverse, fn)
	}
	var a, b *slNode // a overlay, b committed
	if reverse {
		a, b = e.overlay.seekLT(upper), e.committed.seekLT(upper)
	} else {
		a, b = e.overlay.seekGE(lower), e.committed.seekGE(lower)
	}
	for a != nil || b != nil {
		var n *slNode
		switch {
		case a == nil:
			n = b
		case b == nil:
			n = a
		default:
			c := bytes.Compare(a.key, b.key)
			if reverse {
				c = -c
			}
			switch {
			case c < 0:
				n = a
			case c > 0:
				n = b
			default:
				n = a
				b = step(b, reverse)
			}
		}
		if !inBounds(n.key, lower, upper, reverse) {
			return nil
		}
		if n == a {
			a = step(a, reverse)
		} else {
			b = step(b, reverse)
		}
		if n.tomb {
			continue
		}
		if err := fn(n.key, n.value); err != nil {
			return err
		}
	}
	return nil
}

func step(n *slNode, reverse bool) *slNode {
	if reverse {
		return n.prev
	}
	return n.next[0]
}

func inBounds(k, lower, upper []byte, reverse bool) bool {
	if reverse {
		return lower == nil || bytes.Compare(k, lower) >= 0
	}
	return upper == nil || bytes.Compare(k, upper) < 0
}

func scanList(l *skiplist, lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	var n *slNode
	if reverse {
		n = l.seekLT(upper)
	} else {
		n = l.seekGE(lower)
	}
	for ; n != nil && inBounds(n.key, lower, upper, reverse); n = step(n, reverse) {
		if n.tomb {
			continue
		}
		if err := fn(n.key, n.value); err != nil {
			return err
		}
	}
	return nil
}

func (e *memEngine) staged() writer { return memStaged{e} }

func (e *memEngine) hasStaged() bool { return e.overlay.n > 0 || len(e.metaStage) > 0 }

func (e *memEngine) direct(fn func(w writer) error) error {
	if e.hasStaged() {
		return ErrStagedWrites
	}
	// Restoration writes into the overlay and commits it, so a failing fn
	// leaves the committed state untouched.
	if err := fn(memStaged{e}); err != nil {
		e.abort()
		return err
	}
	return e.commit(nil)
}

func (e *memEngine) getMeta(k string) ([]byte, bool, error) {
	v, ok := e.metaStage[k]
	if !ok {
		v, ok = e.meta[k]
	}
	if !ok || v == nil {
		return nil, false, nil
	}
	return cloneBytes(v), true, nil
}

func (e *memEngine) commit(cp map[string]int64) error {
	for n := range e.overlay.all {
		if n.tomb {
			e.committed.remove(n.key)
		} else {
			e.committed.set(n.key, n.value, false)
		}
	}
	e.overlay.reset()
	for k, v := range e.metaStage {
		if v == nil {
			delete(e.meta, k)
		} else {
			e.meta[k] = v
		}
	}
	clear(e.metaStage)
	if cp != nil {
		e.cp = copyCheckpoint(cp)
	}
	return nil
}

func (e *memEngine) abort() error {
	e.overlay.reset()
	clear(e.metaStage)
	return nil
}

func (e *memEngine) checkpoint() (map[string]int64, error) { return copyCheckpoint(e.cp), nil }
func (e *memEngine) flush() error                          { return nil }
func (e *memEngine) close() error                          { return e.abort() }

type memStaged struct{ e *memEngine }

func (w memStaged) set(k, v []byte) error {
	overlaySet(w.e.overlay, k, v, false)
	return nil
}

// overlaySet stages a copy of v (a tombstone if tomb) for k in an overlay
// list. An existing node is overwritten in place and keeps its copy of the
// key, so only new keys are copied; a new key and its value share one
// allocation.
func overlaySet(l *skiplist, k, v []byte, tomb bool) {
	if n := l.get(k); n != nil {
		var val []byte
		if !tomb {
			val = append(make([]byte, 0, len(v)), v...)
		}
		n.value, n.tomb = val, tomb
		return
	}
	buf := make([]byte, len(k)+len(v))
	key := buf[:copy(buf, k):len(k)]
	var val []byte
	if !tomb {
		val = buf[len(k):]
		copy(val, v)
	}
	l.add(key, val, tomb)
}

func (w memStaged) del(k []byte) error {
	if w.e.committed.get(k) == nil {
		// Nothing to hide: drop a staged insert instead of keeping a tombstone.
		w.e.overlay.remove(k)
		return nil
	}
	overlaySet(w.e.overlay, k, nil, true)
	return nil
}

func (w memStaged) delRange(start, end []byte) error {
	var keys [][]byte
	err := w.e.scan(start, end, false, func(k, _ []byte) error {
		keys = append(keys, k)
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := w.del(k); err != nil {
			return err
		}
	}
	return nil
}

func (w memStaged) setMeta(k string, v []byte) error {
	w.e.metaStage[k] = cloneBytes(v)
	return nil
}
