package serdes

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestAppendInt64Compact(t *testing.T) {
	cases := []struct {
		v    int64
		size int
	}{
		{0, 1}, {127, 1}, {128, 2}, {255, 2}, {256, 3}, {65535, 3}, {65536, 5},
		{math.MaxUint32, 5}, {math.MaxUint32 + 1, 9}, {math.MaxInt64, 9},
		{-1, 1}, {-32, 1}, {-33, 2}, {-128, 2}, {-129, 3}, {-32768, 3}, {-32769, 5},
		{math.MinInt32, 5}, {math.MinInt32 - 1, 9}, {math.MinInt64, 9},
	}
	for _, c := range cases {
		b := AppendInt64(nil, c.v)
		if len(b) != c.size {
			t.Errorf("AppendInt64(%d) = % x, want %d bytes", c.v, b, c.size)
		}
		got, rest, err := ReadInt64(b)
		if err != nil || got != c.v || len(rest) != 0 {
			t.Errorf("ReadInt64(% x) = %d, %d rest, %v; want %d", b, got, len(rest), err, c.v)
		}
		if _, err := Skip(b); err != nil {
			t.Errorf("Skip(% x): %v", b, err)
		}
	}
}

func TestUint64RoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64} {
		got, rest, err := ReadUint64(AppendUint64(nil, v))
		if err != nil || got != v || len(rest) != 0 {
			t.Errorf("uint64 %d: got %d, %v", v, got, err)
		}
	}
}

// Other encoders pick other integer forms for the same value; every form
// whose value fits must decode.
func TestReadIntAcceptsEveryWidth(t *testing.T) {
	forms := map[string][]byte{
		"fixint": {0x05},
		"uint8":  {0xcc, 0x05},
		"uint16": {0xcd, 0x00, 0x05},
		"uint32": {0xce, 0, 0, 0, 0x05},
		"uint64": {0xcf, 0, 0, 0, 0, 0, 0, 0, 0x05},
		"int8":   {0xd0, 0x05},
		"int16":  {0xd1, 0x00, 0x05},
		"int32":  {0xd2, 0, 0, 0, 0x05},
		"int64":  {0xd3, 0, 0, 0, 0, 0, 0, 0, 0x05},
	}
	for name, b := range forms {
		if v, _, err := ReadInt32(b); err != nil || v != 5 {
			t.Errorf("ReadInt32(%s) = %d, %v", name, v, err)
		}
		if v, _, err := ReadInt64(b); err != nil || v != 5 {
			t.Errorf("ReadInt64(%s) = %d, %v", name, v, err)
		}
		if v, _, err := ReadUint32(b); err != nil || v != 5 {
			t.Errorf("ReadUint32(%s) = %d, %v", name, v, err)
		}
		if v, _, err := ReadUint64(b); err != nil || v != 5 {
			t.Errorf("ReadUint64(%s) = %d, %v", name, v, err)
		}
		if v, _, err := ReadFloat64(b); err != nil || v != 5 {
			t.Errorf("ReadFloat64(%s) = %v, %v", name, v, err)
		}
	}
}

func TestReadIntRangeErrors(t *testing.T) {
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrDecode) {
			t.Errorf("%s: err = %v, want ErrDecode", name, err)
		}
	}
	_, _, err := ReadInt32(AppendInt64(nil, math.MaxInt32+1))
	check("int32 overflow", err)
	_, _, err = ReadInt32(AppendInt64(nil, math.MinInt32-1))
	check("int32 underflow", err)
	_, _, err = ReadInt64(AppendUint64(nil, math.MaxInt64+1))
	check("int64 overflow", err)
	_, _, err = ReadUint64(AppendInt64(nil, -1))
	check("uint64 negative", err)
	_, _, err = ReadUint32(AppendUint64(nil, math.MaxUint32+1))
	check("uint32 overflow", err)
	_, _, err = ReadInt64(AppendString(nil, "x"))
	check("int64 from string", err)
	if err == nil || !strings.Contains(err.Error(), "want integer, got string") {
		t.Errorf("message = %v", err)
	}
}

func TestFloats(t *testing.T) {
	b := AppendFloat64(nil, 1.25)
	if v, _, err := ReadFloat64(b); err != nil || v != 1.25 {
		t.Errorf("float64: %v %v", v, err)
	}
	if v, _, err := ReadFloat32(b); err != nil || v != 1.25 {
		t.Errorf("float32 from float64: %v %v", v, err)
	}
	b = AppendFloat32(nil, 1.5)
	if v, _, err := ReadFloat64(b); err != nil || v != 1.5 {
		t.Errorf("float64 from float32: %v %v", v, err)
	}
	if _, _, err := ReadFloat64([]byte{0xcb, 1, 2}); !errors.Is(err, ErrDecode) {
		t.Errorf("truncated float64: %v", err)
	}
	if _, _, err := ReadFloat64(AppendBool(nil, true)); err == nil || !strings.Contains(err.Error(), "want float") {
		t.Errorf("float from bool: %v", err)
	}
}

