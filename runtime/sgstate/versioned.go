package sgstate

import (
	"errors"
	"fmt"
	"math"
)

// VersionedKeyValueStore keeps every version of a key's value, each valid
// from its timestamp until the next version's: Kafka Streams'
// VersionedKeyValueStore (KIP-889), as Stores.persistentVersionedKeyValueStore
// builds it. A tombstone is a version too (the key has no value from its
// timestamp on), so a read as of an earlier time still finds the value the
// tombstone ended.
//
// History retention bounds how far back reads may look: with observed
// stream time T (the largest timestamp ever put), GetAsOf(key, t) for
// t < T - retention answers only from the latest version (which never
// expires), and a Put with timestamp < T - retention is dropped (Kafka's
// grace period of a versioned store equals its history retention).
// Versions no read can reach any more are deleted when their key is next
// written; reads are exact whatever has been deleted.
//
// Values are opaque non-nil bytes; callback-free, every read returns a copy.
type VersionedKeyValueStore interface {
	Store
	// Put writes value (nil: a tombstone) as key's version from timestamp
	// on, replacing a version with the same timestamp. It returns the
	// version's validTo: VersionedLatest when it is now the latest version,
	// the next version's timestamp when the put was out of order, or
	// VersionedNotPut when it was dropped as older than the history
	// retention.
	Put(key, value []byte, timestamp int64) (validTo int64, err error)
	// Get returns the latest version; ok is false when the key has none or
	// its latest version is a tombstone.
	Get(key []byte) (value []byte, timestamp int64, ok bool, err error)
	// GetAsOf returns the version valid at asOf (the one with the largest
	// timestamp <= asOf); ok is false when there is none, it is a
	// tombstone, or asOf is beyond the history retention and the latest
	// version is newer than asOf.
	GetAsOf(key []byte, asOf int64) (value []byte, timestamp int64, ok bool, err error)
	// All visits each key's latest value (tombstones skipped) ascending by
	// key; slices are valid during the callback only.
	All(fn func(key, value []byte, timestamp int64) error) error
	// ObservedStreamTime is the largest timestamp put (dropped puts
	// excluded), or math.MinInt64 before the first.
	ObservedStreamTime() int64
	// HistoryRetention is the retention in ms.
	HistoryRetention() int64
}

// Put results of VersionedKeyValueStore: Kafka's
// PUT_RETURN_CODE_VALID_TO_UNDEFINED and PUT_RETURN_CODE_NOT_PUT.
const (
	VersionedLatest int64 = math.MaxInt64
	VersionedNotPut int64 = math.MinInt64
)

// VersionedOptions configures a versioned store.
type VersionedOptions struct {
	// HistoryRetention in ms (> 0 ... or 0: only the latest version is
	// readable and every out-of-order put is dropped).
	HistoryRetention int64
}

// NewMemoryVersioned returns an in-memory versioned store. The result also
// implements StateStore.
func NewMemoryVersioned(name string, o VersionedOptions) VersionedKeyValueStore {
	return newVersioned(name, o, nil)
}

// NewPebbleVersioned returns a persistent versioned store in
// StoreContext.Dir (Kafka's Stores.persistentVersionedKeyValueStore).
// popts nil means defaults. The result also implements StateStore.
func NewPebbleVersioned(name string, o VersionedOptions, popts *PebbleOptions) VersionedKeyValueStore {
	return newVersioned(name, o, persistent(popts))
}

// Layout: one entry per version, idxVersion | escaped key | time(8) →
// flag (1: value, 0: tombstone) | value. A key's versions are adjacent and
// ordered by timestamp, so the latest is the last entry under the key's
// prefix and the version valid at t is the last entry at or before t. The
// retention is not part of the layout: changing it keeps every version.
const idxVersion = 0x04

func newVersioned(name string, o VersionedOptions, popts *PebbleOptions) *versionedStore {
	s := &versionedStore{baseStore: newBase(name, "versioned", popts), retention: o.HistoryRetention}
	s.observed, s.cObserved = math.MinInt64, math.MinInt64
	s.onOpen = s.open
	s.onCommit = s.save
	s.onAbort = func() { s.observed = s.cObserved }
	return s
}

type versionedStore struct {
	baseStore
	retention           int64
	observed, cObserved int64 // staged and committed observed stream time
	kb, vb              []byte
}

var (
	_ StateStore             = (*versionedStore)(nil)
	_ VersionedKeyValueStore = (*versionedStore)(nil)
)

func (s *versionedStore) open() error {
	if s.retention < 0 {
		return fmt.Errorf("streamgen: versioned store %q: history retention %d ms, want >= 0", s.name, s.retention)
	}
	v, _, err := s.eng.getMeta(metaObserved)
	if err != nil {
		return err
	}
	s.observed = math.MinInt64
	if len(v) == 8 {
		s.observed = readTime(v)
	}
	s.cObserved = s.observed
	return nil
}

func (s *versionedStore) save(w writer) error {
	if s.observed == s.cObserved {
		return nil
	}
	if err := w.setMeta(metaObserved, appendTime(nil, s.observed)); err != nil {
		return err
	}
	s.cObserved = s.observed
	return nil
}

func (s *versionedStore) ObservedStreamTime() int64 { return s.observed }
func (s *versionedStore) HistoryRetention() int64   { return s.retention }

// horizon is the oldest timestamp still inside the history retention.
func (s *versionedStore) horizon() int64 {
	if s.observed == math.MinInt64 {
		return math.MinInt64
	}
	return satSub(s.observed, s.retention)
}

