package sgstate

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// WindowOptions configures a window store.
type WindowOptions struct {
	// Retention in ms: how far behind observed stream time windows stay
	// readable. Required. Kafka's default is window size + grace (joins:
	// before + after + grace).
	Retention int64
	// SegmentInterval in ms: the granularity of physical expiry. Default
	// max(Retention/2, 60 s), as in Kafka. Recorded on disk; changing it for
	// an existing Pebble store fails with ErrFormatMismatch.
	SegmentInterval int64
	// WindowSize in ms, for callers' bookkeeping (Kafka stores it to compute
	// window ends); the store itself does not use it.
	WindowSize int64
	// RetainDuplicates keeps every Put (stream-stream join buffers), each
	// under its own sequence number.
	RetainDuplicates bool
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
	layout := fmt.Sprintf("window/segment=%d/dups=%t", o.SegmentInterval, o.RetainDuplicates)
	s := &windowStore{opts: o}
	s.initSegmented(name, "window", layout, o.Retention, o.SegmentInterval, popts)
	return s
}

type windowStore struct {
	segmentedStore
	opts WindowOptions
}

var _ StateStore = (*windowStore)(nil)

func (s *windowStore) ObservedStreamTime() int64 { return s.seg.observed }

func (s *windowStore) Put(key []byte, windowStart int64, value []byte) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if value == nil && s.opts.RetainDuplicates {
		return nil
	}
	if s.seg.observe(windowStart) {
		return s.seg.dropExpired(s.w)
	}
	var seq uint32
	if s.opts.RetainDuplicates {
		seq = s.seg.nextSeq()
	}
	if err := s.write(s.w, key, windowStart, seq, value); err != nil {
		return err
	}
	s.buf = windowChangelogKey(s.buf[:0], key, windowStart, seq)
	return s.logged(value, windowStart)
}

// write sets (value non-nil) or deletes one entry in both indexes.
func (s *windowStore) write(w writer, key []byte, ts int64, seq uint32, value []byte) error {
	b := keyIndexPrefix(s.buf2[:0], s.seg.segment(ts), key)
	b = binary.BigEndian.AppendUint32(appendTime(b, ts), seq)
	n := len(b)
	b = appendEscaped(appendTime(append(b, idxTime), ts), key)
	b = binary.BigEndian.AppendUint32(b, seq)
	return s.writeBoth(w, b, n, value)
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
	visit := func(k, v []byte) error {
		return fn(readTime(k[len(k)-12:]), v)
	}
	scan := s.eng.scan
	if from > s.seg.cObserved {
		// As in Get: no committed window starts after the committed
		// observed stream time. A join fetches the other side for every
		// record, often entirely after the last commit.
		scan = s.eng.scanStaged
	}
	for i := int64(0); i <= last-first; i++ {
		sg := first + i
		if reverse {
			sg = last - i
		}
		// One allocation for both bounds: lower is prefix|from, upper
		// prefix|to+1 right after it in the same array.
		n := 9 + 2*len(key) + 2 + 8
		p := keyIndexPrefix(make([]byte, 0, 2*n), sg, key)
		lower := appendTime(p, from)
		upper := timeUpper(append(lower[len(lower):len(lower)], p...), to)
		if err := scan(lower, upper, reverse, visit); err != nil {
			return err
		}
	}
	return nil
}

// Get returns a copy of the value of key's window starting at windowStart
// (with duplicates retained, the last one put), under Fetch's retention
// rule; it implements WindowGetter. Without duplicates it is a point
// lookup in the key index, where Fetch would open a range scan: a windowed
// aggregation reads every window a record falls into this way.
func (s *windowStore) Get(key []byte, windowStart int64) ([]byte, bool, error) {
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
	b := keyIndexPrefix(s.buf2[:0], s.seg.segment(windowStart), key)
	b = binary.BigEndian.AppendUint32(appendTime(b, windowStart), 0)
	s.buf2 = b
	if windowStart > s.seg.cObserved {
		// Every committed window starts at or before the observed stream
		// time committed with it, so a later window can only be staged. A
		// windowed aggregation reads every new window before it first
		// writes it, and on Pebble that read was a miss through the
		// memtables and levels.
		return s.eng.getStaged(b)
	}
	return s.eng.get(b)
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
		return s.write(w, key, ts, seq, s.restoredValue(r))
	})
}
