package sgstate

import (
	"fmt"
	"testing"
)

// A Pebble store's uncommitted writes are counted while staged, a
// rewrite of a key counts its value's growth only, and Commit and Abort
// release them: the worker's early commit relies on the count. (A held
// store keeps its whole state in memory by design and counts none.)
func TestUncommittedBytes(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			if shared {
				t.Setenv(sharedEnv, "1")
			}
			s := NewPebbleKeyValue("kv", nil)
			initStore(t, s, t.TempDir(), nil)
			t.Cleanup(func() { s.Close() }) // before its shared DB
			u := s.(UncommittedSizer)
			if n := u.UncommittedBytes(); n != 0 {
				t.Fatalf("a new store holds %d uncommitted bytes", n)
			}
			for i := range 1000 {
				mustNoErr(t, s.Put(fmt.Appendf(nil, "k%04d", i), make([]byte, 100)))
			}
			after := u.UncommittedBytes()
			if want := int64(1000 * (5 + 100 + nodeOverhead)); after != want {
				t.Fatalf("1000 staged writes: %d uncommitted bytes, want %d", after, want)
			}
			mustNoErr(t, s.Put([]byte("k0000"), make([]byte, 150)))
			if n := u.UncommittedBytes(); n != after+50 {
				t.Fatalf("rewriting a key with 50 more bytes: %d, want %d", n, after+50)
			}
			mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": 1}))
			if n := u.UncommittedBytes(); n != 0 {
				t.Fatalf("after Commit: %d uncommitted bytes", n)
			}
			mustNoErr(t, s.Put([]byte("x"), []byte("y")))
			mustNoErr(t, s.(Transactional).Abort())
			if n := u.UncommittedBytes(); n != 0 {
				t.Fatalf("after Abort: %d uncommitted bytes", n)
			}
		})
	}
}
