package serdes

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// The ReadJSON functions decode one JSON value from the start of b (after
// any whitespace) and return it with the rest of b, as the msgpack Read
// functions do, so errors carry the offset (through Locate) and the field
// path (through WrapField, WrapIndex and WrapKey) the same way. They never
// panic, never allocate more than the result owns, and never pass an
// integer through float64: int64 and uint64 values are exact or an error.

// SkipJSONSpace returns b without its leading JSON whitespace.
func SkipJSONSpace(b []byte) []byte {
	for len(b) > 0 && b[0] <= ' ' && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// IsJSONNull reports whether the next value in b is null.
func IsJSONNull(b []byte) bool {
	b = SkipJSONSpace(b)
	return len(b) >= 4 && string(b[:4]) == "null"
}

// jsonTypeErr reports a value of the wrong JSON type at the start of b.
func jsonTypeErr(b []byte, want string) error {
	if len(b) == 0 {
		return errShort(b)
	}
	return newErr(b, "want "+want+", got "+jsonKind(b[0]))
}

// jsonKind names the JSON value starting with c, for error messages.
func jsonKind(c byte) string {
	switch {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "bool"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return "invalid character " + strconv.QuoteRune(rune(c))
}

// expectLit consumes the literal lit (true, false, null).
func expectLit(b []byte, lit string) ([]byte, error) {
	if len(b) < len(lit) || string(b[:len(lit)]) != lit {
		if len(b) < len(lit) && string(b) == lit[:len(b)] {
			return b, errShort(b)
		}
		return b, newErr(b, "invalid literal, want "+lit)
	}
	return b[len(lit):], nil
}

// ReadJSONBool decodes true or false.
func ReadJSONBool(b []byte) (bool, []byte, error) {
	b = SkipJSONSpace(b)
	if len(b) > 0 {
		switch b[0] {
		case 't':
			rest, err := expectLit(b, "true")
			return err == nil, rest, err
		case 'f':
			rest, err := expectLit(b, "false")
			return false, rest, err
		}
	}
	return false, b, jsonTypeErr(b, "bool")
}

// scanNumber returns the length of the JSON number at the start of b and
// whether it is an integer (no fraction, no exponent), or an error for
// text that is not a number by RFC 8259's grammar.
func scanNumber(b []byte) (n int, integer bool, err error) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	case i == len(b):
		return 0, false, errShort(b)
	default:
		return 0, false, jsonTypeErr(b, "number")
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		if i = digits(b, i+1); i < 0 {
			return 0, false, newErr(b, "invalid number: no digits after '.'")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(b, i); i < 0 {
			return 0, false, newErr(b, "invalid number: no digits in the exponent")
		}
	}
	return i, integer, nil
}

// digits returns the index after the decimal digits of b from i, or -1
// when there are none.
func digits(b []byte, i int) int {
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// intToken returns the digits of an integer at the start of b: a JSON
// number, or a string holding one (as protobuf's JSON mapping and
// JavaScript producers write 64-bit integers). A fraction or an exponent
// is an error: an integer field never silently drops digits.
func intToken(b []byte) (tok, rest []byte, err error) {
	b = SkipJSONSpace(b)
	quoted := len(b) > 0 && b[0] == '"'
	p := b
	if quoted {
		p = b[1:]
	}
	n, integer, err := scanNumber(p)
	if err != nil {
		if quoted {
			return nil, b, newErr(b, "want an integer, got a string that is not one")
		}
		return nil, b, err
	}
	if !integer {
		return nil, b, newErr(b, "want an integer, got "+strconv.Quote(string(p[:n])))
	}
	tok, rest = p[:n], p[n:]
	if quoted {
		if len(rest) == 0 || rest[0] != '"' {
			return nil, b, newErr(b, "want an integer, got a string that is not one")
		}
		rest = rest[1:]
	}
	return tok, rest, nil
}

// parseUint parses decimal digits exactly; ok is false on overflow.
func parseUint(digits []byte) (v uint64, ok bool) {
	for _, c := range digits {
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// ReadJSONInt64 decodes an integer that fits in an int64, exactly.
func ReadJSONInt64(b []byte) (int64, []byte, error) {
	tok, rest, err := intToken(b)
	if err != nil {
		return 0, rest, err
	}
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	u, ok := parseUint(tok)
	switch {
	case !ok || !neg && u > math.MaxInt64 || neg && u > 1<<63:
		return 0, SkipJSONSpace(b), newErr(SkipJSONSpace(b), "integer overflows int64")
	case neg:
		return -int64(u), rest, nil
	}
	return int64(u), rest, nil
}

// ReadJSONInt32 decodes an integer that fits in an int32.
func ReadJSONInt32(b []byte) (int32, []byte, error) {
	v, rest, err := ReadJSONInt64(b)
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		return 0, b, newErr(SkipJSONSpace(b), "integer overflows int32")
	}
	return int32(v), rest, err
}

// ReadJSONUint64 decodes a non-negative integer that fits in a uint64,
// exactly.
func ReadJSONUint64(b []byte) (uint64, []byte, error) {
	tok, rest, err := intToken(b)
	if err != nil {
		return 0, rest, err
	}
	if tok[0] == '-' {
		if len(tok) == 2 && tok[1] == '0' {
			return 0, rest, nil
		}
		return 0, b, newErr(SkipJSONSpace(b), "negative integer for an unsigned field")
	}
	u, ok := parseUint(tok)
	if !ok {
		return 0, b, newErr(SkipJSONSpace(b), "integer overflows uint64")
	}
	return u, rest, nil
}

// ReadJSONUint32 decodes a non-negative integer that fits in a uint32.
func ReadJSONUint32(b []byte) (uint32, []byte, error) {
	v, rest, err := ReadJSONUint64(b)
	if err == nil && v > math.MaxUint32 {
		return 0, b, newErr(SkipJSONSpace(b), "integer overflows uint32")
	}
	return uint32(v), rest, err
}

// ReadJSONFloat64 decodes a number, or one of the strings "NaN",
// "Infinity" and "-Infinity" that Jackson writes for those values.
func ReadJSONFloat64(b []byte) (float64, []byte, error) { return readFloat(b, 64) }

// ReadJSONFloat32 is ReadJSONFloat64 for a float32: a number beyond its
// range is an error, not an infinity.
func ReadJSONFloat32(b []byte) (float32, []byte, error) {
	v, rest, err := readFloat(b, 32)
	return float32(v), rest, err
}

func readFloat(b []byte, bits int) (float64, []byte, error) {
	b = SkipJSONSpace(b)
	if len(b) > 0 && b[0] == '"' {
		s, rest, err := readRawString(b, nil)
		if err != nil {
			return 0, b, err
		}
		switch string(s) {
		case "NaN":
			return math.NaN(), rest, nil
		case "Infinity", "+Infinity":
			return math.Inf(1), rest, nil
		case "-Infinity":
			return math.Inf(-1), rest, nil
		}
		return 0, b, newErr(b, "want a number, got a string")
	}
	n, _, err := scanNumber(b)
	if err != nil {
		return 0, b, err
	}
	f, err := strconv.ParseFloat(string(b[:n]), bits)
	if err != nil {
		return 0, b, newErr(b, "number "+strconv.Quote(string(b[:n]))+" overflows float"+strconv.Itoa(bits))
	}
	return f, b[n:], nil
}

// readRawString decodes the JSON string at the start of b (no leading
// space) and returns its contents: a slice of b when it has no escapes and
// is valid UTF-8, else the unescaped text appended to scratch[:0]. Invalid
// UTF-8 and unpaired surrogates become U+FFFD, as in encoding/json;
// unescaped control characters are an error, as RFC 8259 requires.
func readRawString(b []byte, scratch []byte) (s, rest []byte, err error) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, jsonTypeErr(b, "string")
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[1:i], b[i+1:], nil
		case c == '\\' || c < ' ' || c >= utf8.RuneSelf:
			return unescape(b, i, scratch[:0])
		}
	}
	return nil, b, errShort(b)
}