func TestStringsAllForms(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 255, 256, 65535, 65536} {
		s := strings.Repeat("x", n)
		b := AppendString(nil, s)
		got, rest, err := ReadString(b)
		if err != nil || got != s || len(rest) != 0 {
			t.Errorf("string len %d: %d bytes, %v", n, len(got), err)
		}
		// bin is accepted for strings, str for bytes.
		got, _, err = ReadString(AppendBytes(nil, []byte(s)))
		if err != nil || got != s {
			t.Errorf("string from bin len %d: %v", n, err)
		}
		p, _, err := ReadBytes(b)
		if err != nil || string(p) != s {
			t.Errorf("bytes from str len %d: %v", n, err)
		}
		if rest, err := Skip(b); err != nil || len(rest) != 0 {
			t.Errorf("skip str len %d: %v", n, err)
		}
	}
	// str8 for a short string, as some encoders write.
	if got, _, err := ReadString([]byte{0xd9, 2, 'h', 'i'}); err != nil || got != "hi" {
		t.Errorf("str8: %q %v", got, err)
	}
}

func TestReadBytesCopies(t *testing.T) {
	b := AppendBytes(nil, []byte("abc"))
	p, _, err := ReadBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	b[2] = 'X'
	if string(p) != "abc" {
		t.Errorf("ReadBytes aliases its input: %q", p)
	}
	if p, _, _ := ReadBytes(AppendBytes(nil, nil)); p != nil {
		t.Errorf("empty bin = %#v, want nil", p)
	}
}

// Declared lengths larger than the input must fail before anything is
// allocated from them.
func TestHostileLengths(t *testing.T) {
	inputs := map[string][]byte{
		"str32":   {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'},
		"bin32":   {0xc6, 0xff, 0xff, 0xff, 0xff, 'a'},
		"array32": {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01},
		"map32":   {0xdf, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01},
		"ext32":   {0xc9, 0xff, 0xff, 0xff, 0xff, 0x01},
		"fixmap":  {0x82, 0x01, 0x01},
	}
	for name, b := range inputs {
		allocs := testing.AllocsPerRun(10, func() {
			ReadString(b)
			ReadBytes(b)
			ReadArrayHeader(b)
			ReadMapHeader(b)
		})
		if allocs > 8 { // the error values only
			t.Errorf("%s: %v allocs", name, allocs)
		}
		if _, err := Skip(b); !errors.Is(err, ErrDecode) {
			t.Errorf("Skip(%s) = %v, want error", name, err)
		}
	}
	if _, _, err := ReadArrayHeader(inputs["array32"]); err == nil || !strings.Contains(err.Error(), "declared length") {
		t.Errorf("array32: %v", err)
	}
	if _, _, err := ReadMapHeader(inputs["fixmap"]); !errors.Is(err, ErrDecode) {
		t.Errorf("fixmap with 1 of 4 values: %v", err)
	}
}

func TestSkipDeepNestingDoesNotOverflow(t *testing.T) {
	const depth = 1 << 20
	b := bytes.Repeat([]byte{0x91}, depth) // [[[[...
	b = append(b, 0x01)
	rest, err := Skip(b)
	if err != nil || len(rest) != 0 {
		t.Fatalf("Skip nested arrays: %d rest, %v", len(rest), err)
	}
	if _, err := Skip(b[:depth]); !errors.Is(err, ErrDecode) {
		t.Fatalf("truncated nesting: %v", err)
	}
}

func TestSkipAllTypes(t *testing.T) {
	var b []byte
	b = AppendNil(b)
	b = AppendBool(b, true)
	b = AppendInt64(b, -1000)
	b = AppendUint64(b, math.MaxUint64)
	b = AppendFloat32(b, 1)
	b = AppendFloat64(b, 2)
	b = AppendString(b, strings.Repeat("s", 300))
	b = AppendBytes(b, []byte{1, 2, 3})
	b = AppendArrayHeader(b, 2)
	b = AppendMapHeader(b, 1)
	b = AppendString(b, "k")
	b = AppendArrayHeader(b, 0)
	b = AppendInt64(b, 5)
	b = append(b, 0xd4, 1, 2)             // fixext1
	b = append(b, 0xd8, 1)                // fixext16
	b = append(b, make([]byte, 16)...)    //
	b = append(b, 0xc7, 2, 1, 9, 9)       // ext8
	b = append(b, 0xde, 0, 1, 0x01, 0x02) // map16
	b = append(b, 0xdc, 0, 2, 0x01, 0x02) // array16
	b = append(b, 0xd6, 0xff, 0, 0, 0, 1) // timestamp32
	b = append(b, 0xd7, 0xff)             // timestamp64
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 1) //
	const n = 16
	rest := b
	for i := 0; i < n; i++ {
		var err error
		rest, err = Skip(rest)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left", len(rest))
	}
	if _, err := Skip([]byte{0xc1}); err == nil || !strings.Contains(err.Error(), "0xc1") {
		t.Errorf("0xc1: %v", err)
	}
}

