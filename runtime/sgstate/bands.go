package sgstate

import (
	"math"
	"slices"
)

// bands keeps the entries of a window or session store in memory, one
// staged ordered map (a memEngine) per time segment. It is the whole store
// of an in-memory window or session store, and the in-memory copy of a
// Pebble store's newest segments: the index of open windows that answers a
// windowed aggregation's reads (which mostly ask for windows that do not
// exist yet) without a Pebble lookup.
//
// Keys inside a band are the store's entry keys without the segment:
// escaped key | time | tail (see segmented.go). A segment ends up in one
// place: segments from `from` on are held completely here; older ones
// only in the engine (Pebble), where reads and writes of them go. A Pebble
// store moves `from` forward, never back, when it drops a band: when the
// band expired, or to stay within limit after a commit. Its bands' staged
// writes reach Pebble in the engine's commit batch (appendStaged), not
// through the engine's own overlay.
type bands struct {
	m map[int64]*band
	// from is the first segment held here (math.MinInt64: all of them).
	from int64
	// limit is the memory a Pebble store's bands may keep after a commit;
	// 0 is no limit (an in-memory store).
	limit int64
	// dirty are the segments written since the last commit or abort.
	dirty []int64
	// bytes is the estimated memory of the bands, as of the last
	// estimate.
	bytes int64
}

// band is one segment's entries, with what estimates their memory.
type band struct {
	e       *memEngine
	seg     int64
	dirty   bool
	inserts int64 // keys ever inserted
	kvBytes int64 // their key and value bytes
}

// bandEntryOverhead estimates what the memEngine spends per entry beyond
// its key and value: the skiplist node, its index map slot and the list
// links, rounded up.
const bandEntryOverhead = 200

// DefaultWindowMemoryBytes is how much memory a Pebble window or session
// store keeps its newest segments in, by default (WindowOptions.MemoryBytes,
// SessionOptions.MemoryBytes).
const DefaultWindowMemoryBytes = 16 << 20

func newBands(limit int64) *bands {
	return &bands{m: map[int64]*band{}, from: math.MinInt64, limit: limit}
}

// holds reports whether segment seg is held here.
func (b *bands) holds(seg int64) bool { return seg >= b.from }

// get returns the band of seg, or nil when it holds nothing.
func (b *bands) get(seg int64) *band { return b.m[seg] }

// writable returns the band of seg, creating it, and marks it dirty.
func (b *bands) writable(seg int64) *band {
	bd := b.m[seg]
	if bd == nil {
		bd = &band{e: newMemEngine(), seg: seg}
		// Sized like the band before it: segments of a store hold about
		// as many windows each, and growing a map of thousands of keys
		// from nothing rehashes it a dozen times.
		if prev := b.m[seg-1]; prev != nil {
			bd.e.list.index = make(map[string]*slNode, prev.e.list.n)
		}
		b.m[seg] = bd
	}
	if !bd.dirty {
		bd.dirty = true
		b.dirty = append(b.dirty, seg)
	}
	return bd
}

// set stages value (nil: a delete) for key k of segment seg.
func (b *bands) set(seg int64, k, value []byte) {
	bd := b.writable(seg)
	if value == nil {
		memStaged{bd.e}.del(k)
		return
	}
	if bd.e.set(k, value) {
		bd.inserts++
		bd.kvBytes += int64(len(k) + len(value))
	}
}

func (b *bands) hasStaged() bool {
	for _, seg := range b.dirty {
		if bd := b.m[seg]; bd != nil && bd.e.hasStaged() {
			return true
		}
	}
	return false
}

// appendStaged hands every staged write to add with its key in the
// engine's key space (idxKey | segment | band key), for the engine's
// commit batch. v is nil for a delete.
func (b *bands) appendStaged(add func(k, v []byte) error) error {
	var kb []byte
	for _, seg := range b.dirty {
		bd := b.m[seg]
		if bd == nil {
			continue
		}
		p := appendTime(append(kb[:0], idxKey), seg)
		for _, n := range bd.e.dirty {
			var v []byte
			switch n.stage {
			case stSet:
				v = n.staged
			case stDel:
			default:
				continue
			}
			kb = append(p, n.key...)
			if err := add(kb, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// commit makes the staged writes committed (after the engine's commit,
// which wrote them to Pebble) and drops bands left empty.
func (b *bands) commit() {
	b.settle(func(e *memEngine) { e.commit(nil) })
}

// abort drops the staged writes.
func (b *bands) abort() {
	b.settle(func(e *memEngine) { e.abort() })
}

func (b *bands) settle(fn func(e *memEngine)) {
	for _, seg := range b.dirty {
		bd := b.m[seg]
		if bd == nil {
			continue
		}
		fn(bd.e)
		bd.dirty = false
		if bd.e.list.n == 0 {
			delete(b.m, seg)
		}
	}
	clear(b.dirty)
	b.dirty = b.dirty[:0]
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

// estimate returns the estimated memory of the bands.
func (b *bands) estimate() int64 {
	b.bytes = 0
	for _, bd := range b.m {
		b.bytes += bd.estimate()
	}
	return b.bytes
}

func (bd *band) estimate() int64 {
	n := int64(bd.e.list.n)
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
