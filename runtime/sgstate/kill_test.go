package sgstate

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// killChildEnv names the store directory of the child process
// TestKillNineReopensAtAFlushedCommit starts; the child runs
// TestKillNineChild, which does nothing without it.
const killChildEnv = "STREAMGEN_SGSTATE_KILL_CHILD"

// killBudgetEnv, set, makes the child open its store under a memory budget
// shared with 40 idle stores, small enough that the store flushes for the
// budget every few hundred commits, and commit without idle commits.
const killBudgetEnv = "STREAMGEN_SGSTATE_KILL_BUDGET"

// killSharedEnv, set, makes the child open two stores in one SharedDB, the
// store and one in the directory named after it with "-b", and commit
// both in turn; the parent reopens both (TestKillNineInASharedDB).
const killSharedEnv = "STREAMGEN_SGSTATE_KILL_SHARED"

// killHeldEnv, set, makes the child (and the reopening parent) use a held
// key-value store (NewHeldKeyValue) in place of a Pebble one.
const killHeldEnv = "STREAMGEN_SGSTATE_KILL_HELD"

// newKillStore is the store the kill tests write and reopen.
func newKillStore(opts *PebbleOptions) KeyValueStore {
	if os.Getenv(killHeldEnv) != "" {
		return NewHeldKeyValue("kv", opts)
	}
	return NewPebbleKeyValue("kv", opts)
}

// TestKillNineChild is the process killed by TestKillNineReopensAtAFlushedCommit:
// on a Pebble store without a WAL (the default) it commits transaction
// after transaction, each writing key n = i, key k<i> and checkpoint t/0 =
// i, with an idle commit (which starts a flush) every 50, and prints each
// i once committed. After 400 it waits for its flushes and prints
// "flushed <i>" before committing on.
func TestKillNineChild(t *testing.T) {
	dir := os.Getenv(killChildEnv)
	if dir == "" {
		t.Skip("run by TestKillNineReopensAtAFlushedCommit")
	}
	opts, idleEvery := &PebbleOptions{MemTableSize: 1 << 20}, int64(50)
	if os.Getenv(killBudgetEnv) != "" {
		// No idle commits: the flushes are the budget's (and those of
		// maxUnflushedAge).
		opts, idleEvery = budgetWithIdleStores(t, filepath.Dir(dir), 40), math.MaxInt64
	}
	var kvs []KeyValueStore
	if os.Getenv(killSharedEnv) != "" {
		db, err := OpenSharedDB(filepath.Dir(dir), *opts, nil)
		mustNoErr(t, err)
		for _, d := range []string{dir, dir + "-b"} {
			mustNoErr(t, os.MkdirAll(d, 0o755))
			s := NewPebbleKeyValue("kv", nil)
			mustNoErr(t, s.Init(&StoreContext{Dir: d, Shared: db}))
			kvs = append(kvs, s)
		}
	} else {
		kvs = []KeyValueStore{newKillStore(opts)}
		initStore(t, kvs[0], dir, nil)
	}
	for i := int64(1); ; i++ {
		for _, s := range kvs {
			tx := s.(Transactional)
			mustNoErr(t, s.Put([]byte("n"), []byte(strconv.FormatInt(i, 10))))
			mustNoErr(t, s.Put(fmt.Appendf(nil, "k%08d", i), make([]byte, 100)))
			cp := map[string]int64{"t/0": i}
			mustNoErr(t, tx.Commit(cp))
			if i%idleEvery == 0 {
				mustNoErr(t, tx.Commit(cp))
			}
		}
		if i == 400 {
			for _, s := range kvs {
				eng := s.(*kvStore).eng
				if h, ok := eng.(*heldEngine); ok {
					eng = h.db
				}
				mustNoErr(t, eng.(*pebbleEngine).waitFlushed())
			}
			fmt.Printf("flushed %d\n", i)
		}
		fmt.Println(i)
	}
}

// TestKillNineReopensAtAFlushedCommit kills a process that commits to a
// Pebble store without a WAL with SIGKILL at some point after a flush it
// waited for, several times, and checks what the store reopens with: the
// state of exactly the commit its checkpoint names (a consistent prefix of
// the commits, never a mix), and at least the commit flushed before the
// kill, which is what restoration counts on (it replays the changelog past
// the checkpoint).
func TestKillNineReopensAtAFlushedCommit(t *testing.T) {
	killRounds(t)
}

// TestKillNineInASharedDB is TestKillNineReopensAtAFlushedCommit with two
// stores in one SharedDB: each must reopen at a commit of its own, at or
// after the flush the child waited for.
func TestKillNineInASharedDB(t *testing.T) {
	killRounds(t, killSharedEnv+"=1")
}

