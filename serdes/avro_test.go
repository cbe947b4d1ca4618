package serdes

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

// hambaBytes encodes v with schema text as github.com/hamba/avro/v2 does:
// the reference the Avro primitives must equal byte for byte.
func hambaBytes(t testing.TB, schema string, v any) []byte {
	t.Helper()
	b, err := avro.Config{}.Freeze().Marshal(hambaSchema(t, schema), v)
	if err != nil {
		t.Fatalf("hamba encode %v as %s: %v", v, schema, err)
	}
	return b
}

// wantDecodeErr checks err is a located *DecodeError at offset whose
// message contains msg.
func wantDecodeErr(t *testing.T, err error, path string, offset int, msg string) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("got %v, want a *DecodeError", err)
	}
	if de.Path != path || de.Offset != offset || !strings.Contains(de.Msg, msg) {
		t.Fatalf("got %q (path %q, offset %d), want path %q, offset %d, message with %q", err, de.Path, de.Offset, path, offset, msg)
	}
}

func TestAvroLongZigZag(t *testing.T) {
	cases := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0x00}}, {-1, []byte{0x01}}, {1, []byte{0x02}}, {-64, []byte{0x7f}}, {64, []byte{0x80, 0x01}},
		{-65, []byte{0x81, 0x01}}, {math.MaxInt32, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}},
		{math.MinInt32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{math.MaxInt64, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{math.MinInt64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	}
	for _, c := range cases {
		b := AppendAvroLong(nil, c.v)
		if !bytes.Equal(b, c.want) || !bytes.Equal(b, hambaBytes(t, `"long"`, c.v)) {
			t.Errorf("AppendAvroLong(%d) = % x, want % x (hamba's)", c.v, b, c.want)
		}
		got, rest, err := ReadAvroLong(append(b, 0xaa))
		if err != nil || got != c.v || !bytes.Equal(rest, []byte{0xaa}) {
			t.Errorf("ReadAvroLong(% x) = %d, % x, %v", b, got, rest, err)
		}
		if c.v >= math.MinInt32 && c.v <= math.MaxInt32 {
			if i := AppendAvroInt32(nil, int32(c.v)); !bytes.Equal(i, hambaBytes(t, `"int"`, int32(c.v))) {
				t.Errorf("AppendAvroInt32(%d) = % x, not hamba's", c.v, i)
			}
		}
	}
	// uint64 keeps its bits (a negative long to Java), uint32 always fits.
	if v, _, err := ReadAvroUint64(AppendAvroUint64(nil, math.MaxUint64)); err != nil || v != math.MaxUint64 {
		t.Errorf("uint64 max round trip = %d, %v", v, err)
	}
	if v, _, err := ReadAvroUint32(AppendAvroUint32(nil, math.MaxUint32)); err != nil || v != math.MaxUint32 {
		t.Errorf("uint32 max round trip = %d, %v", v, err)
	}
}

func TestAvroVarintLimits(t *testing.T) {
	ten := bytes.Repeat([]byte{0xff}, 9)
	cases := []struct {
		name string
		b    []byte
		read func([]byte) error
		msg  string
	}{
		{"empty", nil, readLong, "unexpected end of input"},
		{"truncated", []byte{0x80, 0x80}, readLong, "unexpected end of input"},
		{"tenth byte above 1", append(ten, 0x02), readLong, "overflows 64 bits"},
		{"eleven bytes", append(ten, 0x81, 0x00), readLong, "overflows 64 bits"},
		{"int above 2^31-1", AppendAvroLong(nil, math.MaxInt32+1), readInt32, "overflows 32 bits"},
		{"int below -2^31", AppendAvroLong(nil, math.MinInt32-1), readInt32, "overflows 32 bits"},
		{"uint32 negative", AppendAvroLong(nil, -1), readUint32, "out of the range of uint32"},
		{"uint32 above 2^32-1", AppendAvroLong(nil, math.MaxUint32+1), readUint32, "out of the range of uint32"},
		{"boolean 2", []byte{2}, func(b []byte) error { _, _, err := ReadAvroBool(b); return err }, "want 0 or 1"},
		{"enum index", AppendAvroLong(nil, 3), func(b []byte) error { _, _, err := ReadAvroIndex(b, 3, "enum symbol"); return err }, "enum symbol index 3 is out of range, want 0 to 2"},
		{"negative index", AppendAvroLong(nil, -1), func(b []byte) error { _, _, err := ReadAvroIndex(b, 3, "union"); return err }, "union index -1"},
		{"present: null branch", []byte{0}, readPresent, "want the union's value branch"},
		{"present: index 2", []byte{4}, readPresent, "union index 2 is out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantDecodeErr(t, Locate(c.read(c.b), c.b), "", 0, c.msg)
		})
	}
}

