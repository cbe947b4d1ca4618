package serdes

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// stdJSON encodes v as encoding/json does without HTML escaping: the
// reference our appenders must equal byte for byte.
func stdJSON(t testing.TB, v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

var jsonStrings = []string{
	"", "plain", `quote " backslash \ slash /`, "\n\r\t\b\f\x00\x01\x1f\x7f", "héllo wörld 日本 🎉",
	"line\u2028sep\u2029", "bad \xff utf8 \xc3", "<html>&amp;", "\xed\xa0\x80 lone surrogate bytes",
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonStrings {
		got := string(AppendJSONString(nil, s))
		if want := stdJSON(t, s); got != want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
		back, rest, err := ReadJSONString([]byte(got))
		if err != nil || len(rest) != 0 {
			t.Fatalf("ReadJSONString(%s): %v, rest %q", got, err, rest)
		}
		var std string
		if err := json.Unmarshal([]byte(got), &std); err != nil || back != std {
			t.Errorf("ReadJSONString(%s) = %q, encoding/json reads %q", got, back, std)
		}
	}
}

func TestReadJSONStringEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`"\u00e9\u4e2d\ud83c\udf89"`: "é中🎉",
		`"\ud800"`:                   "\ufffd", // lone high surrogate
		`"\udc00x"`:                  "\ufffdx",
		`"\ud800\u0041"`:             "\ufffdA",
		`"a\/b\"c\\d"`:               `a/b"c\d`,
		"\"raw \xff\"":               "raw \ufffd",
		`"\u2028"`:                   "\u2028",
	} {
		got, _, err := ReadJSONString([]byte(in))
		if err != nil || got != want {
			t.Errorf("ReadJSONString(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		`"abc`:         "unexpected end of input",
		"\"a\nb\"":     "control character in string",
		`"\x"`:         `invalid escape "\\x"`,
		`"\u12"`:       `invalid \u escape`,
		`"\u12`:        "unexpected end of input",
		`123`:          "want string, got number",
		``:             "unexpected end of input",
		`{"a":1}`:      "want string, got object",
		"\"a\\u00zz\"": `invalid \u escape`,
	} {
		_, _, err := ReadJSONString([]byte(in))
		if err == nil || !strings.Contains(err.Error(), msg) || !errors.Is(err, ErrDecode) {
			t.Errorf("ReadJSONString(%s): %v, want a decode error containing %q", in, err, msg)
		}
	}
}

func TestJSONIntegersExact(t *testing.T) {
	for _, v := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 9007199254740993, -9007199254740993} {
		b := AppendJSONInt64(nil, v)
		got, _, err := ReadJSONInt64(b)
		if err != nil || got != v {
			t.Errorf("int64 %d: %s read back as %d, %v", v, b, got, err)
		}
		q := `"` + string(b) + `"`
		if got, _, err := ReadJSONInt64([]byte(q)); err != nil || got != v {
			t.Errorf("quoted int64 %s read as %d, %v", q, got, err)
		}
	}
	for _, v := range []uint64{0, math.MaxUint64, 1 << 63, 18446744073709551557} {
		b := AppendJSONUint64(nil, v)
		if got, _, err := ReadJSONUint64(b); err != nil || got != v {
			t.Errorf("uint64 %d: %s read back as %d, %v", v, b, got, err)
		}
	}
	if v, _, err := ReadJSONUint64([]byte("-0")); err != nil || v != 0 {
		t.Errorf("uint64 -0 = %d, %v", v, err)
	}
	bad := map[string]struct {
		read func([]byte) error
		msg  string
	}{
		"9223372036854775808":  {i64, "overflows int64"},
		"-9223372036854775809": {i64, "overflows int64"},
		"18446744073709551616": {u64, "overflows uint64"},
		"99999999999999999999": {u64, "overflows uint64"},
		"-1":                   {u64, "negative integer"},
		"1.5":                  {i64, `want an integer, got "1.5"`},
		"1e3":                  {i64, `want an integer, got "1e3"`},
		"1.0":                  {i64, `want an integer, got "1.0"`},
		"2147483648":           {i32, "overflows int32"},
		"4294967296":           {u32, "overflows uint32"},
		`"12a"`:                {i64, "a string that is not one"},
		`"1.5"`:                {i64, "want an integer"},
		"true":                 {i64, "want number, got bool"},
		"-":                    {i64, "unexpected end of input"},
		"-x":                   {i64, "want number"},
		"1.":                   {i64, "no digits after '.'"},
		"1e":                   {i64, "no digits in the exponent"},
	}
	for in, c := range bad {
		if err := c.read([]byte(in)); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want an error containing %q", in, err, c.msg)
		}
	}
}

