package sgstate

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// A key-value store agrees with a model (a committed map and a map of
// staged writes) under random puts, deletes, commits and aborts, read by
// key and by forward and reverse ranges. Keys come from a small space, so
// the same key is put, deleted, committed and aborted in every order: a
// staged insert deleted again, a committed key deleted then put again, and
// so on.
func TestKeyValueAgainstModel(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		s, _ := openKV(t, v)
		tx := s.(Transactional)
		r := rand.New(rand.NewPCG(5, 6))
		committed := map[string]string{}
		staged := map[string]*string{} // nil: a staged delete
		visible := func() map[string]string {
			m := maps.Clone(committed)
			for k, v := range staged {
				if v == nil {
					delete(m, k)
				} else {
					m[k] = *v
				}
			}
			return m
		}
		key := func() []byte { return []byte{byte('a' + r.IntN(4)), byte('a' + r.IntN(8))}[:1+r.IntN(2)] }
		for i := 0; i < 4000; i++ {
			switch op := r.IntN(20); {
			case op < 8:
				k, val := key(), fmt.Sprint(i)
				if r.IntN(10) == 0 {
					val = "" // an empty value is not a delete
				}
				mustNoErr(t, s.Put(k, []byte(val)))
				staged[string(k)] = &val
			case op < 13:
				k := key()
				mustNoErr(t, s.Delete(k))
				staged[string(k)] = nil
			case op < 16:
				if op < 15 {
					mustNoErr(t, tx.Commit(nil))
					committed = visible()
				} else {
					mustNoErr(t, tx.Abort())
				}
				clear(staged)
				// Exact for the memory store without staged writes.
				if n, err := s.ApproximateNumEntries(); err != nil || v.name == "memory" && n != int64(len(committed)) {
					t.Fatalf("op %d: ApproximateNumEntries = %d %v, want %d", i, n, err, len(committed))
				}
			case op < 18:
				k := key()
				got, ok, err := s.Get(k)
				mustNoErr(t, err)
				want, wantOK := visible()[string(k)]
				if ok != wantOK || string(got) != want || (ok && got == nil) {
					t.Fatalf("op %d: Get(%q) = %q %v, want %q %v", i, k, got, ok, want, wantOK)
				}
			default:
				from, to := key(), key()
				if bytes.Compare(from, to) > 0 {
					from, to = to, from
				}
				var want []string
				for k, v := range visible() {
					if k >= string(from) && k <= string(to) {
						want = append(want, k+"="+v)
					}
				}
				slices.Sort(want)
				var fwd, back, nested []string
				mustNoErr(t, s.Range(from, to, func(k, v []byte) error {
					fwd = append(fwd, string(k)+"="+string(v))
					if len(fwd) == 1 {
						// A scan inside a scan's callback sees the same.
						return s.Range(from, to, func(k, v []byte) error { nested = append(nested, string(k)+"="+string(v)); return nil })
					}
					return nil
				}))
				if !slices.Equal(nested, want) {
					t.Fatalf("op %d: nested Range(%q, %q) = %v, want %v", i, from, to, nested, want)
				}
				mustNoErr(t, s.ReverseRange(from, to, func(k, v []byte) error { back = append(back, string(k)+"="+string(v)); return nil }))
				slices.Reverse(back)
				if !slices.Equal(fwd, want) || !slices.Equal(back, want) {
					t.Fatalf("op %d: Range(%q, %q) = %v / reverse %v, want %v", i, from, to, fwd, back, want)
				}
			}
		}
	})
}
