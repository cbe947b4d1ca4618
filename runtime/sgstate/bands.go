package sgstate

import (
	"bytes"
	"math"
	"slices"
)

// bands keeps the entries of a window or session store in memory, one
// band per time segment. It is the whole store of an in-memory window or
// session store, and the in-memory copy of a Pebble store's newest
// segments: the index of open windows that answers a windowed
// aggregation's reads (which mostly ask for windows that do not exist yet)
// without a Pebble lookup.
//
// A segment ends up in one place: segments from `from` on are held
// completely here; older ones only in the engine (Pebble), where reads and
// writes of them go. A Pebble store moves `from` forward, never back, when
// it drops a band: when the band expired, or to stay within limit after a
// commit. Its bands' staged writes reach Pebble in the engine's commit
// batch (appendStaged), not through the engine's own overlay.
type bands struct {
	m map[int64]*band
	// from is the first segment held here (math.MinInt64: all of them).
	from int64
	// limit is the memory a Pebble store's bands may keep after a commit;
	// 0 is no limit (an in-memory store).
	limit int64
	// ttLen is the length of an entry's time and tail: 12 for windows
	// (start, seqnum), 16 for sessions (end, start).
	ttLen int
	// dirty are the segments written since the last commit or abort.
	dirty []int64
	// bytes is the estimated memory of the bands, as of the last
	// estimate.
	bytes int64
	// scratch is scan's snapshot of the entries it visits.
	scratch []*bandEntry
}

// band is one segment's entries, by key: the reads of windowed
// aggregations and joins are per key (a fetch of one key's windows over a
// time range, or one window), and keys have few windows in a segment, so a
// map of small sorted lists answers them without the ordered index over
// all keys that only the rare time-ordered read would use.
//
// Each entry has a committed value and a staged write, as the memory
// engine's nodes do: reads see the staged write, commit makes it the
// committed value, abort drops it.
type band struct {
	seg   int64
	keys  map[string]*bandKey // by escaped user key
	dirty []*bandEntry        // entries written since the last commit or abort
	n     int                 // entries committed or staged as inserts
	// isDirty says the segment is in bands.dirty.
	isDirty bool
	inserts int64 // entries ever inserted
	kvBytes int64 // their key and value bytes
}

// bandKey is one key's entries in a segment, sorted by time and tail.
type bandKey struct {
	esc []byte // the escaped key
	es  []*bandEntry
	one [1]*bandEntry // es's first array: most keys have one window a segment
}

// bandKeyEntry allocates a key with its first entry.
type bandKeyEntry struct {
	bandKey
	bandEntry
}

type bandEntry struct {
	k         *bandKey
	tt        []byte // time | tail
	value     []byte // committed value, if committed
	committed bool
	staged    []byte // the staged value when stage is stSet
	stage     uint8  // stNone, stSet or stDel, as in the memory engine
}

// visible is the value an entry shows inside the transaction.
func (e *bandEntry) visible() ([]byte, bool) {
	switch e.stage {
	case stSet:
		return e.staged, true
	case stDel:
		return nil, false
	}
	return e.value, e.committed
}

// bandEntryOverhead estimates what a band spends per entry beyond its key
// and value: the entry, its list slot and its share of the key's map slot,
// rounded up.
const bandEntryOverhead = 160

// DefaultWindowMemoryBytes is how much memory a Pebble window or session
// store keeps its newest segments in, by default (WindowOptions.MemoryBytes,
// SessionOptions.MemoryBytes).
const DefaultWindowMemoryBytes = 16 << 20

func newBands(limit int64, ttLen int) *bands {
	return &bands{m: map[int64]*band{}, from: math.MinInt64, limit: limit, ttLen: ttLen}
}

// holds reports whether segment seg is held here.
func (b *bands) holds(seg int64) bool { return seg >= b.from }

// get returns the band of seg, or nil when it holds nothing.
func (b *bands) get(seg int64) *band { return b.m[seg] }

// writable returns the band of seg, creating it, and marks it dirty.
func (b *bands) writable(seg int64) *band {
	bd := b.m[seg]
	if bd == nil {
		bd = &band{seg: seg}
		// Sized like the band before it: segments of a store hold about
		// as many keys each, and growing a map of thousands of keys from
		// nothing rehashes it a dozen times.
		if prev := b.m[seg-1]; prev != nil {
			bd.keys = make(map[string]*bandKey, len(prev.keys))
		} else {
			bd.keys = map[string]*bandKey{}
		}
		b.m[seg] = bd
	}
	if !bd.isDirty {
		bd.isDirty = true
		b.dirty = append(b.dirty, seg)
	}
	return bd
}

// find returns the entry of esc and tt in bd, or nil.
func (bd *band) find(esc, tt []byte) *bandEntry {
	k := bd.keys[string(esc)]
	if k == nil {
		return nil
	}
	if i, ok := k.search(tt); ok {
		return k.es[i]
	}
	return nil
}

