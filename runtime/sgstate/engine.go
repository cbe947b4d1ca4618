package sgstate

import (
	"bytes"
	"slices"
)

// engine is the ordered byte store with staging that every built-in store is
// written against. The memory and Pebble engines implement it, so the
// key-value, window and session logic exists once and both variants answer
// identically by construction.
//
// Keys passed to scan callbacks are valid only during the callback.
type engine interface {
	get(k []byte) ([]byte, bool, error) // a copy
	// getStaged is get for a key the caller knows has no committed value:
	// it looks only at the writes staged since the last commit.
	getStaged(k []byte) ([]byte, bool, error)
	// scanStaged is scan for a range the caller knows holds no committed
	// key.
	scanStaged(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error
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

// writer writes to an engine. Every method copies the bytes it keeps, so
// callers may reuse their buffers once a call returns.
type writer interface {
	set(k, v []byte) error
	del(k []byte) error
	// delRange deletes [start, end).
	delRange(start, end []byte) error
	// setMeta writes store metadata; v nil deletes the key.
	setMeta(k string, v []byte) error
}

// memEngine keeps committed and staged state in one skiplist: a node holds
// its key's committed value, if any, and its staged write, if any, and
// dirty lists the nodes that have one. A read or a write finds its key
// with one index lookup whether the key is staged or not, Commit applies
// the staged writes without looking their keys up again, and a scan walks
// one list where an overlay list would have to be merged with the
// committed one. Abort reverts the staged nodes.
type memEngine struct {
	list *skiplist
	// dirty are the nodes written since the last commit, in the order of
	// their first write. A staged insert deleted again leaves the list and
	// keeps no staged write (stNone); commit and abort skip it.
	dirty   []*slNode
	nstaged int // nodes in dirty with a staged write
	meta    map[string][]byte
	// metaStage holds staged metadata writes; a nil value is a staged
	// delete.
	metaStage map[string][]byte
	cp        map[string]int64
}

// minDirtyCompact is the length from which memEngine.stage drops the
// dirty list's entries that no longer have a staged write.
const minDirtyCompact = 1024

// Staged writes of a memEngine node (slNode.stage).
const (
	stNone uint8 = iota
	stSet        // slNode.staged is the staged value
	stDel        // a staged delete of a committed value
)

// stagedWrite is what a staged write of stage st (with staged value
// staged) commits: the value, nil for a delete; ok is false when there is
// none (stNone).
func stagedWrite(st uint8, staged []byte) (v []byte, ok bool) {
	switch st {
	case stSet:
		return staged, true
	case stDel:
		return nil, true
	}
	return nil, false
}

func newMemEngine() *memEngine {
	return &memEngine{list: newSkiplist(), meta: map[string][]byte{}, metaStage: map[string][]byte{}}
}

// visible is the value a memEngine node shows inside the transaction: the
// staged write, else the committed value.
func (n *slNode) visible() ([]byte, bool) {
	switch n.stage {
	case stSet:
		return n.staged, true
	case stDel:
		return nil, false
	}
	return n.value, n.committed
}

func (e *memEngine) get(k []byte) ([]byte, bool, error) {
	if n := e.list.get(k); n != nil {
		if v, ok := n.visible(); ok {
			return cloneBytes(v), true, nil
		}
	}
	return nil, false, nil
}

// getStaged is get: the memory engine finds staged and committed values
// with the same lookup.
func (e *memEngine) getStaged(k []byte) ([]byte, bool, error) { return e.get(k) }

// scanStaged is scan: committed and staged keys are in one list, and the
// range holds no committed one to skip.
func (e *memEngine) scanStaged(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	return e.scan(lower, upper, reverse, fn)
}

func (e *memEngine) scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	var n *slNode
	if reverse {
		n = e.list.seekLT(upper)
	} else {
		n = e.list.seekGE(lower)
	}
	for ; n != nil && inBounds(n.key, lower, upper, reverse); n = step(n, reverse) {
		v, ok := n.visible()
		if !ok {
			continue
		}
		if err := fn(n.key, v); err != nil {
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

func (e *memEngine) staged() writer { return memStaged{e} }

func (e *memEngine) hasStaged() bool { return e.nstaged > 0 || len(e.metaStage) > 0 }

func (e *memEngine) direct(fn func(w writer) error) error {
	if e.hasStaged() {
		return ErrStagedWrites
	}
	// Restoration stages its writes and commits them, so a failing fn
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
	for _, n := range e.dirty {
		switch n.stage {
		case stSet:
			n.value, n.committed = n.staged, true
		case stDel:
			e.list.remove(n.key)
			n.value, n.committed = nil, false
		default:
			continue
		}
		n.stage, n.staged = stNone, nil
	}
	e.resetStaged()
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
	for _, n := range e.dirty {
		if n.stage == stNone {
			continue
		}
		if !n.committed {
			e.list.remove(n.key)
		}
		n.stage, n.staged = stNone, nil
	}
	e.resetStaged()
	clear(e.metaStage)
	return nil
}

func (e *memEngine) resetStaged() {
	clear(e.dirty)
	e.dirty, e.nstaged = e.dirty[:0], 0
}

func (e *memEngine) checkpoint() (map[string]int64, error) { return copyCheckpoint(e.cp), nil }
func (e *memEngine) flush() error                          { return nil }
func (e *memEngine) close() error                          { return e.abort() }

type memStaged struct{ e *memEngine }

func (w memStaged) set(k, v []byte) error {
	w.e.set(k, v)
	return nil
}

// set stages a copy of v for k and reports whether k was new to the list.
func (e *memEngine) set(k, v []byte) (inserted bool) {
	n := e.list.get(k)
	if inserted = n == nil; inserted {
		key, val := copyKeyValue(k, v, false)
		n = e.list.add(key, nil, false)
		n.staged = val
	} else {
		n.staged = append(make([]byte, 0, len(v)), v...)
	}
	e.stage(n, stSet)
	return inserted
}

// stage records a staged write (stSet or stDel) on n.
func (e *memEngine) stage(n *slNode, st uint8) {
	if n.stage == stNone {
		if len(e.dirty) >= minDirtyCompact && e.nstaged < len(e.dirty)/2 {
			// Most of the list are staged inserts deleted again (a
			// stream-stream join's unmatched records, matched within one
			// commit interval): drop them, or the list keeps every such
			// node alive until the commit, 180 MB in 8 s of a join's
			// at_least_once run. At least half go, so the copying is
			// amortized.
			e.dirty = slices.DeleteFunc(e.dirty, func(n *slNode) bool { return n.stage == stNone })
		}
		e.dirty = append(e.dirty, n)
		e.nstaged++
	}
	n.stage = st
}

// overlaySet stages a copy of v (a tombstone if tomb) for k in an overlay
// list. An existing node is overwritten in place and keeps its copy of the
// key, so only new keys are copied.
func overlaySet(l *skiplist, k, v []byte, tomb bool) {
	if n := l.get(k); n != nil {
		var val []byte
		if !tomb {
			val = append(make([]byte, 0, len(v)), v...)
		}
		l.bytes += int64(len(val) - len(n.value))
		n.value, n.tomb = val, tomb
		return
	}
	key, val := copyKeyValue(k, v, tomb)
	l.add(key, val, tomb)
}

// copyKeyValue copies a new key and its value (none if tomb) into one
// allocation. The value is non-nil even when empty: an empty value is not
// a delete.
func copyKeyValue(k, v []byte, tomb bool) (key, val []byte) {
	n := len(k)
	if !tomb {
		n += len(v)
	}
	buf := make([]byte, n)
	key = buf[:copy(buf, k):len(k)]
	if !tomb {
		val = buf[len(k):]
		copy(val, v)
	}
	return key, val
}

func (w memStaged) del(k []byte) error {
	e := w.e
	n := e.list.get(k)
	switch {
	case n == nil:
		// Neither committed nor staged: nothing to hide.
	case !n.committed:
		// A staged insert: drop it instead of keeping a tombstone.
		e.list.remove(k)
		n.stage, n.staged = stNone, nil
		e.nstaged--
	default:
		n.staged = nil
		e.stage(n, stDel)
	}
	return nil
}

func (w memStaged) delRange(start, end []byte) error {
	for _, n := range w.e.list.inRange(start, end, nil) {
		if _, ok := n.visible(); ok {
			if err := w.del(n.key); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w memStaged) setMeta(k string, v []byte) error {
	w.e.metaStage[k] = cloneBytes(v)
	return nil
}
