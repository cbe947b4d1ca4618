package sgstate

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Window and session stores keep one index in the engine's key space:
//
//	idxKey | segment(8) | escaped key | time(8) | tail
//
// "time" is the window start (window store) or the session end (session
// store); "tail" is the seqnum (4 bytes) or the session start (8 bytes). A
// per-key fetch is one seek per live segment. The time-ordered reads
// (FetchAll, FetchEndedBetween), which only emit-on-close aggregations and
// interactive queries make, collect the entries of the segments they cover
// and sort them by time, then key: an emit-on-close aggregation reads each
// segment a few times over its life, which costs less than writing every
// entry a second time into a time-first index (the layout of store format
// 1), as every windowed aggregation did on every update.
//
// The entries of the newest segments are also held in memory (bands.go):
// all of them for an in-memory store, which has nothing else, and up to
// WindowOptions.MemoryBytes for a Pebble store, whose reads of those
// segments then never reach Pebble.
//
// Retention is Kafka's InMemoryWindowStore rule, applied identically by both
// engines: observed stream time is the largest time ever put; entries with
// time <= observed - retention are expired — dropped on put, filtered out of
// every read. Physically, expired data goes away a whole segment at a time
// (segment = floor(time / interval)): its band is dropped, and on Pebble
// one DeleteRange covers it, which is what makes expiry cheap there.
const idxKey = 0x02

const (
	metaObserved = "observed"
	metaSeq      = "seq"
)

// segmented holds the time bookkeeping shared by window and session stores,
// with committed copies so Abort can roll it back.
type segmented struct {
	retention int64
	interval  int64

	observed     int64
	seq          uint32
	cleanedBelow int64 // segments below this were deleted (staged view)

	cObserved, cCleaned int64
	cSeq                uint32
}

func newSegmented(retention, interval int64) segmented {
	return segmented{
		retention: retention, interval: interval,
		observed: math.MinInt64, cleanedBelow: math.MinInt64,
		cObserved: math.MinInt64, cCleaned: math.MinInt64,
	}
}

// segmentInterval is interval, or when that is 0 half the retention (at
// least 1 ms): a store then holds its live entries in about three
// segments. Kafka's default, max(retention / 2, 60 s), sizes segments for
// RocksDB instances, one per segment; here a segment is a key prefix of
// one Pebble store and a band in memory (bands.go), and a short retention
// with a minute of segments would keep sixty times the live windows in
// memory and in Pebble until their segment expires.
func segmentInterval(retention, interval int64) int64 {
	if interval != 0 {
		return interval
	}
	return max(retention/2, 1)
}

func validateRetention(kind, name string, retention, interval int64) error {
	if retention <= 0 {
		return fmt.Errorf("streamgen: %s store %q: retention %d ms, want > 0", kind, name, retention)
	}
	if interval <= 0 {
		return fmt.Errorf("streamgen: %s store %q: segment interval %d ms, want > 0", kind, name, interval)
	}
	return nil
}

// minLive is the smallest unexpired time.
func (g *segmented) minLive() int64 {
	if g.observed == math.MinInt64 {
		return math.MinInt64
	}
	return satAdd(satSub(g.observed, g.retention), 1)
}

func (g *segmented) expired(t int64) bool { return t < g.minLive() }

// observe advances observed stream time and reports whether t is expired.
func (g *segmented) observe(t int64) bool {
	g.observed = max(g.observed, t)
	return g.expired(t)
}

func (g *segmented) nextSeq() uint32 {
	g.seq = (g.seq + 1) & 0x7FFFFFFF
	return g.seq
}

func (g *segmented) segment(t int64) int64 { return floorDiv(t, g.interval) }

// clamp narrows [from, to] to the live range; ok false when empty.
func (g *segmented) clamp(from, to int64) (int64, int64, bool) {
	from = max(from, g.minLive())
	to = min(to, g.observed)
	return from, to, from <= to
}

// expireTo advances cleanedBelow to the first live segment; ok is false
// when no whole segment expired since the last call.
func (g *segmented) expireTo() (limit int64, ok bool) {
	if g.observed == math.MinInt64 {
		return 0, false
	}
	limit = g.segment(g.minLive())
	if limit <= g.cleanedBelow || limit < math.MinInt64/g.interval+1 {
		return 0, false
	}
	g.cleanedBelow = limit
	return limit, true
}