func readLong(b []byte) error    { _, _, err := ReadAvroLong(b); return err }
func readInt32(b []byte) error   { _, _, err := ReadAvroInt32(b); return err }
func readUint32(b []byte) error  { _, _, err := ReadAvroUint32(b); return err }
func readPresent(b []byte) error { _, err := ReadAvroPresent(b); return err }

func TestAvroLengths(t *testing.T) {
	huge := AppendAvroLong(nil, math.MaxInt64)
	for _, b := range [][]byte{
		append(AppendAvroLong(nil, 10), "abc"...), // longer than the input
		huge, append(huge, 'x'), // must not allocate 2^63 bytes
	} {
		_, _, err := ReadAvroString(b)
		wantDecodeErr(t, Locate(err, b), "", 0, "declared length exceeds the remaining input")
		_, _, err = ReadAvroBytes(b)
		wantDecodeErr(t, Locate(err, b), "", 0, "declared length exceeds the remaining input")
	}
	neg := append(AppendAvroLong(nil, -2), "ab"...)
	_, _, err := ReadAvroString(neg)
	wantDecodeErr(t, Locate(err, neg), "", 0, "negative length -2")

	// Strings: hamba's bytes, and a copy the input's owner may reuse.
	in := AppendAvroString(nil, "héllo")
	if !bytes.Equal(in, hambaBytes(t, `"string"`, "héllo")) {
		t.Errorf("AppendAvroString = % x, not hamba's", in)
	}
	s, rest, err := ReadAvroString(in)
	in[2] = 'X'
	if s != "héllo" || len(rest) != 0 || err != nil {
		t.Errorf("ReadAvroString = %q, % x, %v", s, rest, err)
	}
	// Empty bytes are nil (the zero value); others a copy.
	if p, _, err := ReadAvroBytes([]byte{0}); p != nil || err != nil {
		t.Errorf("ReadAvroBytes(empty) = %#v, %v", p, err)
	}
}

// TestAvroInvalidUTF8 pins the policy: an Avro string's bytes are kept as
// they are, both ways, as hamba does (Java's Utf8 would show U+FFFD when
// it converts one to a String). A Go string may hold any bytes, and
// refusing them would dead-letter records other Go and Python writers
// produce; keeping them makes a record round-trip exactly.
func TestAvroInvalidUTF8(t *testing.T) {
	bad := "bad \xff utf8 \xc3"
	b := AppendAvroString(nil, bad)
	if !bytes.Equal(b, hambaBytes(t, `"string"`, bad)) {
		t.Errorf("AppendAvroString(invalid UTF-8) = % x, not hamba's", b)
	}
	got, _, err := ReadAvroString(b)
	if err != nil || got != bad {
		t.Errorf("ReadAvroString = %q, %v, want the bytes as written", got, err)
	}
	var h string
	if err := avro.Unmarshal(avro.MustParse(`"string"`), b, &h); err != nil || h != bad {
		t.Errorf("hamba reads %q, %v", h, err)
	}
}

func TestAvroFloats(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, -2.25e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		b := AppendAvroFloat64(nil, f)
		if !bytes.Equal(b, hambaBytes(t, `"double"`, f)) {
			t.Errorf("AppendAvroFloat64(%v) = % x, not hamba's", f, b)
		}
		got, _, err := ReadAvroFloat64(b)
		if err != nil || math.Float64bits(got) != math.Float64bits(f) {
			t.Errorf("double %v read back as %v, %v", f, got, err)
		}
		f32 := float32(f)
		b = AppendAvroFloat32(nil, f32)
		if !bytes.Equal(b, hambaBytes(t, `"float"`, f32)) {
			t.Errorf("AppendAvroFloat32(%v) = % x, not hamba's", f32, b)
		}
		g32, _, err := ReadAvroFloat32(b)
		if err != nil || math.Float32bits(g32) != math.Float32bits(f32) {
			t.Errorf("float %v read back as %v, %v", f32, g32, err)
		}
	}
	for n := 0; n < 8; n++ {
		b := make([]byte, n)
		if _, _, err := ReadAvroFloat64(b); !errors.Is(err, ErrDecode) {
			t.Errorf("double from %d bytes: %v", n, err)
		}
		if _, _, err := ReadAvroFloat32(b); n < 4 && !errors.Is(err, ErrDecode) {
			t.Errorf("float from %d bytes: %v", n, err)
		}
	}
}

// longItems reads an array of longs with AvroBlocks.
func longItems(b []byte) ([]int64, []byte, error) {
	var got []int64
	rest, err := AvroBlocks(b, func(b []byte, _ int) ([]byte, error) {
		v, rest, err := ReadAvroLong(b)
		got = append(got, v)
		return rest, err
	})
	return got, rest, err
}

