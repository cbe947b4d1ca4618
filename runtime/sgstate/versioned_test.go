package sgstate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

func versionedVariants() []struct {
	name string
	open func(name string, o VersionedOptions) VersionedKeyValueStore
} {
	return []struct {
		name string
		open func(name string, o VersionedOptions) VersionedKeyValueStore
	}{
		{"memory", NewMemoryVersioned},
		{"pebble", func(n string, o VersionedOptions) VersionedKeyValueStore { return NewPebbleVersioned(n, o, nil) }},
	}
}

type vPut struct {
	key     string
	value   *string // nil: tombstone
	ts      int64
	validTo int64
}

type vGet struct {
	key   string
	asOf  int64 // math.MaxInt64: Get
	value string
	ts    int64
	ok    bool
}

func sp(s string) *string { return &s }

// The cases follow KIP-889's contract of VersionedKeyValueStore and
// RocksDBVersionedStore's answers (history retention 10 here).
var versionedCases = []struct {
	name string
	puts []vPut
	gets []vGet
}{
	{
		name: "history",
		puts: []vPut{{"a", sp("1"), 10, VersionedLatest}, {"a", sp("2"), 20, VersionedLatest}, {"a", sp("3"), 25, VersionedLatest}},
		gets: []vGet{
			{"a", math.MaxInt64, "3", 25, true}, {"a", 25, "3", 25, true}, {"a", 24, "2", 20, true},
			{"a", 20, "2", 20, true}, {"a", 19, "1", 10, true}, {"a", 15, "1", 10, true},
			// 14 < 25 - 10: beyond the history retention, and the latest is newer.
			{"a", 14, "", 0, false}, {"b", 30, "", 0, false},
		},
	},
	{
		name: "out-of-order puts return the next version's timestamp",
		puts: []vPut{{"a", sp("1"), 10, VersionedLatest}, {"a", sp("3"), 30, VersionedLatest}, {"a", sp("2"), 20, 30}, {"a", sp("0"), 20, 30}},
		gets: []vGet{{"a", math.MaxInt64, "3", 30, true}, {"a", 29, "0", 20, true}, {"a", 20, "0", 20, true}},
	},
	{
		name: "a put older than the history retention is dropped",
		puts: []vPut{{"a", sp("1"), 30, VersionedLatest}, {"a", sp("2"), 19, VersionedNotPut}, {"a", sp("3"), 20, 30}, {"b", sp("x"), 5, VersionedNotPut}},
		gets: []vGet{{"a", 25, "3", 20, true}, {"a", 19, "", 0, false}, {"b", math.MaxInt64, "", 0, false}},
	},
	{
		name: "tombstones are versions",
		puts: []vPut{{"a", sp("1"), 10, VersionedLatest}, {"a", nil, 15, VersionedLatest}, {"a", sp("2"), 18, VersionedLatest}, {"a", nil, 22, VersionedLatest}},
		gets: []vGet{
			{"a", math.MaxInt64, "", 0, false}, {"a", 21, "2", 18, true}, {"a", 17, "", 0, false},
			{"a", 14, "1", 10, true},
		},
	},
	{
		name: "the latest version never expires",
		puts: []vPut{{"a", sp("1"), 10, VersionedLatest}, {"b", sp("x"), 100, VersionedLatest}},
		gets: []vGet{{"a", 50, "1", 10, true}, {"a", 9, "", 0, false}, {"a", math.MaxInt64, "1", 10, true}},
	},
	{
		name: "an out-of-order tombstone",
		puts: []vPut{{"a", sp("1"), 10, VersionedLatest}, {"a", sp("2"), 20, VersionedLatest}, {"a", nil, 15, 20}},
		gets: []vGet{{"a", 12, "1", 10, true}, {"a", 16, "", 0, false}, {"a", 20, "2", 20, true}},
	},
}