func (g *segmented) load(e engine) error {
	v, _, err := e.getMeta(metaObserved)
	if err != nil {
		return err
	}
	if len(v) == 8 {
		g.observed = readTime(v)
	}
	v, _, err = e.getMeta(metaSeq)
	if err != nil {
		return err
	}
	if len(v) == 4 {
		g.seq = binary.BigEndian.Uint32(v)
	}
	g.cleanedBelow = math.MinInt64
	g.markCommitted()
	return nil
}

func (g *segmented) save(w writer) error {
	if g.observed == g.cObserved && g.seq == g.cSeq {
		g.markCommitted()
		return nil
	}
	if err := w.setMeta(metaObserved, appendTime(nil, g.observed)); err != nil {
		return err
	}
	if err := w.setMeta(metaSeq, binary.BigEndian.AppendUint32(nil, g.seq)); err != nil {
		return err
	}
	g.markCommitted()
	return nil
}

func (g *segmented) markCommitted() {
	g.cObserved, g.cSeq, g.cCleaned = g.observed, g.seq, g.cleanedBelow
}

func (g *segmented) rollback() {
	g.observed, g.seq, g.cleanedBelow = g.cObserved, g.cSeq, g.cCleaned
}

// engineKey appends the engine's key of an entry: idxKey | segment |
// escaped key | time | tail.
func engineKey(dst []byte, seg int64, esc, tt []byte) []byte {
	return append(append(appendTime(append(dst, idxKey), seg), esc...), tt...)
}

// segmentPrefix is the length of idxKey | segment in engine keys.
const segmentPrefix = 9

// segmentedStore is the part window and session stores share on top of
// baseStore: the segmented bookkeeping, where an entry lives (a band in
// memory, the engine, or both), the per-segment reads and the restore
// loop. The two stores differ only in what "time" and "tail" are (see the
// layout above).
type segmentedStore struct {
	baseStore
	kind      string // "window" or "session", for errors
	retention int64
	interval  int64
	tailLen   int   // bytes of the tail: 4 (seqnum) or 8 (session start)
	memBytes  int64 // a Pebble store's MemoryBytes option
	seg       segmented
	// mem holds the newest segments, or all of them in an in-memory
	// store; nil for a Pebble store whose MemoryBytes is negative.
	mem *bands
	// durable says the entries live in the engine (Pebble) as well.
	durable bool
	buf     []byte // changelog key of the last Put
	esc     []byte // escaped key of the last Put or Get
	tt      []byte // time and tail of the last Put or Get
	kbuf    []byte // engine key of the last write or read
}

// initSegmented sets s up in place: the hooks it installs point at s.
func (s *segmentedStore) initSegmented(name, kind, layout string, retention, interval int64, tailLen int, memBytes int64, popts *PebbleOptions) {
	s.baseStore = newBase(name, layout, popts)
	s.kind, s.retention, s.interval, s.tailLen, s.memBytes = kind, retention, interval, tailLen, memBytes
	s.seg = newSegmented(retention, interval)
	s.onOpen = s.open
	s.onCommit = func(w writer) error { return s.seg.save(w) }
	s.onCommitted = s.settle
	s.onAbort = func() {
		s.seg.rollback()
		if s.mem != nil {
			s.mem.abort()
		}
	}
}

func (s *segmentedStore) open() error {
	if err := validateRetention(s.kind, s.name, s.retention, s.interval); err != nil {
		return err
	}
	s.seg = newSegmented(s.retention, s.interval)
	if err := s.seg.load(s.eng); err != nil {
		return err
	}
	pe, durable := s.eng.(*pebbleEngine)
	s.durable, s.mem = durable, nil
	switch {
	case !durable:
		s.mem = newBands(0, 8+s.tailLen)
	case s.memBytes >= 0:
		s.mem = newBands(cmp.Or(s.memBytes, DefaultWindowMemoryBytes), 8+s.tailLen)
		pe.extra = s.mem
		return s.loadBands()
	}
	return nil
}