func (k *bandKey) search(tt []byte) (int, bool) {
	// Windows mostly arrive in time order: look at the last one first.
	if n := len(k.es); n > 0 {
		switch c := bytes.Compare(k.es[n-1].tt, tt); {
		case c == 0:
			return n - 1, true
		case c < 0:
			return n, false
		}
	}
	return slices.BinarySearchFunc(k.es, tt, func(e *bandEntry, tt []byte) int { return bytes.Compare(e.tt, tt) })
}

// view returns the visible value of esc and tt in segment seg. The value
// is never written in place, so it stays valid.
func (b *bands) view(seg int64, esc, tt []byte) ([]byte, bool) {
	if bd := b.m[seg]; bd != nil {
		if e := bd.find(esc, tt); e != nil {
			return e.visible()
		}
	}
	return nil, false
}

// set stages value (nil: a delete) for esc and tt in segment seg.
func (b *bands) set(seg int64, esc, tt, value []byte) {
	bd := b.writable(seg)
	k := bd.keys[string(esc)]
	if value == nil {
		if k != nil {
			if i, ok := k.search(tt); ok {
				bd.del(k, i)
			}
		}
		return
	}
	var e *bandEntry
	i, ok := 0, false
	if k != nil {
		i, ok = k.search(tt)
	}
	switch {
	case k == nil:
		// A new key and its entry: two allocations, one of them for the
		// escaped key, the time and tail, and the value.
		ke := &bandKeyEntry{}
		buf := append(append(append(make([]byte, 0, len(esc)+len(tt)+len(value)), esc...), tt...), value...)
		k, e = &ke.bandKey, &ke.bandEntry
		k.esc = buf[:len(esc):len(esc)]
		e.k, e.tt, e.staged = k, buf[len(esc):len(esc)+len(tt):len(esc)+len(tt)], buf[len(esc)+len(tt):]
		k.one[0] = e
		k.es = k.one[:]
		bd.keys[bytesString(k.esc)] = k // the key never changes
		bd.inserted(len(esc) + len(tt) + len(value))
	case ok:
		e = k.es[i]
		e.staged = append(make([]byte, 0, len(value)), value...)
	default:
		buf := append(append(make([]byte, 0, len(tt)+len(value)), tt...), value...)
		e = &bandEntry{k: k, tt: buf[:len(tt):len(tt)], staged: buf[len(tt):]}
		k.es = slices.Insert(k.es, i, e)
		bd.inserted(len(esc) + len(tt) + len(value))
	}
	bd.stage(e, stSet)
}

// inserted counts a new entry of kv key and value bytes.
func (bd *band) inserted(kv int) {
	bd.n++
	bd.inserts++
	bd.kvBytes += int64(kv)
}

// stage records a staged write (stSet or stDel) of e.
func (bd *band) stage(e *bandEntry, st uint8) {
	if e.stage == stNone {
		bd.dirty = append(bd.dirty, e)
	}
	e.stage = st
}

// del stages the delete of k's i-th entry: a staged insert leaves at once,
// a committed entry at commit.
func (bd *band) del(k *bandKey, i int) {
	e := k.es[i]
	if !e.committed {
		bd.unlink(k, i)
		e.stage, e.staged = stNone, nil
		return
	}
	e.staged = nil
	bd.stage(e, stDel)
}

// unlink removes k's i-th entry, and k when it was the last.
func (bd *band) unlink(k *bandKey, i int) {
	k.es = slices.Delete(k.es, i, i+1)
	bd.n--
	if len(k.es) == 0 {
		delete(bd.keys, string(k.esc))
	}
}

