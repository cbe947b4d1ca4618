package serdes

import (
	"io"
	"math"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Our primitives must be readable by a mainstream msgpack library and must
// read what it writes, in every integer width it picks.
func TestCompatMsgpackV5Primitives(t *testing.T) {
	var b []byte
	b = AppendInt64(b, -5)
	b = AppendInt64(b, 300)
	b = AppendUint64(b, math.MaxUint64)
	b = AppendFloat32(b, 1.5)
	b = AppendFloat64(b, 2.25)
	b = AppendString(b, "héllo")
	b = AppendBytes(b, []byte{1, 2})
	b = AppendBool(b, true)
	b = AppendNil(b)
	b = AppendTimestamp(b, time.UnixMilli(1700000000123))
	b = AppendArrayHeader(b, 2)
	b = AppendInt64(b, 1)
	b = AppendInt64(b, 2)
	b = AppendMapHeader(b, 1)
	b = AppendString(b, "k")
	b = AppendString(b, "v")

	dec := msgpack.NewDecoder(bytesReader(b))
	want := []any{int64(-5), int64(300), uint64(math.MaxUint64), float32(1.5), 2.25, "héllo", []byte{1, 2}, true, nil,
		int64(1700000000123)}
	for i, w := range want {
		got, err := dec.DecodeInterfaceLoose()
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if !looseEqual(got, w) {
			t.Errorf("value %d = %#v, want %#v", i, got, w)
		}
	}
	var arr []int
	if err := dec.Decode(&arr); err != nil || len(arr) != 2 || arr[1] != 2 {
		t.Errorf("array = %v, %v", arr, err)
	}
	var m map[string]string
	if err := dec.Decode(&m); err != nil || m["k"] != "v" {
		t.Errorf("map = %v, %v", m, err)
	}
}

func looseEqual(a, b any) bool {
	switch av := a.(type) {
	case []byte:
		bv, ok := b.([]byte)
		return ok && string(av) == string(bv)
	case string: // the loose decoder returns bin as a string
		if bv, ok := b.([]byte); ok {
			return av == string(bv)
		}
	case uint64: // and non-negative integers as uint64
		if bv, ok := b.(int64); ok {
			return bv >= 0 && av == uint64(bv)
		}
	case float64:
		switch bv := b.(type) {
		case float32:
			return av == float64(bv)
		case float64:
			return av == bv
		}
		return false
	}
	return a == b
}

func TestCompatReadMsgpackV5Encodings(t *testing.T) {
	enc := func(v any, compact bool) []byte {
		t.Helper()
		var buf bytesWriter
		e := msgpack.NewEncoder(&buf)
		e.UseCompactInts(compact)
		e.UseCompactFloats(compact)
		if err := e.Encode(v); err != nil {
			t.Fatal(err)
		}
		return buf
	}
	for _, compact := range []bool{false, true} {
		for _, v := range []any{int8(-3), int16(-300), int32(70000), int64(-1 << 40), uint8(200), uint16(60000), uint32(4e9), uint64(5)} {
			b := enc(v, compact)
			got, rest, err := ReadInt64(b)
			var want int64
			switch x := v.(type) {
			case int8:
				want = int64(x)
			case int16:
				want = int64(x)
			case int32:
				want = int64(x)
			case int64:
				want = x
			case uint8:
				want = int64(x)
			case uint16:
				want = int64(x)
			case uint32:
				want = int64(x)
			case uint64:
				want = int64(x)
			}
			if err != nil || got != want || len(rest) != 0 {
				t.Errorf("compact=%v %T %v: got %d, %v", compact, v, v, got, err)
			}
		}
		if f, _, err := ReadFloat64(enc(3.0, compact)); err != nil || f != 3 {
			t.Errorf("compact=%v float 3.0: %v %v", compact, f, err)
		}
	}
	ts := time.Date(2024, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	got, _, err := ReadTimestamp(enc(ts, false))
	if err != nil || !got.Equal(ts) {
		t.Errorf("msgpack/v5 time.Time = %v, %v; want %v", got, err, ts)
	}
	s, _, err := ReadString(enc("héllo", false))
	if err != nil || s != "héllo" {
		t.Errorf("string = %q, %v", s, err)
	}
	p, _, err := ReadBytes(enc([]byte{1, 2, 3}, false))
	if err != nil || len(p) != 3 {
		t.Errorf("bytes = %v, %v", p, err)
	}
	rest, err := Skip(enc(map[string]any{"a": []any{1, "x", map[string]int{"b": 2}}, "t": ts}, false))
	if err != nil || len(rest) != 0 {
		t.Errorf("skip nested msgpack/v5 value: %d rest, %v", len(rest), err)
	}
}

type bytesWriter []byte

func (w *bytesWriter) Write(p []byte) (int, error) { *w = append(*w, p...); return len(p), nil }

type reader struct{ b []byte }

func bytesReader(b []byte) *reader { return &reader{b} }

func (r *reader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, errEOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

var errEOF = io.EOF
