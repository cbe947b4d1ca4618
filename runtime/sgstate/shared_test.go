package sgstate

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// ownDBTests are the tests the shared-DB rerun leaves out: this one, the
// kill tests (TestKillNineInASharedDB is theirs in a shared DB), and those
// of a store's own Pebble DB: its metrics and defaults under a budget, a
// copy of its files (TestSharedDBUnderABudget covers the shared DB's).
const ownDBTests = `^(TestEveryCaseInASharedDB|TestKillNine.*|TestMemoryBudgetBoundsMemTables|TestNoBudgetKeepsTheDefaults|TestCommitSurvivesKill)$`

// TestEveryCaseInASharedDB runs the package's tests again, in a process of
// their own, with every store in a SharedDB (sharedEnv).
func TestEveryCaseInASharedDB(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.skip="+ownDBTests)
	cmd.Env = append(os.Environ(), sharedEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the tests in a shared DB: %v\n%s", err, out)
	}
}

// openShared opens a SharedDB in a new root, closed when the test ends.
func openShared(t *testing.T, o PebbleOptions) (*SharedDB, string) {
	t.Helper()
	root := t.TempDir()
	db, err := OpenSharedDB(root, o, nil)
	mustNoErr(t, err)
	t.Cleanup(func() { db.Close() })
	return db, root
}

// openIn opens key-value store name in root/task/name inside db, closed
// when the test ends if not before.
func openIn(t *testing.T, db *SharedDB, root, task, name string) KeyValueStore {
	t.Helper()
	dir := filepath.Join(root, task, name)
	mustNoErr(t, os.MkdirAll(dir, 0o755))
	s := NewPebbleKeyValue(name, nil)
	mustNoErr(t, s.Init(&StoreContext{Dir: dir, Shared: db}))
	t.Cleanup(func() { s.Close() }) // before db's: a second Close does nothing
	return s
}