func TestVersionedCases(t *testing.T) {
	for _, v := range versionedVariants() {
		for _, mode := range storeModes {
			if mode == "reopened" && v.name == "memory" {
				continue
			}
			for _, c := range versionedCases {
				t.Run(v.name+"/"+mode+"/"+c.name, func(t *testing.T) {
					open := func() VersionedKeyValueStore { return v.open("vs", VersionedOptions{HistoryRetention: 10}) }
					s := storeInMode(t, mode, open, len(c.puts), func(s VersionedKeyValueStore, i int) {
						p := c.puts[i]
						var val []byte
						if p.value != nil {
							val = []byte(*p.value)
						}
						got, err := s.Put([]byte(p.key), val, p.ts)
						mustNoErr(t, err)
						if got != p.validTo {
							t.Errorf("put %d (%s@%d): validTo %d, want %d", i, p.key, p.ts, got, p.validTo)
						}
					}, func(s VersionedKeyValueStore, recs []ChangelogRecord) {
						mustNoErr(t, s.(Restorer).RestoreBatch(recs))
					})
					defer s.Close()
					for _, g := range c.gets {
						val, ts, ok, err := s.GetAsOf([]byte(g.key), g.asOf)
						mustNoErr(t, err)
						if ok != g.ok || string(val) != g.value || (ok && ts != g.ts) {
							t.Errorf("get %s as of %d: %q@%d %v, want %q@%d %v", g.key, g.asOf, val, ts, ok, g.value, g.ts, g.ok)
						}
					}
				})
			}
		}
	}
}

// versionModel is the contract written as plainly as possible: every
// version kept forever, the retention applied only when reading.
type versionModel struct {
	retention, observed int64
	versions            map[string]map[int64]*string
}

func (m *versionModel) put(k string, v *string, ts int64) int64 {
	if m.observed != math.MinInt64 && ts < m.observed-m.retention {
		return VersionedNotPut
	}
	m.observed = max(m.observed, ts)
	if m.versions[k] == nil {
		m.versions[k] = map[int64]*string{}
	}
	m.versions[k][ts] = v
	next := int64(VersionedLatest)
	for t := range m.versions[k] {
		if t > ts && t < next {
			next = t
		}
	}
	return next
}

func (m *versionModel) get(k string, asOf int64) (string, int64, bool) {
	best, latest := int64(math.MinInt64), int64(math.MinInt64)
	found := false
	for t := range m.versions[k] {
		latest = max(latest, t)
		if t <= asOf && (!found || t > best) {
			best, found = t, true
		}
	}
	if !found || (asOf < m.observed-m.retention && best != latest) {
		return "", 0, false
	}
	if v := m.versions[k][best]; v != nil {
		return *v, best, true
	}
	return "", 0, false
}

