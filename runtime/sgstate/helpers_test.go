package sgstate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// variant builds one flavour of every store kind so that the same table of
// cases runs against memory and real Pebble on disk.
type variant struct {
	name       string
	persistent bool
	kv         func(name string) KeyValueStore
	window     func(name string, o WindowOptions) WindowStore
	session    func(name string, o SessionOptions) SessionStore
}

func variants() []variant {
	return []variant{
		{
			name:    "memory",
			kv:      func(n string) KeyValueStore { return NewMemoryKeyValue(n) },
			window:  func(n string, o WindowOptions) WindowStore { return NewMemoryWindow(n, o) },
			session: func(n string, o SessionOptions) SessionStore { return NewMemorySession(n, o) },
		},
		{
			name:       "pebble",
			persistent: true,
			kv:         func(n string) KeyValueStore { return NewPebbleKeyValue(n, nil) },
			window:     func(n string, o WindowOptions) WindowStore { return NewPebbleWindow(n, o, nil) },
			session:    func(n string, o SessionOptions) SessionStore { return NewPebbleSession(n, o, nil) },
		},
		{
			// A held key-value store; its window and session stores are
			// the Pebble variant's.
			name:       "held",
			persistent: true,
			kv:         func(n string) KeyValueStore { return NewHeldKeyValue(n, nil) },
			window:     func(n string, o WindowOptions) WindowStore { return NewPebbleWindow(n, o, nil) },
			session:    func(n string, o SessionOptions) SessionStore { return NewPebbleSession(n, o, nil) },
		},
	}
}

// eachVariant runs fn as a subtest for every variant.
func eachVariant(t *testing.T, fn func(t *testing.T, v variant)) {
	t.Helper()
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) { fn(t, v) })
	}
}

// eachMode runs fn as the subtest variant/mode/case for every variant,
// every storeMode it supports (only a persistent store can be reopened) and
// every case, which name names.
func eachMode[C any](t *testing.T, cases []C, name func(C) string, fn func(t *testing.T, v variant, mode string, c C)) {
	t.Helper()
	for _, v := range variants() {
		for _, mode := range storeModes {
			if mode == "reopened" && !v.persistent {
				continue
			}
			for _, c := range cases {
				t.Run(v.name+"/"+mode+"/"+name(c), func(t *testing.T) { fn(t, v, mode, c) })
			}
		}
	}
}

// recLog records changelog writes.
type recLog struct{ recs []ChangelogRecord }

func (l *recLog) Log(key, value []byte, ts int64) {
	l.recs = append(l.recs, ChangelogRecord{Key: cloneBytes(key), Value: cloneBytes(value), Timestamp: ts})
}

func initStore(t testing.TB, s Store, dir string, log ChangelogWriter) {
	t.Helper()
	ctx := storeCtx(t, dir)
	ctx.Changelog = log
	if err := s.Init(ctx); err != nil {
		t.Fatalf("init %s: %v", s.Name(), err)
	}
}

// storeCtx is the StoreContext of a store in dir: in a SharedDB under
// sharedEnv.
func storeCtx(t testing.TB, dir string) *StoreContext {
	ctx := &StoreContext{Dir: dir}
	if os.Getenv(sharedEnv) != "" {
		ctx.Shared = testSharedDB(t, filepath.Dir(dir))
		mustNoErr(t, os.MkdirAll(dir, 0o755))
	}
	return ctx
}

// sharedEnv, set, makes initStore open every store in a SharedDB whose
// root is the parent of the store's directory (one per root and test,
// closed when the test ends): TestEveryCaseInASharedDB runs the package's
// tests so.
const sharedEnv = "STREAMGEN_SGSTATE_SHARED"

var testShared = map[string]*SharedDB{}

func testSharedDB(t testing.TB, root string) *SharedDB {
	if db := testShared[root]; db != nil {
		return db
	}
	db, err := OpenSharedDB(root, PebbleOptions{}, nil)
	mustNoErr(t, err)
	testShared[root] = db
	t.Cleanup(func() {
		delete(testShared, root)
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

func openKV(t testing.TB, v variant) (KeyValueStore, string) {
	t.Helper()
	return openStore(t, v.kv("kv"))
}

// openStore inits s in a fresh directory named after it, without a
// changelog, and closes it when the test ends; it returns s and the
// directory, for a reopen.
func openStore[S Store](t testing.TB, s S) (S, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), s.Name())
	initStore(t, s, dir, nil)
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func mustNoErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type kvPair struct{ k, v string }

func collectKV(t testing.TB, f func(fn func(k, v []byte) error) error) []kvPair {
	t.Helper()
	var out []kvPair
	mustNoErr(t, f(func(k, v []byte) error {
		out = append(out, kvPair{string(k), string(v)})
		return nil
	}))
	return out
}

func fmtPairs(p []kvPair) string { return fmt.Sprint(p) }

// storeInMode opens a store with open, writes n puts through put, and returns
// the store whose state the queries should see, as mode (one of storeModes)
// says: the puts staged, each committed, the store reopened on its own
// directory, or a fresh store that restore fills from the changelog the puts
// wrote. The window and session tables share it so that every mode means
// the same for both; the caller closes the store returned.
func storeInMode[S Store](t *testing.T, mode string, open func() S, n int, put func(s S, i int), restore func(s S, recs []ChangelogRecord)) S {
	t.Helper()
	s := open()
	dir := filepath.Join(t.TempDir(), s.Name())
	log := &recLog{}
	initStore(t, s, dir, log)
	for i := 0; i < n; i++ {
		put(s, i)
		if mode != "staged" {
			mustNoErr(t, any(s).(Transactional).Commit(nil))
		}
	}
	switch mode {
	case "reopened":
		mustNoErr(t, s.Close())
		s = open()
		initStore(t, s, dir, nil)
	case "restored":
		mustNoErr(t, s.Close())
		s = open()
		initStore(t, s, filepath.Join(t.TempDir(), s.Name()+"2"), nil)
		restore(s, log.recs)
	}
	return s
}
