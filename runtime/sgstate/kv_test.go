package sgstate

import (
	"errors"
	"strings"
	"testing"
)

func TestKeyValueCRUD(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		s, _ := openKV(t, v)
		if _, ok, err := s.Get([]byte("a")); ok || err != nil {
			t.Fatalf("get missing: ok=%v err=%v", ok, err)
		}
		mustNoErr(t, s.Put([]byte("a"), []byte("1")))
		mustNoErr(t, s.Put([]byte("b"), []byte{}))
		got, ok, err := s.Get([]byte("a"))
		if err != nil || !ok || string(got) != "1" {
			t.Fatalf("get a = %q %v %v", got, ok, err)
		}
		got[0] = 'X' // the caller owns the copy
		if got, _, _ := s.Get([]byte("a")); string(got) != "1" {
			t.Fatalf("store value changed through returned slice: %q", got)
		}
		if got, ok, _ := s.Get([]byte("b")); !ok || got == nil || len(got) != 0 {
			t.Fatalf("empty value: %q ok=%v nil=%v", got, ok, got == nil)
		}
		mustNoErr(t, s.Put([]byte("a"), []byte("2")))
		if got, _, _ := s.Get([]byte("a")); string(got) != "2" {
			t.Fatalf("overwrite: %q", got)
		}
		mustNoErr(t, s.Put([]byte("a"), nil))
		if _, ok, _ := s.Get([]byte("a")); ok {
			t.Fatal("put nil did not delete")
		}
		mustNoErr(t, s.Put([]byte("c"), []byte("3")))
		mustNoErr(t, s.Delete([]byte("c")))
		mustNoErr(t, s.Delete([]byte("never")))
		if _, ok, _ := s.Get([]byte("c")); ok {
			t.Fatal("delete did not delete")
		}
		// Same answers after commit.
		mustNoErr(t, s.(Transactional).Commit(nil))
		if got := collectKV(t, s.All); fmtPairs(got) != "[{b }]" {
			t.Fatalf("all after commit = %v", got)
		}
	})
}

func TestKeyValueRanges(t *testing.T) {
	keys := []string{"a", "ab", "abc", "abd", "b", "b\x00", "b\x00\x01", "c", "\xff", "\xff\xff"}
	cases := []struct {
		name     string
		run      func(s KeyValueStore, fn func(k, v []byte) error) error
		want     string
		commitAt int // keys[:commitAt] committed, the rest staged
	}{
		{"all", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.All(fn) },
			"[a ab abc abd b b\x00 b\x00\x01 c \xff \xff\xff]", 0},
		{"range inclusive", func(s KeyValueStore, fn func(k, v []byte) error) error {
			return s.Range([]byte("ab"), []byte("b"), fn)
		}, "[ab abc abd b]", 4},
		{"range open from", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.Range(nil, []byte("ab"), fn) },
			"[a ab]", 10},
		{"range open to", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.Range([]byte("c"), nil, fn) },
			"[c \xff \xff\xff]", 5},
		{"range bounds absent", func(s KeyValueStore, fn func(k, v []byte) error) error {
			return s.Range([]byte("aa"), []byte("abz"), fn)
		}, "[ab abc abd]", 3},
		{"range empty", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.Range([]byte("d"), []byte("e"), fn) },
			"[]", 0},
		{"reverse", func(s KeyValueStore, fn func(k, v []byte) error) error {
			return s.ReverseRange([]byte("ab"), []byte("b"), fn)
		}, "[b abd abc ab]", 6},
		{"reverse open", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.ReverseRange(nil, nil, fn) },
			"[\xff\xff \xff c b\x00\x01 b\x00 b abd abc ab a]", 2},
		{"prefix", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.PrefixScan([]byte("ab"), fn) },
			"[ab abc abd]", 5},
		{"prefix with zero byte", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.PrefixScan([]byte("b\x00"), fn) },
			"[b\x00 b\x00\x01]", 7},
		{"prefix 0xff", func(s KeyValueStore, fn func(k, v []byte) error) error { return s.PrefixScan([]byte("\xff"), fn) },
			"[\xff \xff\xff]", 9},
	}
	for _, v := range variants() {
		for _, c := range cases {
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				s, _ := openKV(t, v)
				for i, k := range keys {
					if i == c.commitAt {
						mustNoErr(t, s.(Transactional).Commit(nil))
					}
					mustNoErr(t, s.Put([]byte(k), []byte(k)))
				}
				var got []string
				mustNoErr(t, c.run(s, func(k, v []byte) error {
					if string(k) != string(v) {
						t.Errorf("key %q has value %q", k, v)
					}
					got = append(got, string(k))
					return nil
				}))
				if g := "[" + strings.Join(got, " ") + "]"; g != c.want {
					t.Fatalf("got %q, want %q", g, c.want)
				}
				n, err := s.ApproximateNumEntries()
				if err != nil || n != int64(len(keys)) {
					t.Fatalf("ApproximateNumEntries = %d, %v", n, err)
				}
			})
		}
	}
}

func TestKeyValueCallbackErrorAndWriteDuringScan(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		s, _ := openKV(t, v)
		for _, k := range []string{"a", "b", "c"} {
			mustNoErr(t, s.Put([]byte(k), []byte("x")))
		}
		mustNoErr(t, s.(Transactional).Commit(nil))
		stop := errors.New("stop")
		n := 0
		err := s.All(func(k, _ []byte) error { n++; return stop })
		if err != stop || n != 1 {
			t.Fatalf("err=%v n=%d", err, n)
		}
		// Writing to the store from inside a scan must not break it.
		mustNoErr(t, s.All(func(k, _ []byte) error {
			if string(k) == "b" {
				mustNoErr(t, s.Delete([]byte("b")))
			}
			return s.Put(append([]byte("z"), k...), []byte("y"))
		}))
		got := collectKV(t, s.All)
		if len(got) < 4 || got[0].k != "a" || got[1].k != "c" {
			t.Fatalf("after writes during scan: %v", got)
		}
	})
}

func TestNotOpen(t *testing.T) {
	s := NewMemoryKeyValue("x")
	if err := s.Put([]byte("a"), []byte("b")); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("err = %v", err)
	}
}
