package sgstate

import (
	"encoding/binary"
	"fmt"
	"log/slog"
)

// baseStore is the part every built-in store shares: lifecycle, staging and
// changelog plumbing around an engine.
type baseStore struct {
	name   string
	layout string
	// pebble is nil for in-memory stores.
	pebble *PebbleOptions
	// held keeps a Pebble store's whole state in memory too (heldEngine).
	held bool

	eng    engine
	w      writer
	log    ChangelogWriter
	now    func() int64
	logger *slog.Logger
	// tsValues is StoreContext.TimestampedValues.
	tsValues bool
	// restoreBuf holds the value restoredValue last built.
	restoreBuf []byte

	// hooks of the concrete store
	onOpen      func() error         // after the engine is open: load metadata
	onCommit    func(w writer) error // stage metadata before the engine commits
	onCommitted func()               // after the engine committed
	onAbort     func()               // reset in-memory copies of staged metadata
}

func newBase(name, layout string, pebble *PebbleOptions) baseStore {
	b := baseStore{name: name, layout: layout}
	if pebble != nil {
		o := *pebble
		b.pebble = &o
	}
	return b
}

// persistent returns the Pebble options of a persistent store: nil there
// means defaults, while a nil in baseStore.pebble means in memory.
func persistent(popts *PebbleOptions) *PebbleOptions {
	if popts == nil {
		return &PebbleOptions{}
	}
	return popts
}

func (s *baseStore) Name() string { return s.name }

func (s *baseStore) Init(ctx *StoreContext) error {
	if s.eng != nil {
		return fmt.Errorf("streamgen: state store %q: Init called twice", s.name)
	}
	if ctx == nil {
		ctx = &StoreContext{}
	}
	s.logger = ctx.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.log, s.now, s.tsValues = ctx.Changelog, ctx.RecordTimestamp, ctx.TimestampedValues
	if s.pebble == nil {
		s.eng = newMemEngine()
	} else {
		if ctx.Dir == "" {
			return fmt.Errorf("streamgen: state store %q: persistent store needs StoreContext.Dir", s.name)
		}
		e, err := openPebbleEngine(s.name, ctx.Dir, *s.pebble, s.layout, s.logger, ctx.Shared)
		if err != nil {
			return err
		}
		s.eng = e
		if s.held {
			if s.eng, err = holdPebble(e); err != nil {
				e.close()
				s.eng = nil
				return err
			}
		}
	}
	s.w = s.eng.staged()
	if s.onOpen != nil {
		if err := s.onOpen(); err != nil {
			s.eng.close()
			s.eng = nil
			return err
		}
	}
	return nil
}

func (s *baseStore) notOpen() error {
	return fmt.Errorf("%w: %q", ErrNotOpen, s.name)
}

func (s *baseStore) Flush() error {
	if s.eng == nil {
		return s.notOpen()
	}
	return s.eng.flush()
}

func (s *baseStore) Close() error {
	if s.eng == nil {
		return nil
	}
	if s.onAbort != nil {
		s.onAbort()
	}
	err := s.eng.close()
	s.eng, s.w = nil, nil
	return err
}

func (s *baseStore) Commit(checkpoint map[string]int64) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if s.onCommit != nil {
		if err := s.onCommit(s.w); err != nil {
			return err
		}
	}
	if err := s.eng.commit(checkpoint); err != nil {
		return err
	}
	if s.onCommitted != nil {
		s.onCommitted()
	}
	return nil
}

func (s *baseStore) Abort() error {
	if s.eng == nil {
		return s.notOpen()
	}
	if s.onAbort != nil {
		s.onAbort()
	}
	return s.eng.abort()
}

func (s *baseStore) Checkpoint() (map[string]int64, error) {
	if s.eng == nil {
		return nil, s.notOpen()
	}
	return s.eng.checkpoint()
}

// metaUserPrefix separates MetadataStore keys from the store's internal
// metadata (format, layout, checkpoint, observed stream time …).
const metaUserPrefix = "user/"

// Metadata implements MetadataStore.
func (s *baseStore) Metadata(key string) ([]byte, bool, error) {
	if s.eng == nil {
		return nil, false, s.notOpen()
	}
	return s.eng.getMeta(metaUserPrefix + key)
}

// SetMetadata implements MetadataStore.
func (s *baseStore) SetMetadata(key string, value []byte) error {
	if s.eng == nil {
		return s.notOpen()
	}
	return s.w.setMeta(metaUserPrefix+key, value)
}

// logWrite sends a write to the changelog; fallback is the timestamp used
// when the context gives none.
func (s *baseStore) logWrite(key, value []byte, fallback int64) {
	if s.log == nil {
		return
	}
	ts := fallback
	if s.now != nil {
		ts = s.now()
	}
	if s.tsValues && len(value) >= 8 {
		ts, value = int64(binary.BigEndian.Uint64(value)), value[8:]
	}
	s.log.Log(key, value, ts)
}

// restoredValue is the value a changelog record restores: for a store of
// timestamped values the record's timestamp in front of the raw value it
// logged (see logWrite), otherwise the value as logged. The value is valid
// until the next call: every writer copies what it sets, so restoring a
// batch reuses one buffer instead of allocating per record.
func (s *baseStore) restoredValue(r ChangelogRecord) []byte {
	if !s.tsValues || r.Value == nil {
		return r.Value
	}
	s.restoreBuf = append(binary.BigEndian.AppendUint64(s.restoreBuf[:0], uint64(r.Timestamp)), r.Value...)
	return s.restoreBuf
}

// UncommittedBytes approximates the memory that the store's writes since
// its last commit hold (staged until Commit; zero for stores in memory,
// which write in place). Nothing else bounds it: a worker commits early
// when its stores' sum passes a limit (Kafka's
// statestore.uncommitted.max.bytes of KIP-892), so that a long commit
// interval over many new keys does not hold them all in memory.
func (s *baseStore) UncommittedBytes() int64 {
	if e, ok := s.eng.(interface{ uncommittedBytes() int64 }); ok {
		return e.uncommittedBytes()
	}
	return 0
}