// TestKillNineUnderAMemoryBudget is TestKillNineReopensAtAFlushedCommit
// with the flushes a memory budget asks for in place of the idle ones: the
// store must reopen at the commit one of them ended with.
func TestKillNineUnderAMemoryBudget(t *testing.T) {
	killRounds(t, killBudgetEnv+"=1")
}

// TestKillNineHeldStore is TestKillNineReopensAtAFlushedCommit for a held
// store, whose writes reach Pebble only in the commit batch and which
// reloads its memory from Pebble on reopening.
func TestKillNineHeldStore(t *testing.T) {
	t.Setenv(killHeldEnv, "1")
	killRounds(t, killHeldEnv+"=1")
}

// killRounds runs TestKillNineReopensAtAFlushedCommit's rounds with the
// child's environment extended by env.
func killRounds(t *testing.T, env ...string) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for round, after := range []int{0, 37, 600, 3000} {
		dir := filepath.Join(t.TempDir(), "kv")
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineChild$", "-test.count=1")
		cmd.Env = append(append(os.Environ(), killChildEnv+"="+dir), env...)
		out, err := cmd.StdoutPipe()
		mustNoErr(t, err)
		mustNoErr(t, cmd.Start())
		sc := bufio.NewScanner(out)
		flushed, last := int64(0), int64(0)
		for sc.Scan() && (flushed == 0 || last < flushed+int64(after)) {
			line := sc.Text()
			if f, ok := strings.CutPrefix(line, "flushed "); ok {
				flushed, _ = strconv.ParseInt(f, 10, 64)
			} else if n, err := strconv.ParseInt(line, 10, 64); err == nil {
				last = n
			}
		}
		mustNoErr(t, cmd.Process.Kill())
		cmd.Wait()
		if flushed == 0 {
			t.Fatalf("round %d: the child never flushed (last commit %d)", round, last)
		}
		dirs, shared := []string{dir}, (*SharedDB)(nil)
		if slices.Contains(env, killSharedEnv+"=1") {
			dirs = append(dirs, dir+"-b")
			shared = reopenShared(t, filepath.Dir(dir))
		}
		for _, d := range dirs {
			cp, n, keys := reopenCounted(t, d, shared)
			switch {
			case cp < flushed:
				t.Errorf("round %d: %s reopened at checkpoint %d, before the flush of %d it waited for (killed after %d)", round, d, cp, flushed, last)
			case n != cp || keys != cp:
				t.Errorf("round %d: %s: checkpoint %d but n = %d and %d k keys: not the state of one commit", round, d, cp, n, keys)
			}
			t.Logf("round %d: flushed %d, killed after commit %d or later, %s reopened at %d", round, flushed, last, filepath.Base(d), cp)
		}
		if shared != nil {
			mustNoErr(t, shared.Close())
		}
	}
}

// reopenShared opens the SharedDB in root after the process that had it
// open was killed.
func reopenShared(t *testing.T, root string) *SharedDB {
	deadline := time.Now().Add(10 * time.Second)
	for {
		db, err := OpenSharedDB(root, PebbleOptions{}, nil)
		if err == nil {
			return db
		}
		if time.Now().After(deadline) {
			t.Fatalf("reopen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// budgetWithIdleStores returns options with a minimal memory budget that
// n idle stores, opened under dir, share.
func budgetWithIdleStores(t *testing.T, dir string, n int) *PebbleOptions {
	b, err := NewMemoryBudget(MinStoreMemoryBytes, nil)
	mustNoErr(t, err)
	opts := &PebbleOptions{Budget: b}
	for i := range n {
		initStore(t, NewPebbleKeyValue("idle", opts), filepath.Join(dir, fmt.Sprintf("idle%d", i)), nil)
	}
	if b.flushAt(minBudgetMemTableSize) == 0 {
		t.Fatal("the budget would not make the store flush")
	}
	return opts
}

// reopenCounted opens the store in dir and returns its checkpoint t/0, its
// key n and how many k keys it holds.
func reopenCounted(t *testing.T, dir string, shared *SharedDB) (cp, n, keys int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	s := newKillStore(nil)
	ctx := &StoreContext{Dir: dir, Shared: shared}
	// The killed process's lock is released by the kernel; opening may
	// still race its exit on a loaded machine.
	for err := s.Init(ctx); err != nil; err = s.Init(ctx) {
		if time.Now().After(deadline) {
			t.Fatalf("reopen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer s.Close()
	c, err := s.(Transactional).Checkpoint()
	mustNoErr(t, err)
	v, _, err := s.Get([]byte("n"))
	mustNoErr(t, err)
	n, _ = strconv.ParseInt(string(v), 10, 64)
	mustNoErr(t, s.Range([]byte("k"), []byte("l"), func(_, _ []byte) error { keys++; return nil }))
	return c["t/0"], n, keys
}
