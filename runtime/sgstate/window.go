package sgstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// WindowOptions configures a window store.
type WindowOptions struct {
	// Retention in ms: how far behind observed stream time windows stay
	// readable. Required. Kafka's default is window size + grace (joins:
	// before + after + grace).
	Retention int64
	// SegmentInterval in ms: the granularity of physical expiry and of
	// the segments kept in memory. Default Retention/2 (Kafka's default,
	// max(Retention/2, 60 s), sizes RocksDB instances; see
	// segmentInterval). Recorded on disk; changing it for an existing
	// Pebble store fails with ErrFormatMismatch.
	SegmentInterval int64
	// WindowSize in ms, for callers' bookkeeping (Kafka stores it to compute
	// window ends); the store itself does not use it.
	WindowSize int64
	// RetainDuplicates keeps every Put (stream-stream join buffers), each
	// under its own sequence number.
	RetainDuplicates bool
	// MemoryBytes bounds the memory in which a Pebble store also keeps its
	// newest segments, from which it answers reads of them without Pebble
	// (a windowed aggregation reads every window it updates, most of them
	// new; a join fetches the other side's last window). Default
	// DefaultWindowMemoryBytes; negative keeps nothing in memory. The
	// segments in memory are dropped when they expire, and after a commit
	// the oldest go until the rest fit. An in-memory store ignores it.
	MemoryBytes int64
}

// NewMemoryWindow returns an in-memory window store. The result also
// implements StateStore.
func NewMemoryWindow(name string, o WindowOptions) WindowStore {
	return newWindow(name, o, nil)
}

// NewPebbleWindow returns a persistent window store in StoreContext.Dir.
// popts nil means defaults. The result also implements StateStore.
func NewPebbleWindow(name string, o WindowOptions, popts *PebbleOptions) WindowStore {
	return newWindow(name, o, persistent(popts))
}

func newWindow(name string, o WindowOptions, popts *PebbleOptions) *windowStore {
	o.SegmentInterval = segmentInterval(o.Retention, o.SegmentInterval)
	layout := fmt.Sprintf("window/%s/segment=%d/dups=%t", segmentedLayoutVersion, o.SegmentInterval, o.RetainDuplicates)
	s := &windowStore{opts: o}
	s.visit = func(tt, v []byte) error { return s.fetchFn(readTime(tt), v) }
	s.initSegmented(name, "window", layout, o.Retention, o.SegmentInterval, 4, o.MemoryBytes, popts)
	return s
}

type windowStore struct {
	segmentedStore
	opts WindowOptions
	// A fetch (a join makes one per record) allocates nothing: fbuf holds
	// its escaped key and bounds, taken while it runs, and visit, bound
	// once, calls its callback fetchFn. A fetch from inside another's
	// callback allocates its own buffer and restores fetchFn when done.
	fbuf    []byte
	fetchFn func(windowStart int64, value []byte) error
	visit   func(tt, v []byte) error
}

var (
	_ StateStore   = (*windowStore)(nil)
	_ WindowViewer = (*windowStore)(nil)
)

func (s *windowStore) ObservedStreamTime() int64 { return s.seg.observed }

func (s *windowStore) Put(key []byte, windowStart int64, value []byte) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if value == nil && s.opts.RetainDuplicates {
		return nil
	}
	if s.seg.observe(windowStart) {
		return s.dropExpired(s.w)
	}
	var seq uint32
	if s.opts.RetainDuplicates {
		seq = s.seg.nextSeq()
	}
	s.entry(key, windowStart, seq)
	if err := s.write(s.seg.segment(windowStart), s.esc, s.tt, value); err != nil {
		return err
	}
	s.buf = windowChangelogKey(s.buf[:0], key, windowStart, seq)
	return s.logged(value, windowStart)
}

// entry sets s.esc and s.tt to window (key, start, seq)'s escaped key and
// time and tail.
func (s *windowStore) entry(key []byte, start int64, seq uint32) {
	s.esc = appendEscaped(s.esc[:0], key)
	s.tt = binary.BigEndian.AppendUint32(appendTime(s.tt[:0], start), seq)
}