func i64(b []byte) error { _, _, err := ReadJSONInt64(b); return err }
func u64(b []byte) error { _, _, err := ReadJSONUint64(b); return err }
func i32(b []byte) error { _, _, err := ReadJSONInt32(b); return err }
func u32(b []byte) error { _, _, err := ReadJSONUint32(b); return err }

func TestJSONFloatsMatchEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, 1, -1.5, 0.1, 1e-7, 1e21, 1e20, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, -0.000001} {
		got := string(AppendJSONFloat64(nil, f))
		if want := stdJSON(t, f); got != want {
			t.Errorf("AppendJSONFloat64(%v) = %s, want %s", f, got, want)
		}
		if back, _, err := ReadJSONFloat64([]byte(got)); err != nil || back != f {
			t.Errorf("ReadJSONFloat64(%s) = %v, %v", got, back, err)
		}
	}
	for _, f := range []float32{0, 1.5, 0.1, 1e-7, 3.4028235e38, 1e21} {
		got := string(AppendJSONFloat32(nil, f))
		if want := stdJSON(t, f); got != want {
			t.Errorf("AppendJSONFloat32(%v) = %s, want %s", f, got, want)
		}
		if back, _, err := ReadJSONFloat32([]byte(got)); err != nil || back != f {
			t.Errorf("ReadJSONFloat32(%s) = %v, %v", got, back, err)
		}
	}
	for f, want := range map[float64]string{math.Inf(1): `"Infinity"`, math.Inf(-1): `"-Infinity"`} {
		if got := string(AppendJSONFloat64(nil, f)); got != want {
			t.Errorf("AppendJSONFloat64(%v) = %s, want %s", f, got, want)
		}
		if back, _, err := ReadJSONFloat64([]byte(want)); err != nil || back != f {
			t.Errorf("ReadJSONFloat64(%s) = %v, %v", want, back, err)
		}
	}
	if nan, _, err := ReadJSONFloat64(AppendJSONFloat64(nil, math.NaN())); err != nil || !math.IsNaN(nan) {
		t.Errorf("NaN read back as %v, %v", nan, err)
	}
	if _, _, err := ReadJSONFloat32([]byte("1e39")); err == nil {
		t.Error("1e39 read into a float32")
	}
	if _, _, err := ReadJSONFloat64([]byte(`"fast"`)); err == nil {
		t.Error(`"fast" read as a float`)
	}
}

func TestJSONTimestamps(t *testing.T) {
	ts := time.UnixMilli(1700000000123).UTC()
	if got := string(AppendJSONTimestamp(nil, ts)); got != `"2023-11-14T22:13:20.123Z"` {
		t.Errorf("RFC 3339: %s", got)
	}
	if got := string(AppendJSONTimestampMillis(nil, ts)); got != "1700000000123" {
		t.Errorf("millis: %s", got)
	}
	for _, in := range []string{`"2023-11-14T22:13:20.123Z"`, `"2023-11-14T23:13:20.123456+01:00"`, "1700000000123", `"1700000000123"`} {
		got, _, err := ReadJSONTimestamp([]byte(in))
		if err != nil || !got.Equal(ts) || got.Location() != time.UTC {
			t.Errorf("ReadJSONTimestamp(%s) = %v, %v", in, got, err)
		}
	}
	far := time.UnixMilli(-70000000000000).UTC() // year -249
	if got, _, err := ReadJSONTimestamp(AppendJSONTimestamp(nil, far)); err != nil || !got.Equal(far) {
		t.Errorf("year %d: %v, %v", far.Year(), got, err)
	}
	for _, in := range []string{`"2023-02-31T00:00:00.000Z"`, `"yesterday"`, "true", "1.5"} {
		if _, _, err := ReadJSONTimestamp([]byte(in)); err == nil {
			t.Errorf("ReadJSONTimestamp(%s) accepted", in)
		}
	}
}

func TestJSONBytes(t *testing.T) {
	v := []byte{0, 1, 0xfb, 0xff, 0xfe}
	b := AppendJSONBytes(nil, v)
	if want := stdJSON(t, v); string(b) != want {
		t.Errorf("AppendJSONBytes = %s, want %s", b, want)
	}
	for _, in := range []string{string(b), `"AAH7__4"`, `"AAH7//4"`, `"AAH7__4="`} {
		got, _, err := ReadJSONBytes([]byte(in))
		if err != nil || !bytes.Equal(got, v) {
			t.Errorf("ReadJSONBytes(%s) = %x, %v", in, got, err)
		}
	}
	if got, _, err := ReadJSONBytes([]byte(`""`)); err != nil || got != nil {
		t.Errorf(`ReadJSONBytes("") = %#v, %v; want nil`, got, err)
	}
	if _, _, err := ReadJSONBytes([]byte(`"!!!"`)); err == nil {
		t.Error("invalid base64 accepted")
	}
}

