package sgstate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStagingAbortAndCommit(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		log := &recLog{}
		dir := filepath.Join(t.TempDir(), "kv")
		s := v.kv("kv")
		initStore(t, s, dir, log)
		tx := s.(StateStore)
		if cp, err := tx.Checkpoint(); cp != nil || err != nil {
			t.Fatalf("fresh checkpoint = %v, %v", cp, err)
		}
		mustNoErr(t, s.Put([]byte("k"), []byte("old")))
		mustNoErr(t, s.Put([]byte("gone"), []byte("x")))
		mustNoErr(t, tx.Commit(map[string]int64{"app-kv-changelog/0": 2}))

		mustNoErr(t, s.Put([]byte("k"), []byte("new")))
		mustNoErr(t, s.Delete([]byte("gone")))
		mustNoErr(t, s.Put([]byte("fresh"), []byte("y")))
		if got, _, _ := s.Get([]byte("k")); string(got) != "new" {
			t.Fatalf("staged write not visible: %q", got)
		}
		if got := collectKV(t, s.All); fmtPairs(got) != "[{fresh y} {k new}]" {
			t.Fatalf("staged view = %v", got)
		}
		mustNoErr(t, tx.Abort())
		if got := collectKV(t, s.All); fmtPairs(got) != "[{gone x} {k old}]" {
			t.Fatalf("after abort = %v", got)
		}
		if len(log.recs) != 5 || log.recs[3].Value != nil || string(log.recs[3].Key) != "gone" {
			t.Fatalf("changelog = %+v", log.recs)
		}

		mustNoErr(t, s.Put([]byte("k"), []byte("committed")))
		mustNoErr(t, tx.Commit(map[string]int64{"app-kv-changelog/0": 7}))
		if !v.persistent {
			return
		}
		mustNoErr(t, s.Close())
		s2 := v.kv("kv")
		initStore(t, s2, dir, nil)
		defer s2.Close()
		if got := collectKV(t, s2.All); fmtPairs(got) != "[{gone x} {k committed}]" {
			t.Fatalf("after reopen = %v", got)
		}
		cp, err := s2.(Transactional).Checkpoint()
		if err != nil || cp["app-kv-changelog/0"] != 7 || len(cp) != 1 {
			t.Fatalf("checkpoint after reopen = %v, %v", cp, err)
		}
	})
}

// TestCrashKeepsCommittedState: writes staged after the last commit never
// reach disk, whether the store is closed or simply abandoned.
func TestCrashKeepsCommittedState(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		name := "close"
		if abandon {
			name = "abandon"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kv")
			s := NewPebbleKeyValue("kv", nil)
			initStore(t, s, dir, nil)
			mustNoErr(t, s.Put([]byte("a"), []byte("1")))
			mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": 1}))
			mustNoErr(t, s.Put([]byte("a"), []byte("2")))
			mustNoErr(t, s.Put([]byte("b"), []byte("2")))
			if abandon {
				// Simulate a crash: drop the staged batch without going
				// through Close, make what was committed durable (without
				// a WAL, a kill loses what was not flushed, see
				// TestKillNineReopensAtAFlushedCommit), then release the
				// DB lock so it can reopen.
				ks := s.(*kvStore)
				pe := ks.eng.(*pebbleEngine)
				pe.resetStage()
				mustNoErr(t, pe.waitFlushed())
				if pe.shared != nil {
					pe.shared.release(pe.sharedID)
				} else {
					mustNoErr(t, pe.db.Close())
				}
			} else {
				mustNoErr(t, s.Close())
			}
			checkReopened(t, dir, "[{a 1}]", 1)
		})
	}
}

func TestKeyValueRestore(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		log := &recLog{}
		s, _ := openKV(t, v)
		s.Close()
		s = v.kv("kv")
		initStore(t, s, filepath.Join(t.TempDir(), "kv"), log)
		defer s.Close()
		recs := []ChangelogRecord{
			{Key: []byte("a"), Value: []byte("1")},
			{Key: []byte("b"), Value: []byte("2")},
			{Key: []byte("a"), Value: nil},
			{Key: []byte("c"), Value: []byte("3")},
		}
		r := s.(StateStore)
		mustNoErr(t, r.RestoreBatch(recs[:2]))
		mustNoErr(t, r.RestoreBatch(recs[2:]))
		mustNoErr(t, r.Commit(map[string]int64{"t/0": 4}))
		if len(log.recs) != 0 {
			t.Fatalf("restoration was logged: %v", log.recs)
		}
		if got := collectKV(t, s.All); fmtPairs(got) != "[{b 2} {c 3}]" {
			t.Fatalf("restored = %v", got)
		}
		// Restored records are committed: an abort keeps them.
		mustNoErr(t, r.Abort())
		if got := collectKV(t, s.All); fmtPairs(got) != "[{b 2} {c 3}]" {
			t.Fatalf("after abort = %v", got)
		}
		mustNoErr(t, s.Put([]byte("d"), []byte("4")))
		if err := r.RestoreBatch(recs); !errors.Is(err, ErrStagedWrites) {
			t.Fatalf("restore with staged writes: %v", err)
		}
	})
}

func TestFingerprintMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "counts")
	s := NewPebbleKeyValue("counts", &PebbleOptions{Fingerprint: "sha256:aaaa"})
	initStore(t, s, dir, nil)
	mustNoErr(t, s.Put([]byte("k"), []byte("v")))
	mustNoErr(t, s.(Transactional).Commit(nil))
	mustNoErr(t, s.Close())

	// Same fingerprint reopens.
	s = NewPebbleKeyValue("counts", &PebbleOptions{Fingerprint: "sha256:aaaa"})
	initStore(t, s, dir, nil)
	mustNoErr(t, s.Close())

	s = NewPebbleKeyValue("counts", &PebbleOptions{Fingerprint: "sha256:bbbb"})
	err := s.Init(storeCtx(t, dir))
	if !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("err = %v, want ErrSchemaMismatch", err)
	}
	want := `streamgen: state store schema fingerprint mismatch: store "counts": schema fingerprint on disk "sha256:aaaa", this binary "sha256:bbbb"`
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error text:\n got %s\nwant %s…", err, want)
	}
	// The failed open released the DB: a correct open works.
	s = NewPebbleKeyValue("counts", &PebbleOptions{Fingerprint: "sha256:aaaa"})
	initStore(t, s, dir, nil)
	mustNoErr(t, s.Close())
}
func TestLayoutMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s := NewPebbleKeyValue("s", nil)
	initStore(t, s, dir, nil)
	mustNoErr(t, s.Close())
	w := NewPebbleWindow("s", WindowOptions{Retention: 10, SegmentInterval: 5}, nil)
	err := w.Init(storeCtx(t, dir))
	if !errors.Is(err, ErrFormatMismatch) || !strings.Contains(err.Error(), `layout on disk "kv", this binary "window`) {
		t.Fatalf("err = %v", err)
	}
}

// TestCommitSurvivesKill: with a WAL, a commit is on disk (in the OS, not
// necessarily fsynced) when Commit returns, so a process killed with
// SIGKILL reopens at its last commit. Without one (the default), it reopens
// at its last flush, which an idle commit starts: an earlier commit and its
// checkpoint, from which the changelog restores the rest. The store
// directory is copied while the store is still open, which is what SIGKILL
// leaves behind; Close would flush Pebble's buffers and hide the loss.
func TestCommitSurvivesKill(t *testing.T) {
	commit3 := func(t *testing.T, o *PebbleOptions) (*kvStore, string) {
		dir := filepath.Join(t.TempDir(), "kv")
		s := NewPebbleKeyValue("kv", o)
		initStore(t, s, dir, nil)
		t.Cleanup(func() { s.Close() })
		for i := int64(1); i <= 3; i++ {
			mustNoErr(t, s.Put([]byte("a"), []byte{byte('0' + i)}))
			mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": i}))
		}
		return s.(*kvStore), dir
	}
	killed := func(t *testing.T, dir string) string {
		k := filepath.Join(t.TempDir(), "killed")
		mustNoErr(t, os.CopyFS(k, os.DirFS(dir)))
		mustNoErr(t, os.Remove(filepath.Join(k, "LOCK")))
		return k
	}
	t.Run("wal", func(t *testing.T) {
		_, dir := commit3(t, &PebbleOptions{WAL: true})
		checkReopened(t, killed(t, dir), "[{a 3}]", 3)
	})
	t.Run("no wal", func(t *testing.T) {
		s, dir := commit3(t, nil)
		// Nothing flushed yet: the store reopens empty, without a
		// checkpoint (restore everything).
		checkReopened(t, killed(t, dir), "[]", 0)
		// A commit with nothing new flushes.
		mustNoErr(t, s.Commit(map[string]int64{"t/0": 3}))
		mustNoErr(t, s.eng.(*pebbleEngine).waitFlushed())
		checkReopened(t, killed(t, dir), "[{a 3}]", 3)
	})
}

// checkReopened opens the Pebble key-value store in dir anew and checks
// that it holds want (fmtPairs) and the checkpoint t/0: offset, those of
// the last commit before the crash.
func checkReopened(t *testing.T, dir, want string, offset int64) {
	t.Helper()
	s := NewPebbleKeyValue("kv", nil)
	initStore(t, s, dir, nil)
	defer s.Close()
	if got := collectKV(t, s.All); fmtPairs(got) != want {
		t.Fatalf("after the crash = %v, want %s (the last commit)", got, want)
	}
	if cp, _ := s.(Transactional).Checkpoint(); cp["t/0"] != offset {
		t.Fatalf("checkpoint after the crash = %v, want t/0: %d", cp, offset)
	}
}
