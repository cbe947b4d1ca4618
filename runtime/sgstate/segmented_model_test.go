package sgstate

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// segmentedVariant is a window store flavour of the model test: memory,
// and Pebble with its segments in memory by default, with a limit so
// small that most segments live in Pebble only, and with none in memory.
type segmentedVariant struct {
	name       string
	persistent bool
	memBytes   int64
}

var segmentedVariants = []segmentedVariant{
	{"memory", false, 0},
	{"pebble", true, 0},
	{"pebble-small-memory", true, 3000},
	{"pebble-no-memory", true, -1},
}

// windowModel is what a window store must show: committed and staged
// windows, and the observed stream time of each, under Kafka's retention
// rule.
type windowModel struct {
	retention            int64
	committed, staged    map[win]string
	cObserved, observed  int64
	stagedDel            map[win]bool
	hasStaged, hadStaged bool
}

type win struct {
	key   string
	start int64
}

func newWindowModel(retention int64) *windowModel {
	return &windowModel{retention: retention, committed: map[win]string{}, staged: map[win]string{}, stagedDel: map[win]bool{},
		observed: math.MinInt64, cObserved: math.MinInt64}
}

func (m *windowModel) minLive() int64 {
	if m.observed == math.MinInt64 {
		return math.MinInt64
	}
	return m.observed - m.retention + 1
}

func (m *windowModel) put(w win, val string, del bool) {
	m.observed = max(m.observed, w.start)
	if w.start < m.minLive() {
		return
	}
	if del {
		delete(m.staged, w)
		m.stagedDel[w] = true
		return
	}
	delete(m.stagedDel, w)
	m.staged[w] = val
}

// visible is the store's staged view of w, retention applied.
func (m *windowModel) visible(w win) (string, bool) {
	if w.start < m.minLive() || w.start > m.observed {
		return "", false
	}
	if v, ok := m.staged[w]; ok {
		return v, true
	}
	if m.stagedDel[w] {
		return "", false
	}
	v, ok := m.committed[w]
	return v, ok
}

func (m *windowModel) commit() {
	for w, v := range m.staged {
		m.committed[w] = v
	}
	for w := range m.stagedDel {
		delete(m.committed, w)
	}
	clear(m.staged)
	clear(m.stagedDel)
	m.cObserved = m.observed
	// What expired is gone from the committed state for good.
	maps.DeleteFunc(m.committed, func(w win, _ string) bool { return w.start < m.minLive() })
}

func (m *windowModel) abort() {
	clear(m.staged)
	clear(m.stagedDel)
	m.observed = m.cObserved
}

// A window store agrees with the model under random puts and deletes
// that move stream time forward by leaps (so that segments expire, also
// between two commits), commits, aborts (which bring expired segments
// back), reopens and restores, read by Fetch, BackwardFetch, Get and
// FetchAll. On Pebble the segments in memory then move: dropped on expiry,
// dropped to keep within a small limit, loaded at open, filled by
// restoration.
func TestWindowStoreAgainstModel(t *testing.T) {
	for _, v := range segmentedVariants {
		t.Run(v.name, func(t *testing.T) {
			const retention = 300
			opts := WindowOptions{Retention: retention, SegmentInterval: 100, MemoryBytes: v.memBytes}
			newStore := func() WindowStore {
				if v.persistent {
					return NewPebbleWindow("w", opts, nil)
				}
				return NewMemoryWindow("w", opts)
			}
			dir := filepath.Join(t.TempDir(), "w")
			log := &txLog{}
			s := newStore()
			initStore(t, s, dir, log)
			defer func() { s.Close() }()
			m := newWindowModel(retention)
			r := rand.New(rand.NewPCG(11, 12))
			now := int64(1000)
			split := 0
			commit := func() {
				mustNoErr(t, s.(Transactional).Commit(map[string]int64{"c": int64(len(log.committed))}))
				m.commit()
				log.commit()
			}
			for i := 0; i < 3000; i++ {
				switch op := r.IntN(40); {
				case op < 28:
					now += int64(r.IntN(12))
					if r.IntN(60) == 0 {
						now += int64(r.IntN(700)) // a leap: segments expire
					}
					w := win{fmt.Sprint("k", r.IntN(4)), now - int64(r.IntN(400))}
					w.start -= w.start % 10
					del := r.IntN(7) == 0
					val := fmt.Sprint(i)
					var b []byte
					if !del {
						b = []byte(val)
					}
					mustNoErr(t, s.Put([]byte(w.key), w.start, b))
					m.put(w, val, del)
				case op < 35:
					commit()
				case op < 38:
					mustNoErr(t, s.(Transactional).Abort())
					m.abort()
					log.abort()
					now = max(m.observed, now-200)
				case op < 39 && v.persistent:
					commit()
					mustNoErr(t, s.Close())
					s = newStore()
					initStore(t, s, dir, log)
				default:
					// A fresh store restored from the committed changelog
					// shows the committed state.
					commit()
					mustNoErr(t, s.Close())
					s = newStore()
					dir = filepath.Join(t.TempDir(), fmt.Sprint("w", i))
					initStore(t, s, dir, log)
					recs := slices.Clone(log.committed)
					mustNoErr(t, s.(Restorer).RestoreBatch(recs[:len(recs)/2]))
					mustNoErr(t, s.(Restorer).RestoreBatch(recs[len(recs)/2:]))
					mustNoErr(t, s.(Transactional).Commit(nil))
				}
				checkWindowModel(t, s, m, r, now)
				checkBandsSettled(t, s.(*windowStore).mem)
				if t.Failed() {
					t.Fatalf("after op %d", i)
				}
				if ws := s.(*windowStore); ws.mem != nil && len(ws.mem.m) > 0 && ws.mem.from > ws.seg.segment(ws.seg.minLive()) {
					split++
				}
			}
			// The small limit must have split the live segments between
			// memory and Pebble for a good part of the run.
			if v.memBytes > 0 && split < 300 {
				t.Errorf("live segments split between memory and Pebble after %d operations, want at least 300", split)
			}
		})
	}
}