// unescape is the slow path of readRawString from offset i of b.
func unescape(b []byte, i int, out []byte) (s, rest []byte, err error) {
	out = append(out, b[1:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return out, b[i+1:], nil
		case c < ' ':
			return nil, b, newErr(b[i:], "control character in string, want it escaped")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
			continue
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return nil, b, errShort(b[i:])
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n, err := readUnicode(b[i:])
			if err != nil {
				return nil, b, err
			}
			out = utf8.AppendRune(out, r)
			i += n
			continue
		default:
			return nil, b, newErr(b[i:], "invalid escape "+strconv.Quote(string(b[i:i+2])))
		}
		i += 2
	}
	return nil, b, errShort(b)
}

// readUnicode decodes the \uXXXX escape at the start of b, with the low
// half of a surrogate pair when one follows, and returns the rune and the
// bytes consumed.
func readUnicode(b []byte) (rune, int, error) {
	r, ok := hex4(b)
	if !ok {
		for _, c := range b[2:min(6, len(b))] {
			if !isHex(c) {
				return 0, 0, newErr(b, "invalid \\u escape")
			}
		}
		return 0, 0, errShort(b)
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, nil
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if r2, ok := hex4(b[6:]); ok {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec, 12, nil
			}
		}
	}
	return utf8.RuneError, 6, nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// hex4 parses the four hex digits of a \u escape at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 6 {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// ReadJSONString decodes a JSON string.
func ReadJSONString(b []byte) (string, []byte, error) {
	var scratch [64]byte
	s, rest, err := readRawString(SkipJSONSpace(b), scratch[:0])
	if err != nil {
		return "", b, err
	}
	return string(s), rest, nil
}

