package sgimpl

import (
	"bytes"
	"errors"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

func TestCollectionsRoundTrip(t *testing.T) {
	m := map[string]int64{"b": 2, "a": 1, "c": -3}
	b := AppendMap(nil, m, serdes.AppendInt64)
	// Sorted keys: the same bytes whatever the map's iteration order.
	want := serdes.AppendInt64(serdes.AppendString(serdes.AppendInt64(serdes.AppendString(serdes.AppendInt64(serdes.AppendString(serdes.AppendMapHeader(nil, 3), "a"), 1), "b"), 2), "c"), -3)
	if !bytes.Equal(b, want) {
		t.Fatalf("AppendMap = %x, want %x", b, want)
	}
	got, rest, err := ReadMap(b, serdes.ReadInt64)
	if err != nil || len(rest) != 0 || len(got) != 3 || got["c"] != -3 {
		t.Fatalf("ReadMap = %v, %x, %v", got, rest, err)
	}
	l := AppendList(nil, []string{"x", "y"}, serdes.AppendString)
	if got, _, err := ReadList(l, serdes.ReadString); err != nil || len(got) != 2 || got[1] != "y" {
		t.Fatalf("ReadList = %v, %v", got, err)
	}
	// Empty collections decode as nil, the zero value.
	if got, _, err := ReadList(serdes.AppendArrayHeader(nil, 0), serdes.ReadString); err != nil || got != nil {
		t.Fatalf("empty ReadList = %#v, %v", got, err)
	}
	if got, _, err := ReadMap(serdes.AppendMapHeader(nil, 0), serdes.ReadString); err != nil || got != nil {
		t.Fatalf("empty ReadMap = %#v, %v", got, err)
	}
}

func TestCollectionsErrorPaths(t *testing.T) {
	var de *serdes.DecodeError
	l := serdes.AppendBool(serdes.AppendString(serdes.AppendArrayHeader(nil, 2), "x"), true)
	if _, _, err := ReadList(l, serdes.ReadString); !errors.As(err, &de) || de.Path != "[1]" {
		t.Fatalf("ReadList error %v, want path [1]", err)
	}
	m := serdes.AppendBool(serdes.AppendString(serdes.AppendMapHeader(nil, 1), "eu"), true)
	if _, _, err := ReadMap(m, serdes.ReadString); !errors.As(err, &de) || de.Path != `["eu"]` {
		t.Fatalf("ReadMap error %v, want path [\"eu\"]", err)
	}
}

func TestAppendCollectionsAllocs(t *testing.T) {
	m := map[string]int64{"a": 1, "b": 2, "c": 3}
	l := []int32{1, 2, 3}
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		b := AppendMap(buf[:0], m, serdes.AppendInt64)
		b = AppendList(b, l, serdes.AppendInt32)
		var kb [8]string
		for _, k := range SortedKeys(m, kb[:0]) {
			b = serdes.AppendInt64(serdes.AppendString(b, k), m[k])
		}
	})
	if n != 0 {
		t.Errorf("%v allocs, want 0", n)
	}
}

func TestSortedKeys(t *testing.T) {
	m := map[string]int{}
	for i := 0; i < 40; i++ {
		m[string(rune('a'+i%26))+string(rune('a'+i/26))] = i
	}
	keys := SortedKeys(m, nil)
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Fatalf("not sorted: %v", keys)
		}
	}
	if keys := SortedKeys(map[string]int{"b": 1, "a": 2}, nil); keys[0] != "a" || keys[1] != "b" {
		t.Errorf("small map: %v", keys)
	}
	entries := sortedEntries(m, nil)
	for i, e := range entries {
		if e.key != keys[i] || e.value != m[e.key] {
			t.Fatalf("entry %d = %+v, want key %q", i, e, keys[i])
		}
	}
}