// fetchWant is what a fetch of key over [from, to] visits when windows
// start at multiples of step and visible says which there are.
func fetchWant(key string, from, to, step int64, visible func(win) (string, bool)) []string {
	var want []string
	for st := from - from%step - step; st <= to; st += step {
		if v, ok := visible(win{key, st}); ok && st >= from {
			want = append(want, fmt.Sprint(st, "=", v))
		}
	}
	return want
}

// checkFetch: Fetch and BackwardFetch of key over [from, to] visit want
// ("start=value"), forward and backward.
func checkFetch(t *testing.T, s WindowStore, key string, from, to int64, want []string) {
	t.Helper()
	var fwd, back []string
	mustNoErr(t, s.Fetch([]byte(key), from, to, func(st int64, v []byte) error { fwd = append(fwd, fmt.Sprint(st, "=", string(v))); return nil }))
	mustNoErr(t, s.BackwardFetch([]byte(key), from, to, func(st int64, v []byte) error { back = append(back, fmt.Sprint(st, "=", string(v))); return nil }))
	slices.Reverse(back)
	if !slices.Equal(fwd, want) || !slices.Equal(back, want) {
		t.Fatalf("Fetch(%s, %d, %d) = %v / backward %v, want %v", key, from, to, fwd, back, want)
	}
}

// checkBandsSettled: between a commit (or an abort) and the next write,
// a segment in memory holds committed entries only, as many as it counts,
// and no key without entries.
func checkBandsSettled(t *testing.T, b *bands) {
	t.Helper()
	if b == nil || len(b.dirty) > 0 {
		return
	}
	for sg, bd := range b.m {
		n := 0
		for _, k := range bd.keys {
			if len(k.es) == 0 {
				t.Fatalf("segment %d keeps key %q without entries", sg, k.esc)
			}
			for _, e := range k.es {
				if !e.committed || e.stage != stNone {
					t.Fatalf("segment %d: entry %q/%x committed %v stage %d after settling", sg, k.esc, e.tt, e.committed, e.stage)
				}
				n++
			}
		}
		if n != bd.n || n == 0 {
			t.Fatalf("segment %d holds %d entries, counts %d", sg, n, bd.n)
		}
	}
}

// txLog is a changelog in transactions: Restore reads what committed.
type txLog struct{ committed, pending []ChangelogRecord }

func (l *txLog) Log(key, value []byte, ts int64) {
	l.pending = append(l.pending, ChangelogRecord{Key: cloneBytes(key), Value: cloneBytes(value), Timestamp: ts})
}

func (l *txLog) commit() { l.committed, l.pending = append(l.committed, l.pending...), nil }
func (l *txLog) abort()  { l.pending = nil }

func checkWindowModel(t *testing.T, s WindowStore, m *windowModel, r *rand.Rand, now int64) {
	t.Helper()
	if got := s.ObservedStreamTime(); got != m.observed {
		t.Fatalf("observed = %d, want %d", got, m.observed)
	}
	for q := 0; q < 4; q++ {
		key := fmt.Sprint("k", r.IntN(4))
		from := now - int64(r.IntN(500))
		to := from + int64(r.IntN(400))
		checkFetch(t, s, key, from, to, fetchWant(key, from, to, 10, m.visible))
		st := from - from%10
		got, found, err := s.(WindowGetter).Get([]byte(key), st)
		mustNoErr(t, err)
		if v, ok := m.visible(win{key, st}); ok != found || v != string(got) {
			t.Fatalf("Get(%s, %d) = %q %v, want %q %v", key, st, got, found, v, ok)
		}
	}
	from := now - int64(r.IntN(500))
	to := from + int64(r.IntN(400))
	var want []string
	for st := from - from%10 - 10; st <= to; st += 10 {
		for k := 0; k < 4; k++ {
			key := fmt.Sprint("k", k)
			if v, ok := m.visible(win{key, st}); ok && st >= from {
				want = append(want, fmt.Sprint(key, "@", st, "=", v))
			}
		}
	}
	var got []string
	mustNoErr(t, s.FetchAll(from, to, func(k []byte, st int64, v []byte) error {
		got = append(got, fmt.Sprint(string(k), "@", st, "=", string(v)))
		return nil
	}))
	if !slices.Equal(got, want) {
		t.Fatalf("FetchAll(%d, %d) =\n%s\nwant\n%s", from, to, strings.Join(got, " "), strings.Join(want, " "))
	}
}
