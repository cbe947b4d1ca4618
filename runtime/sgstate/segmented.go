package sgstate

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Window and session stores keep two indexes in the engine's key space:
//
//	key index:  idxKey  | segment(8) | escaped key | time(8) | tail
//	time index: idxTime | time(8)    | escaped key | tail
//
// "time" is the window start (window store) or the session end (session
// store); "tail" is the seqnum (4 bytes) or the session start (8 bytes).
// The key index answers per-key fetches with one seek per live segment; the
// time index gives FetchAll/FetchEndedBetween their time-then-key order.
// Values are stored in both, trading space for a single read per hit.
//
// Retention is Kafka's InMemoryWindowStore rule, applied identically by both
// engines: observed stream time is the largest time ever put; entries with
// time <= observed - retention are expired — dropped on put, filtered out of
// every read. Physically, expired data goes away a whole segment at a time
// (segment = floor(time / interval)) with DeleteRange on both indexes, which
// is what makes expiry cheap on Pebble.
const (
	idxKey  = 0x02
	idxTime = 0x03
)

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

// segmentInterval is interval, or when that is 0 Kafka's default:
// max(retention / 2, 60 s).
func segmentInterval(retention, interval int64) int64 {
	if interval != 0 {
		return interval
	}
	return max(retention/2, 60_000)
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

// dropExpired deletes every segment that is entirely expired.
func (g *segmented) dropExpired(w writer) error {
	if g.observed == math.MinInt64 {
		return nil
	}
	limit := g.segment(g.minLive())
	if limit <= g.cleanedBelow {
		return nil
	}
	if limit < math.MinInt64/g.interval+1 {
		return nil
	}
	if err := w.delRange([]byte{idxKey}, appendTime([]byte{idxKey}, limit)); err != nil {
		return err
	}
	if err := w.delRange([]byte{idxTime}, appendTime([]byte{idxTime}, limit*g.interval)); err != nil {
		return err
	}
	g.cleanedBelow = limit
	return nil
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

// keyIndexPrefix is idxKey | segment | escaped key.
func keyIndexPrefix(dst []byte, seg int64, key []byte) []byte {
	dst = appendTime(append(dst, idxKey), seg)
	return appendEscaped(dst, key)
}

// timeBound turns an inclusive time upper bound under prefix p into an
// exclusive key bound.
func timeUpper(p []byte, to int64) []byte {
	if to == math.MaxInt64 {
		return prefixEnd(p)
	}
	return appendTime(p, to+1)
}

// segmentedStore is the part window and session stores share on top of
// baseStore: the segmented bookkeeping, the write of one entry into both
// indexes, the time-index scan and the restore loop. The two stores differ
// only in what "time" and "tail" are (see the layout above).
type segmentedStore struct {
	baseStore
	kind      string // "window" or "session", for errors
	retention int64
	interval  int64
	seg       segmented
	buf       []byte // changelog key of the last Put
	buf2      []byte // index keys of the last write
}

// initSegmented sets s up in place: the hooks it installs point at s.
func (s *segmentedStore) initSegmented(name, kind, layout string, retention, interval int64, popts *PebbleOptions) {
	s.baseStore = newBase(name, layout, popts)
	s.kind, s.retention, s.interval = kind, retention, interval
	s.seg = newSegmented(retention, interval)
	s.onOpen = s.open
	s.onCommit = func(w writer) error { return s.seg.save(w) }
	s.onAbort = func() { s.seg.rollback() }
}

func (s *segmentedStore) open() error {
	if err := validateRetention(s.kind, s.name, s.retention, s.interval); err != nil {
		return err
	}
	s.seg = newSegmented(s.retention, s.interval)
	return s.seg.load(s.eng)
}

// writeBoth sets (value non-nil) or deletes one entry in both indexes: b
// holds its key-index key in b[:n] and its time-index key in b[n:].
func (s *segmentedStore) writeBoth(w writer, b []byte, n int, value []byte) error {
	s.buf2 = b
	k, t := b[:n], b[n:]
	if value == nil {
		if err := w.del(k); err != nil {
			return err
		}
		return w.del(t)
	}
	if err := w.set(k, value); err != nil {
		return err
	}
	return w.set(t, value)
}

// logged ends a Put that wrote: it sends the changelog key s.buf to the
// changelog and drops what the new observed stream time expired.
func (s *segmentedStore) logged(value []byte, t int64) error {
	s.logWrite(s.buf, value, t)
	return s.seg.dropExpired(s.w)
}

// scanTime visits the live entries with time in [from, to] in time-then-key
// order; fn gets the key (valid until it returns), the time, the tail and
// the value.
func (s *segmentedStore) scanTime(from, to int64, fn func(key []byte, t int64, tail, v []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	from, to, ok := s.seg.clamp(from, to)
	if !ok {
		return nil
	}
	p := []byte{idxTime}
	var kb []byte
	return s.eng.scan(appendTime(p[:1:1], from), timeUpper(p, to), false, func(k, v []byte) error {
		key, rest, err := readEscaped(kb[:0], k[9:])
		if err != nil {
			return err
		}
		kb = key
		return fn(key, readTime(k[1:9]), rest, v)
	})
}

// restore applies changelog records straight to the engine; apply writes
// one (or skips it) and gets the store's name into its parse errors.
func (s *segmentedStore) restore(records []ChangelogRecord, apply func(w writer, r ChangelogRecord) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	err := s.eng.direct(func(w writer) error {
		for _, r := range records {
			if err := apply(w, r); err != nil {
				return err
			}
		}
		if err := s.seg.dropExpired(w); err != nil {
			return err
		}
		return s.seg.save(w)
	})
	if err != nil {
		s.seg.rollback()
	}
	return err
}
