package sgstream

import (
	"bytes"
	"fmt"
	"math"
	"sort"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// Minimal in-memory window and session stores with Kafka's in-memory
// retention rules, so the windowed operators can be tested without a
// engine.StoreProvider. They keep no staging: "committed" state is simply what
// was written, and it survives a simulated restart when the same provider
// hands the same store out again.

type fakeWindowStore struct {
	name      string
	retention int64
	observed  int64
	data      map[string]map[int64][]byte
	meta      map[string][]byte
}

func newFakeWindowStore(name string, retention int64) *fakeWindowStore {
	return &fakeWindowStore{name: name, retention: retention, observed: math.MinInt64,
		data: map[string]map[int64][]byte{}, meta: map[string][]byte{}}
}

func (s *fakeWindowStore) Name() string                     { return s.name }
func (s *fakeWindowStore) Init(*sgstate.StoreContext) error { return nil }
func (s *fakeWindowStore) Flush() error                     { return nil }
func (s *fakeWindowStore) Close() error                     { return nil }
func (s *fakeWindowStore) ObservedStreamTime() int64        { return s.observed }

func (s *fakeWindowStore) Metadata(k string) ([]byte, bool, error) {
	v, ok := s.meta[k]
	return v, ok, nil
}
func (s *fakeWindowStore) SetMetadata(k string, v []byte) error {
	s.meta[k] = append([]byte(nil), v...)
	return nil
}

func (s *fakeWindowStore) minLive() int64 {
	if s.observed == math.MinInt64 {
		return math.MinInt64
	}
	return s.observed - s.retention + 1
}

func (s *fakeWindowStore) Put(key []byte, start int64, value []byte) error {
	s.observed = max(s.observed, start)
	if start < s.minLive() {
		return nil
	}
	m := s.data[string(key)]
	if m == nil {
		m = map[int64][]byte{}
		s.data[string(key)] = m
	}
	if value == nil {
		delete(m, start)
	} else {
		m[start] = append([]byte(nil), value...)
	}
	return nil
}

func (s *fakeWindowStore) starts(key string, from, to int64) []int64 {
	var out []int64
	for st := range s.data[key] {
		if st >= from && st <= to && st >= s.minLive() {
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (s *fakeWindowStore) Fetch(key []byte, from, to int64, fn func(int64, []byte) error) error {
	for _, st := range s.starts(string(key), from, to) {
		if err := fn(st, s.data[string(key)][st]); err != nil {
			return err
		}
	}
	return nil
}

func (s *fakeWindowStore) BackwardFetch(key []byte, from, to int64, fn func(int64, []byte) error) error {
	sts := s.starts(string(key), from, to)
	for i := len(sts) - 1; i >= 0; i-- {
		if err := fn(sts[i], s.data[string(key)][sts[i]]); err != nil {
			return err
		}
	}
	return nil
}

func (s *fakeWindowStore) FetchAll(from, to int64, fn func([]byte, int64, []byte) error) error {
	type e struct {
		k  string
		st int64
	}
	var all []e
	for k := range s.data {
		for _, st := range s.starts(k, from, to) {
			all = append(all, e{k, st})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].st != all[j].st {
			return all[i].st < all[j].st
		}
		return all[i].k < all[j].k
	})
	for _, x := range all {
		if err := fn([]byte(x.k), x.st, s.data[x.k][x.st]); err != nil {
			return err
		}
	}
	return nil
}

type fakeSession struct {
	key        []byte
	start, end int64
	value      []byte
}

type fakeSessionStore struct {
	name      string
	retention int64
	observed  int64
	sessions  []fakeSession
	meta      map[string][]byte
}

func newFakeSessionStore(name string, retention int64) *fakeSessionStore {
	return &fakeSessionStore{name: name, retention: retention, observed: math.MinInt64, meta: map[string][]byte{}}
}

func (s *fakeSessionStore) Name() string                     { return s.name }
func (s *fakeSessionStore) Init(*sgstate.StoreContext) error { return nil }
func (s *fakeSessionStore) Flush() error                     { return nil }
func (s *fakeSessionStore) Close() error                     { return nil }

func (s *fakeSessionStore) Metadata(k string) ([]byte, bool, error) {
	v, ok := s.meta[k]
	return v, ok, nil
}
func (s *fakeSessionStore) SetMetadata(k string, v []byte) error {
	s.meta[k] = append([]byte(nil), v...)
	return nil
}

func (s *fakeSessionStore) minLive() int64 {
	if s.observed == math.MinInt64 {
		return math.MinInt64
	}
	return s.observed - s.retention + 1
}

func (s *fakeSessionStore) Put(key []byte, start, end int64, value []byte) error {
	if value == nil {
		return s.Remove(key, start, end)
	}
	s.observed = max(s.observed, end)
	if end < s.minLive() {
		return nil
	}
	s.Remove(key, start, end)
	s.sessions = append(s.sessions, fakeSession{append([]byte(nil), key...), start, end, append([]byte(nil), value...)})
	sort.Slice(s.sessions, func(i, j int) bool {
		a, b := s.sessions[i], s.sessions[j]
		if a.end != b.end {
			return a.end < b.end
		}
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c < 0
		}
		return a.start < b.start
	})
	return nil
}

func (s *fakeSessionStore) Remove(key []byte, start, end int64) error {
	for i, x := range s.sessions {
		if bytes.Equal(x.key, key) && x.start == start && x.end == end {
			s.sessions = append(s.sessions[:i], s.sessions[i+1:]...)
			return nil
		}
	}
	return nil
}

func (s *fakeSessionStore) FindSessions(key []byte, earliestEnd, latestStart int64, fn func(int64, int64, []byte) error) error {
	for _, x := range append([]fakeSession(nil), s.sessions...) {
		if bytes.Equal(x.key, key) && x.end >= earliestEnd && x.start <= latestStart && x.end >= s.minLive() {
			if err := fn(x.start, x.end, x.value); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *fakeSessionStore) FetchEndedBetween(from, to int64, fn func([]byte, int64, int64, []byte) error) error {
	for _, x := range append([]fakeSession(nil), s.sessions...) {
		if x.end >= from && x.end <= to && x.end >= s.minLive() {
			if err := fn(x.key, x.start, x.end, x.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// fakeProvider opens fake stores and keeps them across tasks, so a second
// task on the same provider sees the first one's state (a restart).
type fakeProvider struct {
	stores map[string]sgstate.Store
}

func (p *fakeProvider) OpenStore(_ engine.Task, spec *StoreSpec) (sgstate.Store, error) {
	if p.stores == nil {
		p.stores = map[string]sgstate.Store{}
	}
	if s, ok := p.stores[spec.Name]; ok {
		return s, nil
	}
	var s sgstate.Store
	switch spec.Kind {
	case WindowStore:
		s = newFakeWindowStore(spec.Name, spec.Retention.Milliseconds())
	case SessionStore:
		s = newFakeSessionStore(spec.Name, spec.Retention.Milliseconds())
	default:
		return nil, fmt.Errorf("fake provider: unsupported store kind %d", spec.Kind)
	}
	p.stores[spec.Name] = s
	return s, nil
}

var (
	_ sgstate.WindowStore   = (*fakeWindowStore)(nil)
	_ sgstate.SessionStore  = (*fakeSessionStore)(nil)
	_ sgstate.MetadataStore = (*fakeWindowStore)(nil)
	_ sgstate.MetadataStore = (*fakeSessionStore)(nil)
)
