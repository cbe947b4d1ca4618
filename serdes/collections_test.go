package serdes

import (
	"bytes"
	"errors"
	"testing"
)

func TestCollectionsRoundTrip(t *testing.T) {
	m := map[string]int64{"b": 2, "a": 1, "c": -3}
	b := AppendMap(nil, m, AppendInt64)
	// Sorted keys: the same bytes whatever the map's iteration order.
	want := AppendInt64(AppendString(AppendInt64(AppendString(AppendInt64(AppendString(AppendMapHeader(nil, 3), "a"), 1), "b"), 2), "c"), -3)
	if !bytes.Equal(b, want) {
		t.Fatalf("AppendMap = %x, want %x", b, want)
	}
	got, rest, err := ReadMap(b, ReadInt64)
	if err != nil || len(rest) != 0 || len(got) != 3 || got["c"] != -3 {
		t.Fatalf("ReadMap = %v, %x, %v", got, rest, err)
	}
	l := AppendList(nil, []string{"x", "y"}, AppendString)
	if got, _, err := ReadList(l, ReadString); err != nil || len(got) != 2 || got[1] != "y" {
		t.Fatalf("ReadList = %v, %v", got, err)
	}
	// Empty collections decode as nil, the zero value.
	if got, _, err := ReadList(AppendArrayHeader(nil, 0), ReadString); err != nil || got != nil {
		t.Fatalf("empty ReadList = %#v, %v", got, err)
	}
	if got, _, err := ReadMap(AppendMapHeader(nil, 0), ReadString); err != nil || got != nil {
		t.Fatalf("empty ReadMap = %#v, %v", got, err)
	}
}

func TestCollectionsErrorPaths(t *testing.T) {
	var de *DecodeError
	l := AppendBool(AppendString(AppendArrayHeader(nil, 2), "x"), true)
	if _, _, err := ReadList(l, ReadString); !errors.As(err, &de) || de.Path != "[1]" {
		t.Fatalf("ReadList error %v, want path [1]", err)
	}
	m := AppendBool(AppendString(AppendMapHeader(nil, 1), "eu"), true)
	if _, _, err := ReadMap(m, ReadString); !errors.As(err, &de) || de.Path != `["eu"]` {
		t.Fatalf("ReadMap error %v, want path [\"eu\"]", err)
	}
}

func TestAppendCollectionsAllocs(t *testing.T) {
	m := map[string]int64{"a": 1, "b": 2, "c": 3}
	l := []int32{1, 2, 3}
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		b := AppendMap(buf[:0], m, AppendInt64)
		_ = AppendList(b, l, AppendInt32)
	})
	if n != 0 {
		t.Errorf("%v allocs, want 0", n)
	}
}