func (s *windowStore) Fetch(key []byte, timeFrom, timeTo int64, fn func(windowStart int64, value []byte) error) error {
	return s.fetch(key, timeFrom, timeTo, false, fn)
}

func (s *windowStore) BackwardFetch(key []byte, timeFrom, timeTo int64, fn func(windowStart int64, value []byte) error) error {
	return s.fetch(key, timeFrom, timeTo, true, fn)
}

func (s *windowStore) fetch(key []byte, from, to int64, reverse bool, fn func(int64, []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	from, to, ok := s.seg.clamp(from, to)
	if !ok {
		return nil
	}
	first, last := s.seg.segment(from), s.seg.segment(to)
	// As in Get: no committed window starts after the committed observed
	// stream time. A join fetches the other side for every record, often
	// entirely after the last commit.
	staged := from > s.seg.cObserved
	// One buffer for the escaped key and both bounds.
	b := appendEscaped(slices.Grow(s.fbuf[:0], 2*len(key)+2+16), key)
	s.fbuf = nil
	prev := s.fetchFn
	s.fetchFn = fn
	defer func() { s.fbuf, s.fetchFn = b[:0], prev }()
	esc := b[:len(b):len(b)]
	lo := appendTime(b[len(b):], from)
	var hi []byte
	if to != math.MaxInt64 {
		hi = appendTime(lo[len(lo):], to+1)
	}
	for i := int64(0); i <= last-first; i++ {
		sg := first + i
		if reverse {
			sg = last - i
		}
		if err := s.scan(sg, esc, lo, hi, reverse, staged, s.visit); err != nil {
			return err
		}
	}
	return nil
}

// Get returns a copy of the value of key's window starting at windowStart
// (with duplicates retained, the last one put), under Fetch's retention
// rule; it implements WindowGetter. Without duplicates it is a point
// lookup, where Fetch would open a range scan: a windowed aggregation
// reads every window a record falls into this way, and in a segment held
// in memory the lookup is one map access.
func (s *windowStore) Get(key []byte, windowStart int64) ([]byte, bool, error) {
	v, ok, err := s.View(key, windowStart)
	return cloneBytes(v), ok, err
}

// View implements WindowViewer: Get without copying a value held in
// memory.
func (s *windowStore) View(key []byte, windowStart int64) ([]byte, bool, error) {
	if s.eng == nil {
		return nil, false, s.notOpen()
	}
	if s.opts.RetainDuplicates {
		var out []byte
		found := false
		err := s.fetch(key, windowStart, windowStart, true, func(_ int64, v []byte) error {
			out, found = cloneBytes(v), true
			return errStopGet
		})
		if err != nil && err != errStopGet {
			return nil, false, err
		}
		return out, found, nil
	}
	if _, _, ok := s.seg.clamp(windowStart, windowStart); !ok {
		return nil, false, nil
	}
	// Every committed window starts at or before the observed stream time
	// committed with it, so a later window can only be staged: a read of a
	// segment Pebble alone holds looks at the staged writes only.
	s.entry(key, windowStart, 0)
	return s.view(s.seg.segment(windowStart), s.esc, s.tt, windowStart > s.seg.cObserved)
}

// errStopGet ends Get's scan at the first entry.
var errStopGet = errors.New("streamgen: stop")

func (s *windowStore) FetchAll(timeFrom, timeTo int64, fn func(key []byte, windowStart int64, value []byte) error) error {
	return s.scanTime(timeFrom, timeTo, func(key []byte, windowStart int64, _, v []byte) error {
		return fn(key, windowStart, v)
	})
}

func (s *windowStore) RestoreBatch(records []ChangelogRecord) error {
	return s.restore(records, func(w writer, r ChangelogRecord) error {
		key, ts, seq, err := parseWindowChangelogKey(r.Key)
		if err != nil {
			return fmt.Errorf("store %q: %w", s.name, err)
		}
		if s.opts.RetainDuplicates && seq > s.seg.seq {
			s.seg.seq = seq
		}
		if s.seg.observe(ts) {
			return nil
		}
		s.entry(key, ts, seq)
		return s.restoreEntry(w, s.seg.segment(ts), s.esc, s.tt, s.restoredValue(r))
	})
}