// scan visits esc's entries with time and tail in [lo, hi) (nil: open),
// in order or reverse; fn gets their time and tail. Bounds may be
// prefixes (a time without its tail).
func (b *bands) scan(seg int64, esc, lo, hi []byte, reverse bool, fn func(tt, v []byte) error) error {
	bd := b.m[seg]
	if bd == nil {
		return nil
	}
	k := bd.keys[string(esc)]
	if k == nil {
		return nil
	}
	i, j := 0, len(k.es)
	if lo != nil {
		i, _ = slices.BinarySearchFunc(k.es, lo, func(e *bandEntry, t []byte) int { return bytes.Compare(e.tt, t) })
	}
	if hi != nil {
		j, _ = slices.BinarySearchFunc(k.es, hi, func(e *bandEntry, t []byte) int { return bytes.Compare(e.tt, t) })
	}
	// fn may write to the store: visit a snapshot of the entries, in a
	// scratch slice that a scan inside fn does not share.
	es := append(b.scratch[:0], k.es[i:max(i, j)]...)
	b.scratch = nil
	defer func() { clear(es); b.scratch = es[:0] }()
	for n := range es {
		e := es[n]
		if reverse {
			e = es[len(es)-1-n]
		}
		if v, ok := e.visible(); ok {
			if err := fn(e.tt, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// each visits every visible entry of segment seg, in no order.
func (b *bands) each(seg int64, fn func(esc, tt, v []byte) error) error {
	bd := b.m[seg]
	if bd == nil {
		return nil
	}
	for _, k := range bd.keys {
		for _, e := range k.es {
			if v, ok := e.visible(); ok {
				if err := fn(k.esc, e.tt, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (b *bands) hasStaged() bool {
	for _, seg := range b.dirty {
		if bd := b.m[seg]; bd != nil {
			for _, e := range bd.dirty {
				if e.stage != stNone {
					return true
				}
			}
		}
	}
	return false
}

// appendStaged hands every staged write to add with its key in the
// engine's key space (idxKey | segment | escaped key | time | tail), for
// the engine's commit batch. v is nil for a delete.
func (b *bands) appendStaged(add func(k, v []byte) error) error {
	var kb []byte
	for _, seg := range b.dirty {
		bd := b.m[seg]
		if bd == nil {
			continue
		}
		p := appendTime(append(kb[:0], idxKey), seg)
		for _, e := range bd.dirty {
			v, ok := stagedWrite(e.stage, e.staged)
			if !ok {
				continue
			}
			kb = append(append(p, e.k.esc...), e.tt...)
			if err := add(kb, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// commit makes the staged writes committed (after the engine's commit,
// which wrote them to Pebble) and drops bands left empty.
func (b *bands) commit() { b.settle(true) }

// abort drops the staged writes.
func (b *bands) abort() { b.settle(false) }

func (b *bands) settle(commit bool) {
	for _, seg := range b.dirty {
		bd := b.m[seg]
		if bd == nil {
			continue
		}
		for _, e := range bd.dirty {
			bd.settleEntry(e, commit)
		}
		clear(bd.dirty)
		bd.dirty, bd.isDirty = bd.dirty[:0], false
		if bd.n == 0 {
			delete(b.m, seg)
		}
	}
	clear(b.dirty)
	b.dirty = b.dirty[:0]
}

// settleEntry commits or aborts e's staged write.
func (bd *band) settleEntry(e *bandEntry, commit bool) {
	switch {
	case e.stage == stNone:
		return
	case commit && e.stage == stSet:
		e.value, e.committed = e.staged, true
	case commit: // a committed entry deleted
		if i, ok := e.k.search(e.tt); ok {
			bd.unlink(e.k, i)
		}
		e.value, e.committed = nil, false
	case !e.committed: // an aborted insert
		if i, ok := e.k.search(e.tt); ok {
			bd.unlink(e.k, i)
		}
	}
	e.stage, e.staged = stNone, nil
}

// dropBelow forgets the segments below seg and stops holding them.
func (b *bands) dropBelow(seg int64) {
	if seg <= b.from {
		return
	}
	for s := range b.m {
		if s < seg {
			delete(b.m, s)
		}
	}
	b.from = seg
	b.dirty = slices.DeleteFunc(b.dirty, func(s int64) bool { return s < seg })
}

// stagedBytes estimates the memory of the entries written since the last
// commit or abort, at their segment's average size: a Pebble store's
// bands keep within their limit only after a commit (shrink), so between
// two commits they grow with every new window, and the worker's early
// commit needs to see them.
func (b *bands) stagedBytes() int64 {
	var n int64
	for _, seg := range b.dirty {
		if bd := b.m[seg]; bd != nil && bd.inserts > 0 {
			n += int64(len(bd.dirty)) * (bandEntryOverhead + bd.kvBytes/bd.inserts)
		}
	}
	return n
}

// estimate returns the estimated memory of the bands.
func (b *bands) estimate() int64 {
	b.bytes = 0
	for _, bd := range b.m {
		b.bytes += bd.estimate()
	}
	return b.bytes
}

func (bd *band) estimate() int64 {
	n := int64(bd.n)
	if bd.inserts == 0 {
		return n * bandEntryOverhead
	}
	return n * (bandEntryOverhead + bd.kvBytes/bd.inserts)
}

// shrink drops the oldest segments until the bands are within limit; it
// is called when nothing is staged, so every dropped entry is in Pebble.
func (b *bands) shrink() {
	if b.limit <= 0 || b.estimate() <= b.limit {
		return
	}
	segs := make([]int64, 0, len(b.m))
	for s := range b.m {
		segs = append(segs, s)
	}
	slices.Sort(segs)
	for _, s := range segs {
		b.bytes -= b.m[s].estimate()
		b.dropBelow(s + 1)
		if b.bytes <= b.limit {
			return
		}
	}
}
