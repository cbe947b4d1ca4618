package sgstate

import "fmt"

// SessionOptions configures a session store.
type SessionOptions struct {
	// Retention in ms, measured on session ends. Required. Kafka's default
	// is inactivity gap + grace.
	Retention int64
	// SegmentInterval in ms. Default max(Retention/2, 60 s). Recorded on
	// disk like the window store's.
	SegmentInterval int64
}

// NewMemorySession returns an in-memory session store. The result also
// implements StateStore.
func NewMemorySession(name string, o SessionOptions) SessionStore {
	return newSession(name, o, nil)
}

// NewPebbleSession returns a persistent session store in StoreContext.Dir.
// popts nil means defaults. The result also implements StateStore.
func NewPebbleSession(name string, o SessionOptions, popts *PebbleOptions) SessionStore {
	if popts == nil {
		popts = &PebbleOptions{}
	}
	return newSession(name, o, popts)
}

func newSession(name string, o SessionOptions, popts *PebbleOptions) *sessionStore {
	if o.SegmentInterval == 0 {
		o.SegmentInterval = defaultSegmentInterval(o.Retention)
	}
	layout := fmt.Sprintf("session/segment=%d", o.SegmentInterval)
	s := &sessionStore{baseStore: newBase(name, layout, popts), opts: o}
	s.seg = newSegmented(o.Retention, o.SegmentInterval)
	s.onOpen = s.open
	s.onCommit = func(w writer) error { return s.seg.save(w) }
	s.onAbort = func() { s.seg.rollback() }
	return s
}

// sessionStore uses the segmented layout with time = session end and the
// session start as the 8-byte tail, so a key's sessions sort by end, then
// start: Kafka's findSessions order.
type sessionStore struct {
	baseStore
	opts SessionOptions
	seg  segmented
	buf  []byte
	buf2 []byte
}

var _ StateStore = (*sessionStore)(nil)

func (s *sessionStore) open() error {
	if err := validateRetention("session", s.name, s.opts.Retention, s.opts.SegmentInterval); err != nil {
		return err
	}
	s.seg = newSegmented(s.opts.Retention, s.opts.SegmentInterval)
	return s.seg.load(s.eng)
}

func (s *sessionStore) Put(key []byte, start, end int64, value []byte) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if end < start {
		return fmt.Errorf("streamgen: session store %q: session end %d before start %d", s.name, end, start)
	}
	if s.seg.observe(end) {
		return s.seg.dropExpired(s.w)
	}
	if err := s.write(s.w, key, start, end, value); err != nil {
		return err
	}
	s.buf = sessionChangelogKey(s.buf[:0], key, start, end)
	s.logWrite(s.buf, value, end)
	return s.seg.dropExpired(s.w)
}

// Remove deletes the session; like Kafka's it is a Put of nil, so it also
// advances observed stream time.
func (s *sessionStore) Remove(key []byte, start, end int64) error {
	return s.Put(key, start, end, nil)
}

func (s *sessionStore) write(w writer, key []byte, start, end int64, value []byte) error {
	b := keyIndexPrefix(s.buf2[:0], s.seg.segment(end), key)
	b = appendTime(appendTime(b, end), start)
	n := len(b)
	b = appendTime(appendEscaped(appendTime(append(b, idxTime), end), key), start)
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

func (s *sessionStore) FindSessions(key []byte, earliestSessionEnd, latestSessionStart int64, fn func(start, end int64, value []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	from, to, ok := s.seg.clamp(earliestSessionEnd, s.seg.observed)
	if !ok {
		return nil
	}
	visit := func(k, v []byte) error {
		start := readTime(k[len(k)-8:])
		if start > latestSessionStart {
			return nil
		}
		return fn(start, readTime(k[len(k)-16:]), v)
	}
	for sg := s.seg.segment(from); sg <= s.seg.segment(to); sg++ {
		p := keyIndexPrefix(nil, sg, key)
		if err := s.eng.scan(appendTime(p[:len(p):len(p)], from), prefixEnd(p), false, visit); err != nil {
			return err
		}
	}
	return nil
}

func (s *sessionStore) FetchEndedBetween(endFrom, endTo int64, fn func(key []byte, start, end int64, value []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	from, to, ok := s.seg.clamp(endFrom, endTo)
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
		return fn(key, readTime(rest), readTime(k[1:9]), v)
	})
}

func (s *sessionStore) RestoreBatch(records []ChangelogRecord) error {
	if s.eng == nil {
		return s.notOpen()
	}
	err := s.eng.direct(func(w writer) error {
		for _, r := range records {
			key, start, end, err := parseSessionChangelogKey(r.Key)
			if err != nil {
				return fmt.Errorf("store %q: %w", s.name, err)
			}
			if s.seg.observe(end) {
				continue
			}
			if err := s.write(w, key, start, end, r.Value); err != nil {
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