// loadBands reads the live segments of a Pebble store into memory,
// newest first (one reverse scan), as far as they fit: a segment whose
// load would pass the limit stays in Pebble only, with all older ones.
func (s *segmentedStore) loadBands() error {
	if s.seg.observed == math.MinInt64 {
		return nil // an empty store: everything it will hold is new
	}
	top := s.seg.segment(s.seg.observed)
	s.mem.from = top + 1
	var full int64 // bytes of the segments loaded completely
	cur := int64(math.MinInt64)
	err := s.eng.scan(appendTime([]byte{idxKey}, s.seg.segment(s.seg.minLive())), appendTime([]byte{idxKey}, top+1), true,
		func(k, v []byte) error {
			sg := readTime(k[1:segmentPrefix])
			if sg != cur {
				if bd := s.mem.get(cur); bd != nil {
					full += bd.estimate()
					s.mem.from = cur
				}
				cur = sg
			}
			esc, tt := s.splitEntry(k[segmentPrefix:])
			s.mem.set(sg, esc, tt, v)
			if full+s.mem.get(sg).estimate() > s.mem.limit {
				return errStopGet
			}
			return nil
		})
	switch err {
	case nil:
		if s.mem.get(cur) != nil {
			s.mem.from = cur
		}
		s.mem.from = min(s.mem.from, s.seg.segment(s.seg.minLive()))
	case errStopGet:
		delete(s.mem.m, cur)
	default:
		return err
	}
	s.mem.commit()
	return nil
}

// settle follows a commit of the engine: the bands' staged writes are now
// committed state (and in Pebble). An in-memory store frees the segments
// that expired; a Pebble store dropped those at once (they are in
// Pebble, where an abort finds them again) and now keeps within its
// memory limit.
func (s *segmentedStore) settle() {
	if s.mem == nil {
		return
	}
	s.mem.commit()
	if !s.durable {
		s.mem.dropBelow(s.seg.cleanedBelow)
		return
	}
	s.mem.shrink()
}

// dropExpired deletes every segment that is entirely expired.
func (s *segmentedStore) dropExpired(w writer) error {
	limit, ok := s.seg.expireTo()
	if !ok || !s.durable {
		return nil
	}
	if s.mem != nil {
		s.mem.dropBelow(limit)
	}
	return w.delRange([]byte{idxKey}, appendTime([]byte{idxKey}, limit))
}

// splitEntry splits an entry key within its segment into the escaped key
// and the time and tail, which have a fixed length.
func (s *segmentedStore) splitEntry(k []byte) (esc, tt []byte) {
	n := len(k) - 8 - s.tailLen
	return k[:n], k[n:]
}

// write stages value (nil: a delete) for the entry esc, tt of segment seg.
func (s *segmentedStore) write(seg int64, esc, tt, value []byte) error {
	if s.mem != nil && s.mem.holds(seg) {
		s.mem.set(seg, esc, tt, value)
		return nil
	}
	s.kbuf = engineKey(s.kbuf[:0], seg, esc, tt)
	if value == nil {
		return s.w.del(s.kbuf)
	}
	return s.w.set(s.kbuf, value)
}

// restoreEntry writes a restored entry through w, the engine's direct
// writer, and into its band; restore commits the bands when the engine's
// batch is written.
func (s *segmentedStore) restoreEntry(w writer, seg int64, esc, tt, value []byte) error {
	if s.mem != nil && s.mem.holds(seg) {
		s.mem.set(seg, esc, tt, value)
	}
	if !s.durable {
		return nil
	}
	s.kbuf = engineKey(s.kbuf[:0], seg, esc, tt)
	if value == nil {
		return w.del(s.kbuf)
	}
	return w.set(s.kbuf, value)
}

// logged ends a Put that wrote: it sends the changelog key s.buf to the
// changelog and drops what the new observed stream time expired.
func (s *segmentedStore) logged(value []byte, t int64) error {
	s.logWrite(s.buf, value, t)
	return s.dropExpired(s.w)
}

// view returns the entry esc, tt of segment seg: a view of the value a
// band holds (bands never write into their values), or a copy read from
// the engine. staged says no committed entry can exist (see
// windowStore.Get), which spares a Pebble store's cold segments a lookup
// in Pebble.
func (s *segmentedStore) view(seg int64, esc, tt []byte, staged bool) ([]byte, bool, error) {
	if s.mem != nil && s.mem.holds(seg) {
		v, ok := s.mem.view(seg, esc, tt)
		return v, ok, nil
	}
	s.kbuf = engineKey(s.kbuf[:0], seg, esc, tt)
	if staged {
		return s.eng.getStaged(s.kbuf)
	}
	return s.eng.get(s.kbuf)
}