func TestAvroBlocks(t *testing.T) {
	// hamba writes one block with a positive count; Java's
	// BlockingBinaryEncoder writes negative counts with byte sizes.
	b := hambaBytes(t, `{"type":"array","items":"long"}`, []int64{1, -2, 300})
	if got, _, err := longItems(b); err != nil || len(got) != 3 || got[2] != 300 {
		t.Errorf("hamba's array = %v, %v", got, err)
	}
	var blocks []byte
	blocks = AppendAvroLong(blocks, -2) // two items,
	blocks = AppendAvroLong(blocks, 2)  // of two bytes: 1 and -2
	blocks = AppendAvroLong(AppendAvroLong(blocks, 1), -2)
	blocks = AppendAvroLong(AppendAvroLong(blocks, 1), 300)
	blocks = append(blocks, 0, 0xee)
	got, rest, err := longItems(blocks)
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != -2 || got[2] != 300 || !bytes.Equal(rest, []byte{0xee}) {
		t.Errorf("negative-count blocks = %v, % x, %v", got, rest, err)
	}
	// hamba reads the same blocks.
	var h []int64
	if err := avro.Unmarshal(avro.MustParse(`{"type":"array","items":"long"}`), blocks[:len(blocks)-1], &h); err != nil || len(h) != 3 {
		t.Errorf("hamba reads the blocks as %v, %v", h, err)
	}

	cases := []struct {
		name string
		b    []byte
		at   int
		msg  string
	}{
		{"count beyond the input", append(AppendAvroLong(nil, 1<<40), 2, 4), 8, "unexpected end of input"},
		{"minimum count", AppendAvroLong(nil, math.MinInt64), 0, "block count out of range"},
		{"negative count without its size", AppendAvroLong(nil, -3), 1, "unexpected end of input"},
		{"negative count, truncated size", append(AppendAvroLong(nil, -3), 0x80), 1, "unexpected end of input"},
		{"no end", []byte{2, 2}, 2, "unexpected end of input"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := longItems(c.b)
			wantDecodeErr(t, Locate(err, c.b), "", c.at, c.msg)
		})
	}

	// Items of no bytes (nulls, empty records) are bounded, not looped
	// over for ever.
	nulls := append(AppendAvroLong(nil, 1<<40), 0)
	_, err = AvroBlocks(nulls, func(b []byte, _ int) ([]byte, error) { return b, nil })
	if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "items of no bytes") {
		t.Errorf("a 2^40 count of empty items: %v", err)
	}
}

// TestAvroReadersNeverPanic runs every reader on every prefix and every
// one-byte corruption of valid encodings.
func TestAvroReadersNeverPanic(t *testing.T) {
	readers := avroReaders()
	seeds := [][]byte{
		AppendAvroLong(nil, math.MinInt64), AppendAvroString(nil, "héllo"), AppendAvroFloat64(nil, 1.5),
		append(AppendAvroLong(AppendAvroLong(nil, -2), 4), 2, 4, 0), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}
	for _, s := range seeds {
		for n := 0; n <= len(s); n++ {
			for i := 0; i < max(n, 1); i++ {
				for _, c := range []byte{0, 1, 0x7f, 0x80, 0xff} {
					b := append([]byte(nil), s[:n]...)
					if i < n {
						b[i] = c
					}
					for name, r := range readers {
						if err := r(b); err != nil && !errors.Is(err, ErrDecode) {
							t.Fatalf("%s(% x): %v is not a decode error", name, b, err)
						}
					}
				}
			}
		}
	}
}

func avroReaders() map[string]func([]byte) error {
	return map[string]func([]byte) error{
		"long": readLong, "int": readInt32, "uint32": readUint32, "present": readPresent,
		"uint64":    func(b []byte) error { _, _, err := ReadAvroUint64(b); return err },
		"bool":      func(b []byte) error { _, _, err := ReadAvroBool(b); return err },
		"float":     func(b []byte) error { _, _, err := ReadAvroFloat32(b); return err },
		"double":    func(b []byte) error { _, _, err := ReadAvroFloat64(b); return err },
		"string":    func(b []byte) error { _, _, err := ReadAvroString(b); return err },
		"bytes":     func(b []byte) error { _, _, err := ReadAvroBytes(b); return err },
		"timestamp": func(b []byte) error { _, _, err := ReadAvroTimestamp(b); return err },
		"duration":  func(b []byte) error { _, _, err := ReadAvroDuration(b); return err },
		"index":     func(b []byte) error { _, _, err := ReadAvroIndex(b, 4, "union"); return err },
		"blocks":    func(b []byte) error { _, _, err := longItems(b); return err },
	}
}

// FuzzAvroReaders feeds arbitrary bytes to every Avro reader: none may
// panic or return anything but a decode error.
func FuzzAvroReaders(f *testing.F) {
	f.Add(AppendAvroString(nil, "héllo"))
	f.Add(append(AppendAvroLong(AppendAvroLong(nil, -2), 4), 2, 4, 0))
	readers := avroReaders()
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, r := range readers {
			if err := r(b); err != nil && !errors.Is(err, ErrDecode) {
				t.Fatalf("%s: %v is not a decode error", name, err)
			}
		}
	})
}