func TestTimestampAndDuration(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	got, _, err := ReadTimestamp(AppendTimestamp(nil, ts))
	if err != nil || !got.Equal(ts) || got.Location() != time.UTC {
		t.Errorf("timestamp = %v, %v", got, err)
	}
	got, _, err = ReadTimestamp(AppendTimestamp(nil, time.Time{}))
	if err != nil || got != (time.Time{}) {
		t.Errorf("zero time = %#v, %v", got, err)
	}
	// msgpack timestamp extension, 32-bit seconds.
	got, _, err = ReadTimestamp([]byte{0xd6, 0xff, 0, 0, 0, 10})
	if err != nil || got.Unix() != 10 {
		t.Errorf("timestamp32 = %v, %v", got, err)
	}
	// 96-bit form with nanoseconds.
	b := []byte{0xc7, 12, 0xff, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	got, _, err = ReadTimestamp(b)
	if err != nil || got.Unix() != -1 || got.Nanosecond() != 5 {
		t.Errorf("timestamp96 = %v, %v", got, err)
	}
	d, _, err := ReadDuration(AppendDuration(nil, 1500*time.Millisecond))
	if err != nil || d != 1500*time.Millisecond {
		t.Errorf("duration = %v, %v", d, err)
	}
	d, _, _ = ReadDuration(AppendInt64(nil, math.MaxInt64))
	if d != math.MaxInt64 {
		t.Errorf("huge duration = %v, want saturated", d)
	}
}

func TestReadKey(t *testing.T) {
	id, name, _, err := ReadKey(AppendInt64(nil, 7))
	if err != nil || id != 7 || name != nil {
		t.Errorf("int key: %d %q %v", id, name, err)
	}
	id, name, _, err = ReadKey(AppendInt64(nil, 300))
	if err != nil || id != 300 || name != nil {
		t.Errorf("uint16 key: %d %q %v", id, name, err)
	}
	id, name, _, err = ReadKey(AppendString(nil, "user_id"))
	if err != nil || id != 0 || string(name) != "user_id" {
		t.Errorf("string key: %d %q %v", id, name, err)
	}
	id, name, _, err = ReadKey(AppendString(nil, ""))
	if err != nil || name == nil || len(name) != 0 {
		t.Errorf("empty string key: %d %#v %v", id, name, err)
	}
	for _, b := range [][]byte{AppendInt64(nil, -3), AppendFloat64(nil, 1), {0x91, 0x01}, AppendInt64(nil, math.MaxInt64)} {
		id, name, rest, err := ReadKey(b)
		if err != nil || id != 0 || name != nil || len(rest) != 0 {
			t.Errorf("odd key % x: %d %q %d rest %v", b, id, name, len(rest), err)
		}
	}
}

func TestDecodeErrorPathAndOffset(t *testing.T) {
	input := append(AppendMapHeader(nil, 1), AppendString(nil, "abc")...)
	_, _, err := ReadInt64(input[1:]) // a string where an int belongs
	err = WrapField(err, "sku")
	err = WrapIndex(err, 2)
	err = WrapField(err, "items")
	err = Locate(err, input)
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrDecode) {
		t.Fatalf("err = %#v", err)
	}
	if de.Path != "items[2].sku" || de.Offset != 1 {
		t.Errorf("path %q offset %d", de.Path, de.Offset)
	}
	want := "streamgen: decode items[2].sku at offset 1: want integer, got string"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	err = WrapField(WrapKey(WrapIndex(&DecodeError{Offset: -1, Msg: "x"}, 0), "e\"u"), "tags")
	if got := err.(*DecodeError).Path; got != `tags["e\"u"][0]` {
		t.Errorf("path = %s", got)
	}
}

func TestAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 1024)
	s := strings.Repeat("x", 40)
	allocs := testing.AllocsPerRun(100, func() {
		b := buf[:0]
		b = AppendString(b, s)
		b = AppendInt64(b, -123456)
		b = AppendFloat64(b, 1.5)
		b = AppendTimestamp(b, time.Unix(1, 0))
		b = AppendBytes(b, []byte(s))
		_ = b
	})
	if allocs != 0 {
		t.Errorf("%v allocs, want 0", allocs)
	}
}