// scan visits the entries of key esc in segment seg with time and tail in
// [lo, hi) (nil: open; bounds may be a time without a tail), in order or
// reverse; fn gets their time and tail. staged is view's.
func (s *segmentedStore) scan(seg int64, esc, lo, hi []byte, reverse, staged bool, fn func(tt, v []byte) error) error {
	if s.mem != nil && s.mem.holds(seg) {
		return s.mem.scan(seg, esc, lo, hi, reverse, fn)
	}
	p := append(appendTime([]byte{idxKey}, seg), esc...)
	lower := append(p[:len(p):len(p)], lo...)
	upper := prefixEnd(p)
	if hi != nil {
		upper = append(p[:len(p):len(p)], hi...)
	}
	n := len(p)
	visit := func(k, v []byte) error { return fn(k[n:], v) }
	if staged {
		return s.eng.scanStaged(lower, upper, reverse, visit)
	}
	return s.eng.scan(lower, upper, reverse, visit)
}

// eachInSegment visits every entry of segment seg, in no order.
func (s *segmentedStore) eachInSegment(seg int64, fn func(esc, tt, v []byte) error) error {
	if s.mem != nil && s.mem.holds(seg) {
		return s.mem.each(seg, fn)
	}
	p := appendTime([]byte{idxKey}, seg)
	return s.eng.scan(p, prefixEnd(p), false, func(k, v []byte) error {
		esc, tt := s.splitEntry(k[segmentPrefix:])
		return fn(esc, tt, v)
	})
}

// timeEntry is an entry collected by scanTime.
type timeEntry struct {
	esc, tt, v []byte
	t          int64
}

// scanTime visits the live entries with time in [from, to] in
// time-then-key order; fn gets the key (valid until it returns), the time,
// the tail and the value. Each segment's entries are collected and sorted:
// the store keeps no time-first index (see the layout above).
func (s *segmentedStore) scanTime(from, to int64, fn func(key []byte, t int64, tail, v []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	from, to, ok := s.seg.clamp(from, to)
	if !ok {
		return nil
	}
	var es []timeEntry
	var kb []byte
	for sg := s.seg.segment(from); sg <= s.seg.segment(to); sg++ {
		es = es[:0]
		err := s.eachInSegment(sg, func(esc, tt, v []byte) error {
			if t := readTime(tt); t >= from && t <= to {
				es = append(es, timeEntry{esc: bytes.Clone(esc), tt: bytes.Clone(tt), v: bytes.Clone(v), t: t})
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(es, func(a, b timeEntry) int {
			if c := cmp.Compare(a.t, b.t); c != 0 {
				return c
			}
			if c := bytes.Compare(a.esc, b.esc); c != 0 {
				return c
			}
			return bytes.Compare(a.tt, b.tt)
		})
		for _, e := range es {
			key, _, err := readEscaped(kb[:0], e.esc)
			if err != nil {
				return err
			}
			kb = key
			if err := fn(key, e.t, e.tt[8:], e.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// restore applies changelog records straight to the committed state;
// apply writes one (through restoreEntry) or skips it, and gets the
// store's name into its parse errors.
func (s *segmentedStore) restore(records []ChangelogRecord, apply func(w writer, r ChangelogRecord) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if s.mem != nil && s.mem.hasStaged() {
		return ErrStagedWrites
	}
	err := s.eng.direct(func(w writer) error {
		for _, r := range records {
			if err := apply(w, r); err != nil {
				return err
			}
		}
		if err := s.dropExpired(w); err != nil {
			return err
		}
		return s.seg.save(w)
	})
	if err != nil {
		s.seg.rollback()
		if s.mem != nil {
			s.mem.abort()
		}
		return err
	}
	s.settle()
	return nil
}

// segmentedLayoutVersion is recorded in the layout of window and session
// stores: version 2 keeps one index (store format 1 kept a time-first
// index too) and segments of half the retention, so a store written by an
// earlier binary fails to open with ErrFormatMismatch and is rebuilt from
// its changelog, while key-value stores, whose format did not change,
// keep their state.
const segmentedLayoutVersion = "v2"
