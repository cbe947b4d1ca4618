package sgstate

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

type sop struct {
	key        string
	start, end int64
	val        string // "" removes
}

type sq struct {
	kind string // find, ended
	key  string
	a, b int64
	want string
}

type sessionCase struct {
	name    string
	opts    SessionOptions
	puts    []sop
	queries []sq
}

var sessionCases = []sessionCase{
	{
		name: "find sessions inclusive bounds",
		opts: SessionOptions{Retention: 1000},
		puts: []sop{{"a", 0, 5, "s1"}, {"a", 10, 20, "s2"}, {"a", 30, 30, "s3"}, {"b", 0, 5, "b"}},
		queries: []sq{
			// Record at t=10 with gap 5 asks for (t-gap, t+gap): the session
			// ending exactly at t-gap is found.
			{"find", "a", 5, 15, "[0,5]=s1 [10,20]=s2"},
			{"find", "a", 6, 10, "[10,20]=s2"},
			{"find", "a", 5, 9, "[0,5]=s1"},
			{"find", "a", 21, 100, "[30,30]=s3"},
			{"find", "a", 0, 29, "[0,5]=s1 [10,20]=s2"},
			{"find", "a", 30, 30, "[30,30]=s3"},
			{"find", "a", 31, 100, ""},
			{"find", "c", 0, 100, ""},
			{"find", "a", math.MinInt64, math.MaxInt64, "[0,5]=s1 [10,20]=s2 [30,30]=s3"},
			{"ended", "", 5, 20, "a[0,5]=s1 b[0,5]=b a[10,20]=s2"},
			{"ended", "", 6, 19, ""},
			{"ended", "", math.MinInt64, math.MaxInt64, "a[0,5]=s1 b[0,5]=b a[10,20]=s2 a[30,30]=s3"},
		},
	},
	{
		name: "kafka order: by end, then start",
		opts: SessionOptions{Retention: 1000, SegmentInterval: 4},
		puts: []sop{{"a", 0, 10, "x"}, {"a", 5, 8, "y"}, {"a", 2, 10, "z"}},
		queries: []sq{
			{"find", "a", 0, 100, "[5,8]=y [0,10]=x [2,10]=z"},
			{"ended", "", 0, 100, "a[5,8]=y a[0,10]=x a[2,10]=z"},
		},
	},
	{
		name: "retention on session end, exact boundary",
		opts: SessionOptions{Retention: 10, SegmentInterval: 2},
		puts: []sop{{"a", 0, 1, "1"}, {"a", 0, 2, "2"}, {"a", 0, 3, "3"}, {"b", 5, 12, "b"}, {"c", 0, 2, "late"}, {"c", 0, 3, "ok"}},
		queries: []sq{
			{"find", "a", 0, 100, "[0,3]=3"},
			{"find", "c", 0, 100, "[0,3]=ok"},
			{"ended", "", 0, 100, "a[0,3]=3 c[0,3]=ok b[5,12]=b"},
		},
	},
	{
		name: "remove and overwrite",
		opts: SessionOptions{Retention: 100},
		puts: []sop{{"a", 0, 5, "x"}, {"a", 0, 5, "y"}, {"a", 7, 9, "z"}, {"a", 7, 9, ""}},
		queries: []sq{
			{"find", "a", 0, 100, "[0,5]=y"},
			{"ended", "", 0, 100, "a[0,5]=y"},
		},
	},
	{
		name: "keys that prefix each other stay apart",
		opts: SessionOptions{Retention: 100},
		puts: []sop{{"a", 1, 2, "a"}, {"a\x00", 1, 2, "a0"}, {"ab", 1, 2, "ab"}, {"", 1, 2, "e"}},
		queries: []sq{
			{"find", "a", 0, 100, "[1,2]=a"},
			{"find", "", 0, 100, "[1,2]=e"},
			{"ended", "", 0, 100, "[1,2]=e a[1,2]=a a\x00[1,2]=a0 ab[1,2]=ab"},
		},
	},
}

func runSessionQuery(t *testing.T, s SessionStore, q sq) string {
	t.Helper()
	var out []string
	var err error
	switch q.kind {
	case "find":
		err = s.FindSessions([]byte(q.key), q.a, q.b, func(start, end int64, v []byte) error {
			out = append(out, fmt.Sprintf("[%d,%d]=%s", start, end, v))
			return nil
		})
	case "ended":
		err = s.FetchEndedBetween(q.a, q.b, func(k []byte, start, end int64, v []byte) error {
			out = append(out, fmt.Sprintf("%s[%d,%d]=%s", k, start, end, v))
			return nil
		})
	}
	mustNoErr(t, err)
	return strings.Join(out, " ")
}

func TestSessionStore(t *testing.T) {
	eachMode(t, sessionCases, func(c sessionCase) string { return c.name }, func(t *testing.T, v variant, mode string, c sessionCase) {
		open := func() SessionStore { return v.session("s", c.opts) }
		put := func(s SessionStore, i int) {
			p := c.puts[i]
			var val []byte
			if p.val != "" {
				val = []byte(p.val)
			}
			mustNoErr(t, s.Put([]byte(p.key), p.start, p.end, val))
		}
		restore := func(s SessionStore, recs []ChangelogRecord) {
			mustNoErr(t, s.(Restorer).RestoreBatch(recs))
			mustNoErr(t, s.(Transactional).Commit(map[string]int64{"s-changelog/0": 1}))
		}
		s := storeInMode(t, mode, open, len(c.puts), put, restore)
		defer s.Close()
		for _, q := range c.queries {
			if got := runSessionQuery(t, s, q); got != q.want {
				t.Errorf("%s %q (%d,%d) = %q, want %q", q.kind, q.key, q.a, q.b, got, q.want)
			}
		}
	})
}

func TestSessionChangelogFormat(t *testing.T) {
	log := &recLog{}
	s := NewMemorySession("s", SessionOptions{Retention: 100})
	mustNoErr(t, s.Init(&StoreContext{Changelog: log}))
	mustNoErr(t, s.Put([]byte("k"), 3, 9, []byte("v")))
	mustNoErr(t, s.Remove([]byte("k"), 3, 9))
	want := []string{"6b00000000000000090000000000000003=v@9", "6b00000000000000090000000000000003=@9"}
	for i, r := range log.recs {
		if got := fmt.Sprintf("%x=%s@%d", r.Key, r.Value, r.Timestamp); got != want[i] {
			t.Errorf("record %d = %s, want %s", i, got, want[i])
		}
	}
	if log.recs[1].Value != nil {
		t.Error("remove did not log a tombstone")
	}
}