// ReadJSONBytes decodes a base64 string: the standard or the URL alphabet,
// padded or not, so bytes from Jackson, encoding/json, protobuf's JSON
// mapping and Python's base64 module all decode.
func ReadJSONBytes(b []byte) ([]byte, []byte, error) {
	b = SkipJSONSpace(b)
	var scratch [64]byte
	s, rest, err := readRawString(b, scratch[:0])
	if err != nil {
		return nil, b, err
	}
	if len(s) == 0 {
		return nil, rest, nil // as the msgpack readers: empty is nil
	}
	enc := base64.StdEncoding
	for _, c := range s {
		if c == '-' || c == '_' {
			enc = base64.URLEncoding
			break
		}
	}
	if len(s)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	out := make([]byte, enc.DecodedLen(len(s)))
	n, err := enc.Decode(out, s)
	if err != nil {
		return nil, b, newErr(b, "invalid base64: "+err.Error())
	}
	return out[:n], rest, nil
}

// ReadJSONTimestamp decodes a timestamp: an RFC 3339 string (any offset,
// any fraction, truncated to milliseconds) or an integer of epoch
// milliseconds. The result is in UTC.
func ReadJSONTimestamp(b []byte) (time.Time, []byte, error) {
	b = SkipJSONSpace(b)
	if len(b) > 0 && b[0] == '"' {
		s, rest, err := readRawString(b, nil)
		if err != nil {
			return time.Time{}, b, err
		}
		if ms, ok := parseMillis(s); ok {
			return time.UnixMilli(ms).UTC(), rest, nil
		}
		if n, integer, err := scanNumber(s); err == nil && integer && n == len(s) {
			ms, _, err := ReadJSONInt64(s) // epoch milliseconds in a string
			if err != nil {
				return time.Time{}, b, newErr(b, "epoch milliseconds overflow int64")
			}
			return time.UnixMilli(ms).UTC(), rest, nil
		}
		t, err := time.Parse(time.RFC3339Nano, string(s))
		if err != nil {
			return time.Time{}, b, newErr(b, "want an RFC 3339 timestamp or epoch milliseconds, got "+strconv.Quote(string(s)))
		}
		return time.UnixMilli(t.UnixMilli()).UTC(), rest, nil
	}
	ms, rest, err := ReadJSONInt64(b)
	if err != nil {
		if len(b) > 0 && jsonKind(b[0]) != "number" {
			err = jsonTypeErr(b, "RFC 3339 string or epoch milliseconds")
		}
		return time.Time{}, b, err
	}
	return time.UnixMilli(ms).UTC(), rest, nil
}

// parseMillis parses the form AppendJSONTimestamp writes,
// "2006-01-02T15:04:05.000Z", without time.Parse's allocations; ok is
// false for any other form, which time.Parse then handles.
func parseMillis(s []byte) (int64, bool) {
	if len(s) != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return 0, false
	}
	num := func(p []byte) (int, bool) {
		v := 0
		for _, c := range p {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	var f [7]int
	for i, r := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 23}} {
		v, ok := num(s[r[0]:r[1]])
		if !ok {
			return 0, false
		}
		f[i] = v
	}
	if f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 59 {
		return 0, false
	}
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], f[6]*1e6, time.UTC)
	if t.Day() != f[2] {
		return 0, false // 31 February: let time.Parse report it
	}
	return t.UnixMilli(), true
}

// ReadJSONDuration decodes an integer of milliseconds.
func ReadJSONDuration(b []byte) (time.Duration, []byte, error) {
	ms, rest, err := ReadJSONInt64(b)
	if err != nil {
		return 0, rest, err
	}
	return msToDuration(ms), rest, nil
}

// ReadJSONEnumName reads the JSON string naming an enum value, or an
// integer (the number of a value the writer's schema knows and the
// reader's may not), for a generated enum reader: name is set for a
// string, with the number otherwise. The name is valid only until the next
// call on the same buffer.
func ReadJSONEnumName(b []byte, scratch []byte) (name []byte, num int32, rest []byte, err error) {
	b = SkipJSONSpace(b)
	if len(b) > 0 && b[0] == '"' {
		name, rest, err = readRawString(b, scratch)
		return name, 0, rest, err
	}
	if len(b) > 0 && jsonKind(b[0]) != "number" {
		return nil, 0, b, jsonTypeErr(b, "enum name")
	}
	num, rest, err = ReadJSONInt32(b)
	return nil, num, rest, err
}

// UnknownEnumName is the error of a generated enum reader for a name its
// enum does not declare.
func UnknownEnumName(b []byte, enum string, name []byte) error {
	return newErr(SkipJSONSpace(b), "enum "+enum+" has no value "+strconv.Quote(string(name)))
}
