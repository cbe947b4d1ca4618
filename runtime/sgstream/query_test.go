package sgstream

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// A query reads through the record cache without flushing it: it sees the
// cached counts, the task forwards nothing, and the store underneath is
// unchanged until the task commits.
func TestQueryKVReadsThroughCacheWithoutFlushing(t *testing.T) {
	task, out := cachedTask(t, countTopology, 1<<20)
	procS(t, task, "in", "b", "x", 1)
	procS(t, task, "in", "a", "x", 2)
	procS(t, task, "in", "a", "x", 3)
	if err := task.Commit(nil); err != nil { // a and b reach the store
		t.Fatal(err)
	}
	out.take("out", nil)
	procS(t, task, "in", "a", "x", 4) // cached: a=3
	procS(t, task, "in", "c", "x", 5) // cached only: c=1
	s, err := task.Store("counts")
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.QueryKV(s)
	if err != nil {
		t.Fatal(err)
	}
	count := func(v []byte) int64 { return int64(binary.BigEndian.Uint64(v[8:])) }
	v, ok, err := r.Get([]byte("a"))
	if err != nil || !ok || count(v) != 3 {
		t.Fatalf("Get(a) = %v %v %v, want the cached 3", v, ok, err)
	}
	var got []string
	err = r.Range(nil, nil, func(k, v []byte) error {
		got = append(got, fmt.Sprintf("%s=%d", k, count(v)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "a=3 b=1 c=1" {
		t.Fatalf("Range = %v, want a=3 b=1 c=1", got)
	}
	got = nil
	r.Range([]byte("b"), []byte("c"), func(k, v []byte) error {
		got = append(got, string(k))
		return nil
	})
	if strings.Join(got, " ") != "b c" {
		t.Fatalf("Range(b, c) = %v", got)
	}
	if recs := out.take("out", nil); len(recs) != 0 {
		t.Fatalf("queries made the task forward %v", recs)
	}
	under := s.(*cachedKV).KeyValueStore
	if _, ok, _ := under.Get([]byte("c")); ok {
		t.Fatal("a query flushed the cache into the store")
	}
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if recs := out.take("out", nil); len(recs) != 2 {
		t.Fatalf("commit forwarded %v, want the two cached updates", recs)
	}
}