func (s *versionedStore) Put(key, value []byte, ts int64) (int64, error) {
	if s.eng == nil {
		return 0, s.notOpen()
	}
	validTo, err := s.put(s.w, key, value, ts)
	if err != nil || validTo == VersionedNotPut {
		return validTo, err
	}
	if s.log != nil {
		// Kafka Streams' versioned changelog: the raw key and value, the
		// record timestamp being the version's.
		s.log.Log(key, value, ts)
	}
	return validTo, nil
}

// put writes one version through w (staged, or direct when restoring).
func (s *versionedStore) put(w writer, key, value []byte, ts int64) (int64, error) {
	if ts < s.horizon() {
		return VersionedNotPut, nil
	}
	s.observed = max(s.observed, ts)
	prefix := appendEscaped(append(s.kb[:0], idxVersion), key)
	s.kb = prefix
	validTo := VersionedLatest
	err := s.eng.scan(appendTime(cloneBytes(prefix), satAdd(ts, 1)), prefixEnd(prefix), false, func(k, _ []byte) error {
		validTo = readTime(k[len(k)-8:])
		return errStopGet
	})
	if ts == math.MaxInt64 {
		validTo = VersionedLatest
	}
	if err != nil && err != errStopGet {
		return 0, err
	}
	v := append(s.vb[:0], 0)
	if value != nil {
		v = append(append(v[:0], 1), value...)
	}
	s.vb = v
	if err := w.set(appendTime(cloneBytes(prefix), ts), v); err != nil {
		return 0, err
	}
	return validTo, s.prune(w, prefix)
}

// prune deletes the versions of one key that no read can reach: those
// whose validTo is at or before the retention horizon, and a latest
// tombstone at or before it (a read then finds no value either way).
func (s *versionedStore) prune(w writer, prefix []byte) error {
	h := s.horizon()
	var dead [][]byte
	var prev []byte
	err := s.eng.scan(prefix, prefixEnd(prefix), false, func(k, v []byte) error {
		if readTime(k[len(k)-8:]) > h {
			return errStopGet
		}
		if prev != nil {
			dead = append(dead, prev)
		}
		prev = cloneBytes(k)
		if len(v) > 0 && v[0] == 0 {
			// A tombstone at or before the horizon also ends every
			// earlier version's reach; it may be the last one itself.
			dead = append(dead, prev)
			prev = nil
		}
		return nil
	})
	if err != nil && err != errStopGet {
		return err
	}
	for _, k := range dead {
		if err := w.del(k); err != nil {
			return err
		}
	}
	return nil
}

func (s *versionedStore) Get(key []byte) ([]byte, int64, bool, error) {
	return s.GetAsOf(key, math.MaxInt64)
}

func (s *versionedStore) GetAsOf(key []byte, asOf int64) ([]byte, int64, bool, error) {
	if s.eng == nil {
		return nil, 0, false, s.notOpen()
	}
	prefix := appendEscaped([]byte{idxVersion}, key)
	upper := prefixEnd(prefix)
	if asOf != math.MaxInt64 {
		upper = appendTime(cloneBytes(prefix), asOf+1)
	}
	var (
		val   []byte
		ts    int64
		found bool
	)
	err := s.eng.scan(prefix, upper, true, func(k, v []byte) error {
		ts, found = readTime(k[len(k)-8:]), true
		if len(v) > 0 && v[0] == 1 {
			val = cloneBytes(v[1:])
		}
		return errStopGet
	})
	if err != nil && err != errStopGet {
		return nil, 0, false, err
	}
	if !found || val == nil {
		return nil, 0, false, nil
	}
	if asOf < s.horizon() {
		// Beyond the history retention only the latest version answers.
		latest, lts, ok, err := s.GetAsOf(key, math.MaxInt64)
		if err != nil || !ok || lts != ts {
			return nil, 0, false, err
		}
		return latest, lts, true, nil
	}
	return val, ts, true, nil
}

func (s *versionedStore) All(fn func(key, value []byte, timestamp int64) error) error {
	if s.eng == nil {
		return s.notOpen()
	}
	// Each key's versions are adjacent; the last one seen before the key
	// changes is its latest.
	var curKey, curVal []byte
	var curTS int64
	have := false
	flush := func() error {
		if have && curVal != nil {
			return fn(curKey, curVal, curTS)
		}
		return nil
	}
	err := s.eng.scan([]byte{idxVersion}, []byte{idxVersion + 1}, false, func(k, v []byte) error {
		key, _, err := readEscaped(nil, k[1:])
		if err != nil {
			return fmt.Errorf("streamgen: versioned store %q: %w", s.name, err)
		}
		if have && string(key) != string(curKey) {
			if err := flush(); err != nil {
				return err
			}
		}
		curKey, curTS, curVal, have = key, readTime(k[len(k)-8:]), nil, true
		if len(v) > 0 && v[0] == 1 {
			curVal = cloneBytes(v[1:])
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// RestoreBatch replays changelog records (key, value, timestamp = the
// version's) through Put's logic into the committed state. Each put reads
// the versions before it, so the records are staged (where reads see them)
// and committed together, rather than written to a batch reads cannot see.
func (s *versionedStore) RestoreBatch(records []ChangelogRecord) error {
	if s.eng == nil {
		return s.notOpen()
	}
	if s.eng.hasStaged() {
		return fmt.Errorf("%w: %q", ErrStagedWrites, s.name)
	}
	err := func() error {
		for _, r := range records {
			if _, err := s.put(s.w, r.Key, r.Value, r.Timestamp); err != nil {
				return err
			}
		}
		if err := s.save(s.w); err != nil {
			return err
		}
		return s.eng.commit(nil)
	}()
	if err != nil {
		s.observed = s.cObserved
		return errors.Join(err, s.eng.abort())
	}
	return nil
}