func TestSkipJSON(t *testing.T) {
	for _, in := range []string{`1`, `-0.5e+3`, `"s"`, `true`, `false`, `null`, `[]`, `{}`, ` [1, [2, {"a": [null]}], "x"] `,
		`{"a":{"b":{"c":[{}]}}}`} {
		if err := DecodeJSONTop([]byte(in), SkipJSON); err != nil {
			t.Errorf("SkipJSON(%s): %v", in, err)
		}
	}
	for _, in := range []string{``, `[`, `[1,]`, `{"a"}`, `{"a":}`, `{1:2}`, `nul`, `tru`, `[1 2]`, `{"a":1,}`, `01`, `+1`, `"`, `]`} {
		if err := DecodeJSONTop([]byte(in), SkipJSON); !errors.Is(err, ErrDecode) {
			t.Errorf("SkipJSON(%s): %v, want a decode error", in, err)
		}
	}
	deep := strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	if err := DecodeJSONTop([]byte(deep), SkipJSON); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep nesting: %v", err)
	}
}

// FuzzSkipJSON checks the tokenizer against encoding/json: SkipJSON
// accepts exactly the valid JSON texts (within the nesting limit) and
// never panics.
func FuzzSkipJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9",true,null]}`, `"\ud83c\udf89"`, `-0`, `[{}]`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := DecodeJSONTop(b, SkipJSON)
		if err != nil && !errors.Is(err, ErrDecode) {
			t.Fatalf("error %v is not a decode error", err)
		}
		if bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > MaxDepth {
			return
		}
		if valid := json.Valid(b); valid != (err == nil) {
			t.Fatalf("SkipJSON(%q): %v, but json.Valid says %v", b, err, valid)
		}
	})
}

func TestJSONCollectionsAndObjects(t *testing.T) {
	b := []byte(`{"a":1,"b":2,"\u00e9\n":3}`)
	got, _, err := ReadJSONMap(b, ReadJSONInt64)
	if err != nil || len(got) != 3 || got["é\n"] != 3 {
		t.Errorf("ReadJSONMap(%s) = %v, %v", b, got, err)
	}
	_, _, err = ReadJSONList([]byte(`["a", 2]`), ReadJSONString)
	if err == nil || err.(*DecodeError).Path != "[1]" {
		t.Errorf("list error %v, want path [1]", err)
	}
	_, _, err = ReadJSONMap([]byte(`{"k": "v"}`), ReadJSONInt64)
	if err == nil || err.(*DecodeError).Path != `["k"]` {
		t.Errorf("map error %v, want path [\"k\"]", err)
	}
	if AppendJSONKey([]byte("{"), `"a":`)[1] != '"' || string(AppendJSONKey([]byte(`{"x":1`), `"a":`)) != `{"x":1,"a":` {
		t.Error("AppendJSONKey comma placement")
	}
	var seen []string
	rest, err := ReadJSONObject([]byte(` { "a\u0062" : 1 , "n": null, "z": [ ] } tail`), 0, func(key, b []byte) ([]byte, error) {
		seen = append(seen, string(key))
		return SkipJSON(b)
	})
	if err != nil || string(rest) != " tail" || strings.Join(seen, ",") != "ab,z" {
		t.Errorf("ReadJSONObject: seen %v, rest %q, %v", seen, rest, err)
	}
	_, err = ReadJSONObject([]byte(`{"a":1`), MaxDepth+1, nil)
	if err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("depth: %v", err)
	}
}

// TestJSONAppendAllocs checks that the appenders allocate nothing beyond
// the buffer's growth.
func TestJSONAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 1024)
	ts := time.UnixMilli(1700000000123)
	n := testing.AllocsPerRun(100, func() {
		b := AppendJSONString(buf[:0], "héllo \"x\"\u2028")
		b = AppendJSONFloat64(b, 0.1)
		b = AppendJSONTimestamp(b, ts)
		b = AppendJSONBytes(b, []byte("abc"))
		_ = b
	})
	if n != 0 {
		t.Errorf("%v allocs per run, want 0", n)
	}
}

func TestJSONValueSerde(t *testing.T) {
	s := JSONValue(AppendJSONString, ReadJSONString)
	b, _ := s.Append(nil, "a\"b")
	if v, err := s.Decode(b); err != nil || v != "a\"b" {
		t.Errorf("round trip %s: %q, %v", b, v, err)
	}
	if _, err := s.Decode([]byte(`"a" "b"`)); err == nil || !strings.Contains(err.Error(), "at offset 4: unexpected data after the value") {
		t.Errorf("trailing data: %v", err)
	}
}
