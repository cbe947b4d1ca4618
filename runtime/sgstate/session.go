package sgstate

import "fmt"

// SessionOptions configures a session store.
type SessionOptions struct {
	// Retention in ms, measured on session ends. Required. Kafka's default
	// is inactivity gap + grace.
	Retention int64
	// SegmentInterval in ms. Default Retention/2. Recorded on disk like
	// the window store's.
	SegmentInterval int64
	// MemoryBytes is WindowOptions.MemoryBytes for a session store: a
	// session aggregation looks up the sessions near every record.
	MemoryBytes int64
}

// NewMemorySession returns an in-memory session store. The result also
// implements StateStore.
func NewMemorySession(name string, o SessionOptions) SessionStore {
	return newSession(name, o, nil)
}

// NewPebbleSession returns a persistent session store in StoreContext.Dir.
// popts nil means defaults. The result also implements StateStore.
func NewPebbleSession(name string, o SessionOptions, popts *PebbleOptions) SessionStore {
	return newSession(name, o, persistent(popts))
}

func newSession(name string, o SessionOptions, popts *PebbleOptions) *sessionStore {
	interval := segmentInterval(o.Retention, o.SegmentInterval)
	s := &sessionStore{}
	layout := fmt.Sprintf("session/%s/segment=%d", segmentedLayoutVersion, interval)
	s.initSegmented(name, "session", layout, o.Retention, interval, 8, o.MemoryBytes, popts)
	return s
}

// sessionStore uses the segmented layout with time = session end and the
// session start as the 8-byte tail, so a key's sessions sort by end, then
// start: Kafka's findSessions order.
type sessionStore struct {
	segmentedStore
}

var _ StateStore = (*sessionStore)(nil)

func (s *sessionStore) Put(key []byte, start, end int64, value []byte) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if end < start {
		return fmt.Errorf("streamgen: session store %q: session end %d before start %d", s.name, end, start)
	}
	if s.seg.observe(end) {
		return s.dropExpired(s.w)
	}
	s.entry(key, start, end)
	if err := s.write(s.seg.segment(end), s.esc, s.tt, value); err != nil {
		return err
	}
	s.buf = sessionChangelogKey(s.buf[:0], key, start, end)
	return s.logged(value, end)
}

// Remove deletes the session; like Kafka's it is a Put of nil, so it also
// advances observed stream time.
func (s *sessionStore) Remove(key []byte, start, end int64) error {
	return s.Put(key, start, end, nil)
}

// entry sets s.esc and s.tt to session (key, start, end)'s escaped key
// and time (the end) and tail (the start).
func (s *sessionStore) entry(key []byte, start, end int64) {
	s.esc = appendEscaped(s.esc[:0], key)
	s.tt = appendTime(appendTime(s.tt[:0], end), start)
}

func (s *sessionStore) FindSessions(key []byte, earliestSessionEnd, latestSessionStart int64, fn func(start, end int64, value []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	from, to, ok := s.seg.clamp(earliestSessionEnd, s.seg.observed)
	if !ok {
		return nil
	}
	visit := func(tt, v []byte) error {
		start := readTime(tt[8:])
		if start > latestSessionStart {
			return nil
		}
		return fn(start, readTime(tt), v)
	}
	esc := appendEscaped(nil, key)
	lo := appendTime(nil, from)
	for sg := s.seg.segment(from); sg <= s.seg.segment(to); sg++ {
		if err := s.scan(sg, esc, lo, nil, false, false, visit); err != nil {
			return err
		}
	}
	return nil
}

func (s *sessionStore) FetchEndedBetween(endFrom, endTo int64, fn func(key []byte, start, end int64, value []byte) error) error {
	return s.scanTime(endFrom, endTo, func(key []byte, end int64, tail, v []byte) error {
		return fn(key, readTime(tail), end, v)
	})
}

func (s *sessionStore) RestoreBatch(records []ChangelogRecord) error {
	return s.restore(records, func(w writer, r ChangelogRecord) error {
		key, start, end, err := parseSessionChangelogKey(r.Key)
		if err != nil {
			return fmt.Errorf("store %q: %w", s.name, err)
		}
		if s.seg.observe(end) {
			return nil
		}
		s.entry(key, start, end)
		return s.restoreEntry(w, s.seg.segment(end), s.esc, s.tt, r.Value)
	})
}
