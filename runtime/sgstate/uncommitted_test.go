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

// A window store's staged entries count too: its newest segments are held
// in memory and let go of (beyond their limit) only after a commit.
func TestUncommittedWindowBytes(t *testing.T) {
	s := NewPebbleWindow("w", WindowOptions{Retention: 1 << 40}, nil)
	initStore(t, s, t.TempDir(), nil)
	t.Cleanup(func() { s.Close() })
	u := s.(UncommittedSizer)
	for i := range 1000 {
		mustNoErr(t, s.Put(fmt.Appendf(nil, "k%04d", i), int64(i), make([]byte, 100)))
	}
	// Each entry: the key, its 12 bytes of time and tail, the value.
	if n, want := u.UncommittedBytes(), int64(1000*(bandEntryOverhead+5+12+100)); n < want*9/10 || n > want*11/10 {
		t.Fatalf("1000 staged windows: %d uncommitted bytes, want about %d", n, want)
	}
	mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": 1}))
	if n := u.UncommittedBytes(); n != 0 {
		t.Fatalf("after Commit: %d uncommitted bytes", n)
	}
}

// Staged inserts deleted again before the commit do not stay referenced
// by the memory engine's list of staged writes (a join's unmatched records,
// most matched within the commit interval), and the rest still commit.
func TestMemEngineDropsDeletedStagedInserts(t *testing.T) {
	e := newMemEngine()
	w := e.staged()
	for i := range 10 * minDirtyCompact {
		k := fmt.Appendf(nil, "k%05d", i)
		mustNoErr(t, w.set(k, []byte("v")))
		if i%10 != 0 {
			mustNoErr(t, w.del(k))
		}
	}
	if n := len(e.dirty); n > 3*e.nstaged {
		t.Fatalf("%d nodes listed as staged for %d staged writes", n, e.nstaged)
	}
	mustNoErr(t, e.commit(nil))
	var got int
	mustNoErr(t, e.scan(nil, nil, false, func(k, _ []byte) error { got++; return nil }))
	if got != minDirtyCompact {
		t.Fatalf("%d keys committed, want %d", got, minDirtyCompact)
	}
}