// TestVersionedMatchesModel puts random, often out-of-order versions of a
// few keys, committing now and then, and compares every answer (of Put and
// of reads at every time) with the model, on memory and on Pebble, then once
// more after a restore from the changelog and after a reopen.
func TestVersionedMatchesModel(t *testing.T) {
	for _, v := range versionedVariants() {
		t.Run(v.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 20; seed++ {
				rng := rand.New(rand.NewPCG(seed, 7))
				o := VersionedOptions{HistoryRetention: int64(rng.IntN(30))}
				dir := filepath.Join(t.TempDir(), "vs")
				log := &recLog{}
				s := v.open("vs", o)
				initStore(t, s, dir, log)
				m := &versionModel{retention: o.HistoryRetention, observed: math.MinInt64, versions: map[string]map[int64]*string{}}
				clock := int64(0)
				for i := 0; i < 200; i++ {
					clock += int64(rng.IntN(4))
					k := fmt.Sprint("k", rng.IntN(3))
					ts := clock - int64(rng.IntN(40))
					var val *string
					if rng.IntN(5) > 0 {
						val = sp(fmt.Sprint(i))
					}
					var raw []byte
					if val != nil {
						raw = []byte(*val)
					}
					got, err := s.Put([]byte(k), raw, ts)
					mustNoErr(t, err)
					if want := m.put(k, val, ts); got != want {
						t.Fatalf("seed %d put %d %s@%d: validTo %d, want %d", seed, i, k, ts, got, want)
					}
					if rng.IntN(4) == 0 {
						mustNoErr(t, s.(Transactional).Commit(nil))
					}
					checkModel(t, s, m, clock, fmt.Sprintf("seed %d after put %d", seed, i))
				}
				mustNoErr(t, s.(Transactional).Commit(nil))
				mustNoErr(t, s.Close())
				if v.name == "pebble" {
					s = v.open("vs", o)
					initStore(t, s, dir, nil)
					checkModel(t, s, m, clock, fmt.Sprintf("seed %d reopened", seed))
					if s.ObservedStreamTime() != m.observed {
						t.Fatalf("seed %d reopened: observed %d, want %d", seed, s.ObservedStreamTime(), m.observed)
					}
					mustNoErr(t, s.Close())
				}
				s = v.open("vs", o)
				initStore(t, s, filepath.Join(t.TempDir(), "restored"), nil)
				mustNoErr(t, s.(Restorer).RestoreBatch(log.recs))
				checkModel(t, s, m, clock, fmt.Sprintf("seed %d restored", seed))
				mustNoErr(t, s.Close())
			}
		})
	}
}

func checkModel(t *testing.T, s VersionedKeyValueStore, m *versionModel, clock int64, ctx string) {
	t.Helper()
	for k := range 3 {
		key := fmt.Sprint("k", k)
		for asOf := clock - 60; asOf <= clock+1; asOf++ {
			val, ts, ok, err := s.GetAsOf([]byte(key), asOf)
			mustNoErr(t, err)
			wv, wts, wok := m.get(key, asOf)
			if ok != wok || string(val) != wv || ts != wts {
				t.Fatalf("%s: get %s as of %d: %q@%d %v, want %q@%d %v", ctx, key, asOf, val, ts, ok, wv, wts, wok)
			}
		}
	}
}

// TestVersionedAbortAndLatest checks that Abort rolls back versions and the
// observed stream time, and that All lists each key's latest value.
func TestVersionedAbortAndLatest(t *testing.T) {
	for _, v := range versionedVariants() {
		t.Run(v.name, func(t *testing.T) {
			s, _ := openStore(t, v.open("vs", VersionedOptions{HistoryRetention: 5}))
			_, err := s.Put([]byte("a"), []byte("1"), 10)
			mustNoErr(t, err)
			_, err = s.Put([]byte("b"), []byte("x"), 12)
			mustNoErr(t, err)
			mustNoErr(t, s.(Transactional).Commit(nil))
			_, err = s.Put([]byte("a"), nil, 100)
			mustNoErr(t, err)
			if got := s.ObservedStreamTime(); got != 100 {
				t.Fatalf("observed %d, want 100", got)
			}
			var latest []string
			collect := func() {
				latest = latest[:0]
				mustNoErr(t, s.All(func(k, v []byte, ts int64) error {
					latest = append(latest, fmt.Sprintf("%s=%s@%d", k, v, ts))
					return nil
				}))
			}
			collect()
			if fmt.Sprint(latest) != "[b=x@12]" {
				t.Fatalf("All with a staged tombstone: %v", latest)
			}
			mustNoErr(t, s.(Transactional).Abort())
			if got := s.ObservedStreamTime(); got != 12 {
				t.Fatalf("observed after abort %d, want 12", got)
			}
			collect()
			if fmt.Sprint(latest) != "[a=1@10 b=x@12]" {
				t.Fatalf("All after abort: %v", latest)
			}
			// 6 >= 12 - 5 is not: dropped.
			if got, err := s.Put([]byte("a"), []byte("0"), 6); err != nil || got != VersionedNotPut {
				t.Fatalf("put at 6: %d %v, want not put", got, err)
			}
		})
	}
}
