package sgstate

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// WindowGetter.Get answers what Fetch answers while windows are put,
// committed and aborted in random order, so that some windows are committed
// and others staged, some start after the committed stream time and some
// before (Get reads only staged writes for the former), and again after the
// store is reopened.
func TestWindowGetWithCommitsAndAborts(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			opts := WindowOptions{Retention: 1000, WindowSize: 100, SegmentInterval: 200}
			s := v.window("w", opts)
			initStore(t, s, dir, nil)
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
}
