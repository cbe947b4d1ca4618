package sgstate

// NewMemoryKeyValue returns an in-memory key-value store (Kafka's
// Stores.inMemoryKeyValueStore). Its state is lost on Close; a logged one is
// rebuilt from the changelog. The result also implements StateStore.
func NewMemoryKeyValue(name string) KeyValueStore {
	return newKV(name, nil)
}

// NewPebbleKeyValue returns a persistent key-value store in
// StoreContext.Dir (Kafka's Stores.persistentKeyValueStore). opts nil means
// defaults. The result also implements StateStore.
func NewPebbleKeyValue(name string, opts *PebbleOptions) KeyValueStore {
	return newKV(name, persistent(opts))
}

// NewHeldKeyValue returns a persistent key-value store that also holds its
// whole state in memory: reads never reach Pebble, which gets the staged
// writes in the commit batch and is read only when the store opens (see
// heldEngine). It is for small stores read on every record, such as a
// stream-stream join's buffer of unmatched records. Its files are those of
// NewPebbleKeyValue. The result also implements StateStore.
func NewHeldKeyValue(name string, opts *PebbleOptions) KeyValueStore {
	s := newKV(name, persistent(opts))
	s.held = true
	return s
}

func newKV(name string, opts *PebbleOptions) *kvStore {
	return &kvStore{baseStore: newBase(name, "kv", opts)}
}

// kvStore maps keys one to one onto the engine's data key space.
type kvStore struct {
	baseStore
}

var _ StateStore = (*kvStore)(nil)

func (s *kvStore) Get(key []byte) ([]byte, bool, error) {
	if s.eng == nil {
		return nil, false, s.notOpen()
	}
	return s.eng.get(key)
}

func (s *kvStore) Put(key, value []byte) error {
	if value == nil {
		return s.Delete(key)
	}
	if s.eng == nil {
		return s.notOpen()
	}
	if err := s.w.set(key, value); err != nil {
		return err
	}
	s.logWrite(key, value, 0)
	return nil
}

func (s *kvStore) Delete(key []byte) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if err := s.w.del(key); err != nil {
		return err
	}
	s.logWrite(key, nil, 0)
	return nil
}

func (s *kvStore) Range(from, to []byte, fn func(key, value []byte) error) error {
	return s.rangeDir(from, to, false, fn)
}

func (s *kvStore) ReverseRange(from, to []byte, fn func(key, value []byte) error) error {
	return s.rangeDir(from, to, true, fn)
}

func (s *kvStore) rangeDir(from, to []byte, reverse bool, fn func(key, value []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	var upper []byte
	if to != nil {
		upper = keySuccessor(to)
	}
	return s.eng.scan(from, upper, reverse, fn)
}

func (s *kvStore) PrefixScan(prefix []byte, fn func(key, value []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	return s.eng.scan(prefix, prefixEnd(prefix), false, fn)
}

func (s *kvStore) All(fn func(key, value []byte) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	return s.eng.scan(nil, nil, false, fn)
}

func (s *kvStore) ApproximateNumEntries() (int64, error) {
	if s.eng == nil {
		return 0, s.notOpen()
	}
	m, ok := s.eng.(*memEngine)
	if h, held := s.eng.(*heldEngine); held {
		m, ok = h.mem, true
	}
	if ok && m.nstaged == 0 {
		return int64(m.list.n), nil
	}
	var n int64
	err := s.eng.scan(nil, nil, false, func(_, _ []byte) error { n++; return nil })
	return n, err
}

func (s *kvStore) RestoreBatch(records []ChangelogRecord) error {
	if s.eng == nil {
		return s.notOpen()
	}
	return s.eng.direct(func(w writer) error {
		for _, r := range records {
			var err error
			if r.Value == nil {
				err = w.del(r.Key)
			} else {
				err = w.set(r.Key, s.restoredValue(r))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}