// reopenDB closes stores and db and opens the SharedDB of root again,
// closed when the test ends.
func reopenDB(t *testing.T, db *SharedDB, root string, stores ...KeyValueStore) *SharedDB {
	t.Helper()
	for _, s := range stores {
		mustNoErr(t, s.Close())
	}
	mustNoErr(t, db.Close())
	db, err := OpenSharedDB(root, PebbleOptions{}, nil)
	mustNoErr(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func putCommit(t *testing.T, s KeyValueStore, cp int64, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		mustNoErr(t, s.Put([]byte(kv[i]), []byte(kv[i+1])))
	}
	mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": cp}))
}

func checkKV(t *testing.T, s KeyValueStore, want string, cp int64) {
	t.Helper()
	if got := fmtPairs(collectKV(t, s.All)); got != want {
		t.Errorf("%s holds %s, want %s", s.Name(), got, want)
	}
	if got, _ := s.(Transactional).Checkpoint(); got["t/0"] != cp {
		t.Errorf("%s checkpoint %v, want t/0: %d", s.Name(), got, cp)
	}
}

// TestSharedDBStoresAreIsolated: stores of one SharedDB with the same keys
// (and store names that are prefixes of each other) see only their own
// data, checkpoints and range deletions, before and after a reopen.
func TestSharedDBStoresAreIsolated(t *testing.T) {
	db, root := openShared(t, PebbleOptions{})
	a := openIn(t, db, root, "0_1", "s")
	b := openIn(t, db, root, "0_1", "s2")
	c := openIn(t, db, root, "0_10", "s")
	putCommit(t, a, 1, "k", "a", "x", "a")
	putCommit(t, b, 2, "k", "b")
	putCommit(t, c, 3, "k", "c", "z", "c")
	mustNoErr(t, c.Delete([]byte("z")))
	mustNoErr(t, c.(Transactional).Commit(map[string]int64{"t/0": 4}))
	checkKV(t, a, "[{k a} {x a}]", 1)
	checkKV(t, b, "[{k b}]", 2)
	checkKV(t, c, "[{k c}]", 4)
	db = reopenDB(t, db, root, a, b, c)
	a = openIn(t, db, root, "0_1", "s")
	b = openIn(t, db, root, "0_1", "s2")
	checkKV(t, a, "[{k a} {x a}]", 1)
	checkKV(t, b, "[{k b}]", 2)
	// The window store's range deletions stay within the store too.
	w := NewPebbleWindow("w", WindowOptions{Retention: 10, SegmentInterval: 5}, nil)
	wdir := filepath.Join(root, "0_1", "w")
	mustNoErr(t, os.MkdirAll(wdir, 0o755))
	mustNoErr(t, w.Init(&StoreContext{Dir: wdir, Shared: db}))
	defer w.Close()
	for ts := int64(0); ts < 100; ts += 3 {
		mustNoErr(t, w.Put([]byte("k"), ts, []byte("v")))
		mustNoErr(t, w.(Transactional).Commit(nil))
	}
	checkKV(t, a, "[{k a} {x a}]", 1)
}

// TestSharedDBDropLeavesOtherStores: dropping a store (Drop, or deleting
// its directory, the way the engine wipes a store) empties it and leaves
// every other store as it was, also after a reopen of the DB.
func TestSharedDBDropLeavesOtherStores(t *testing.T) {
	db, root := openShared(t, PebbleOptions{})
	a := openIn(t, db, root, "0_1", "s")
	b := openIn(t, db, root, "0_2", "s")
	c := openIn(t, db, root, "0_3", "s")
	putCommit(t, a, 1, "k", "a")
	putCommit(t, b, 2, "k", "b")
	putCommit(t, c, 3, "k", "c")
	if err := db.Drop(filepath.Join(root, "0_1", "s")); err == nil {
		t.Fatal("Drop of an open store succeeded")
	}
	mustNoErr(t, a.Close())
	mustNoErr(t, b.Close())
	mustNoErr(t, db.Drop(filepath.Join(root, "0_1", "s")))
	mustNoErr(t, os.RemoveAll(filepath.Join(root, "0_2")))

	a = openIn(t, db, root, "0_1", "s")
	b = openIn(t, db, root, "0_2", "s")
	checkKV(t, a, "[]", 0)
	checkKV(t, b, "[]", 0)
	checkKV(t, c, "[{k c}]", 3)
	// A dropped store starts afresh: a new layout is no mismatch.
	mustNoErr(t, a.Close())
	mustNoErr(t, db.Drop(filepath.Join(root, "0_1", "s")))
	w := NewPebbleWindow("s", WindowOptions{Retention: 10, SegmentInterval: 5}, nil)
	mustNoErr(t, w.Init(&StoreContext{Dir: filepath.Join(root, "0_1", "s"), Shared: db}))
	mustNoErr(t, w.Close())
	db = reopenDB(t, db, root, b, c)
	b = openIn(t, db, root, "0_2", "s")
	c = openIn(t, db, root, "0_3", "s")
	checkKV(t, b, "[]", 0)
	checkKV(t, c, "[{k c}]", 3)
}

// TestSharedDBOpenRules: a store opens once at a time, only under the
// root; a failed open (format mismatch) releases it; a directory with a
// store's own DB keeps it; stores with a WAL never share.
func TestSharedDBOpenRules(t *testing.T) {
	db, root := openShared(t, PebbleOptions{})
	a := openIn(t, db, root, "0_1", "s")
	s := NewPebbleKeyValue("s", nil)
	if err := s.Init(&StoreContext{Dir: filepath.Join(root, "0_1", "s"), Shared: db}); err == nil || !strings.Contains(err.Error(), "open already") {
		t.Fatalf("second open: %v", err)
	}
	if err := s.Init(&StoreContext{Dir: t.TempDir(), Shared: db}); err == nil || !strings.Contains(err.Error(), "is not inside") {
		t.Fatalf("open outside the root: %v", err)
	}
	putCommit(t, a, 1, "k", "a")
	mustNoErr(t, a.Close())
	w := NewPebbleWindow("s", WindowOptions{Retention: 10, SegmentInterval: 5}, nil)
	err := w.Init(&StoreContext{Dir: filepath.Join(root, "0_1", "s"), Shared: db})
	if !errors.Is(err, ErrFormatMismatch) {
		t.Fatalf("layout mismatch: %v", err)
	}
	a = openIn(t, db, root, "0_1", "s")
	checkKV(t, a, "[{k a}]", 1)
	mustNoErr(t, a.Close())

	// A store of an earlier version, in a DB of its own.
	own := filepath.Join(root, "0_2", "s")
	o := NewPebbleKeyValue("s", nil)
	mustNoErr(t, o.Init(&StoreContext{Dir: own}))
	putCommit(t, o, 5, "k", "own")
	mustNoErr(t, o.Close())
	o = openIn(t, db, root, "0_2", "s")
	if o.(*kvStore).eng.(*pebbleEngine).shared != nil {
		t.Error("a store with a DB of its own opened in the shared DB")
	}
	checkKV(t, o, "[{k own}]", 5)
	mustNoErr(t, o.Close())

	// With a WAL: a DB of its own.
	dir := filepath.Join(root, "0_3", "s")
	mustNoErr(t, os.MkdirAll(dir, 0o755))
	wal := NewPebbleKeyValue("s", &PebbleOptions{WAL: true})
	mustNoErr(t, wal.Init(&StoreContext{Dir: dir, Shared: db}))
	defer wal.Close()
	if wal.(*kvStore).eng.(*pebbleEngine).shared != nil {
		t.Error("a store with a WAL opened in the shared DB")
	}
	if _, err := OpenSharedDB(t.TempDir(), PebbleOptions{WAL: true}, nil); err == nil {
		t.Error("a shared DB with a WAL opened")
	}
}

// TestSharedDBFormatMismatch: a shared DB of another format refuses to
// open, quoting both versions.
func TestSharedDBFormatMismatch(t *testing.T) {
	root := t.TempDir()
	pdb, err := pebble.Open(filepath.Join(root, SharedDBDir), &pebble.Options{})
	mustNoErr(t, err)
	mustNoErr(t, pdb.Set(sharedMetaFormat, []byte("0"), pebble.Sync))
	mustNoErr(t, pdb.Close())
	_, err = OpenSharedDB(root, PebbleOptions{}, nil)
	if !errors.Is(err, ErrFormatMismatch) || !strings.Contains(err.Error(), `format version on disk "0", this binary "1"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestSharedDBFlushesOncePerAge: stores written without pause start one
// flush of the shared memtable per maxUnflushedAge between them, not one
// each; an idle commit flushes only what no flush covers yet.
func TestSharedDBFlushesOncePerAge(t *testing.T) {
	db, root := openShared(t, PebbleOptions{})
	var kvs []KeyValueStore
	for _, task := range []string{"0_0", "0_1", "0_2", "0_3"} {
		kvs = append(kvs, openIn(t, db, root, task, "s"))
	}
	flushes := func() int64 { return db.db.Metrics().Flush.Count }
	before := flushes()
	for i := range 20 {
		for _, s := range kvs {
			putCommit(t, s, int64(i+1), "k", "v")
		}
	}
	// Every store is older than maxUnflushedAge unless a flush started;
	// all four committed within it.
	if n := flushes() - before; n > 1 {
		t.Errorf("%d flushes for 80 commits within %v", n, maxUnflushedAge)
	}
	// Idle commits: the first flushes, the others are covered by it.
	for _, s := range kvs {
		mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": 20}))
	}
	for _, s := range kvs {
		mustNoErr(t, s.(*kvStore).eng.(*pebbleEngine).waitFlushed())
	}
	if n := flushes() - before; n > 2 {
		t.Errorf("%d flushes after idle commits, want at most 2", n)
	}
}

// TestSharedDBUnderABudget: the shared DB takes its cache and memtable
// size from the budget, and leaves it when it closes.
func TestSharedDBUnderABudget(t *testing.T) {
	b, err := NewMemoryBudget(64<<20, nil)
	mustNoErr(t, err)
	db, err := OpenSharedDB(t.TempDir(), PebbleOptions{Budget: b}, nil)
	mustNoErr(t, err)
	if got, want := db.mem.size, uint64(8<<20); got != want {
		t.Errorf("memtable size %d under a 64 MiB budget, want %d", got, want)
	}
	if b.stores != 1 {
		t.Errorf("budget counts %d stores, want 1", b.stores)
	}
	mustNoErr(t, db.Close())
	if b.stores != 0 {
		t.Errorf("budget counts %d stores after close, want 0", b.stores)
	}
}

// TestSharedDBDropsDeletedDirectoriesOnOpen: the keys of a store whose
// directory was deleted while the DB was closed are dropped when the DB
// opens, without the store opening again; other stores keep theirs.
func TestSharedDBDropsDeletedDirectoriesOnOpen(t *testing.T) {
	db, root := openShared(t, PebbleOptions{})
	a := openIn(t, db, root, "0_1", "s")
	b := openIn(t, db, root, "0_2", "s")
	putCommit(t, a, 1, "k", "a")
	putCommit(t, b, 2, "k", "b")
	mustNoErr(t, a.Close())
	mustNoErr(t, b.Close())
	mustNoErr(t, db.Close())
	mustNoErr(t, os.RemoveAll(filepath.Join(root, "0_1")))
	db, err := OpenSharedDB(root, PebbleOptions{}, nil)
	mustNoErr(t, err)
	defer db.Close()
	keys := func(id string) (n int) {
		p := sharedPrefix(id)
		it, err := db.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
		mustNoErr(t, err)
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		mustNoErr(t, it.Close())
		return n
	}
	if n := keys("0_1/s"); n != 0 {
		t.Errorf("the deleted store has %d keys, want 0", n)
	}
	if n := keys("0_2/s"); n == 0 {
		t.Error("the other store lost its keys")
	}
}
