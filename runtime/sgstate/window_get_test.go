package sgstate

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// WindowGetter.Get answers what Fetch answers while windows are put,
// committed and aborted in random order, so that some windows are committed
// and others staged, some start after the committed stream time and some
// before (Get reads only staged writes for the former), and again after the
// store is reopened.
func TestWindowGetWithCommitsAndAborts(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		opts := WindowOptions{Retention: 1000, WindowSize: 100, SegmentInterval: 200}
		s, dir := openStore(t, v.window("w", opts))
		r := rand.New(rand.NewPCG(7, 8))
		var puts []wop
		now := int64(0)
		for i := 0; i < 300; i++ {
			switch op := r.IntN(10); {
			case op < 7:
				now += int64(r.IntN(60))
				p := wop{key: fmt.Sprint("k", r.IntN(3)), ts: now - int64(r.IntN(400)), val: fmt.Sprint(i)}
				p.ts -= p.ts % 100
				if r.IntN(8) == 0 {
					p.val, p.del = "", true
				}
				var val []byte
				if !p.del {
					val = []byte(p.val)
				}
				mustNoErr(t, s.Put([]byte(p.key), p.ts, val))
				puts = append(puts, p)
			case op < 9:
				mustNoErr(t, s.(Transactional).Commit(nil))
			default:
				mustNoErr(t, s.(Transactional).Abort())
				now = max(s.ObservedStreamTime(), 0)
			}
			checkGetMatchesFetch(t, s, puts)
			if t.Failed() {
				t.Fatalf("after op %d", i)
			}
		}
		mustNoErr(t, s.(Transactional).Commit(nil))
		if v.persistent {
			mustNoErr(t, s.Close())
			s = v.window("w", opts)
			initStore(t, s, dir, nil)
			checkGetMatchesFetch(t, s, puts)
		}
		mustNoErr(t, s.Close())
	})
}

// Fetch and BackwardFetch agree with a model (committed and staged windows
// by key and start) while windows are put, committed and aborted in random
// order: ranges that start after the committed stream time read the staged
// windows only, the others merge in the committed ones. Nothing expires
// here, so the model needs no retention.
func TestWindowFetchAgainstModel(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		opts := WindowOptions{Retention: 1_000_000, WindowSize: 100, SegmentInterval: 200}
		s, _ := openStore(t, v.window("w", opts))
		r := rand.New(rand.NewPCG(9, 10))
		committed, staged := map[win]string{}, map[win]*string{}
		visible := func(w win) (string, bool) {
			if v, ok := staged[w]; ok {
				if v == nil {
					return "", false
				}
				return *v, true
			}
			v, ok := committed[w]
			return v, ok
		}
		now := int64(0)
		for i := 0; i < 400; i++ {
			switch op := r.IntN(10); {
			case op < 7:
				now += int64(r.IntN(150))
				w := win{fmt.Sprint("k", r.IntN(3)), now - int64(r.IntN(600))}
				w.start -= w.start % 100
				val := fmt.Sprint(i)
				if r.IntN(8) == 0 {
					mustNoErr(t, s.Put([]byte(w.key), w.start, nil))
					staged[w] = nil
				} else {
					mustNoErr(t, s.Put([]byte(w.key), w.start, []byte(val)))
					staged[w] = &val
				}
			case op < 9:
				mustNoErr(t, s.(Transactional).Commit(nil))
				for w, v := range staged {
					if v == nil {
						delete(committed, w)
					} else {
						committed[w] = *v
					}
				}
				clear(staged)
			default:
				mustNoErr(t, s.(Transactional).Abort())
				clear(staged)
			}
			for q := 0; q < 3; q++ {
				key := fmt.Sprint("k", r.IntN(3))
				from := now - int64(r.IntN(700))
				to := from + int64(r.IntN(500))
				checkFetch(t, s, key, from, to, fetchWant(key, from, to, 100, visible))
			}
		}
	})
}
