package serdes

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// The AppendJSON functions write one JSON value (RFC 8259) to the end of b
// and return the extended buffer, allocating nothing but b's growth. They
// are what generated AppendJSON methods call, so a record's JSON encoder
// states only its own fields. See docs/formats.md for the mapping.

// JSONTimestamps is how a JSON encoder writes timestamps. Decoders accept
// both forms whatever the setting.
type JSONTimestamps uint8

const (
	// JSONRFC3339 writes a timestamp as an RFC 3339 string in UTC with
	// millisecond precision, "2024-01-02T03:04:05.678Z" (the default).
	JSONRFC3339 JSONTimestamps = iota
	// JSONEpochMillis writes a timestamp as an integer of milliseconds
	// since the Unix epoch, Kafka's own convention.
	JSONEpochMillis
)

// JSONOptions are the per-topic choices of a JSON encoder. The zero value
// is the default of the spec.
type JSONOptions struct {
	Timestamps JSONTimestamps
}

// hex digits for \u escapes.
const hexDigits = "0123456789abcdef"

// jsonSafe[c] is true for the ASCII bytes a JSON string holds as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendJSONString appends s as a JSON string. Quotes, backslashes and
// control characters are escaped (\n, \r, \t, \b, \f, else \u00XX), and so
// are U+2028 and U+2029, which JavaScript parsers before ES2019 reject
// inside strings. Invalid UTF-8 is written as U+FFFD, as encoding/json
// does: JSON text must be UTF-8, and a consumer in another language would
// refuse the whole record otherwise. HTML characters are not escaped.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape appends the escape of an ASCII byte that needs one.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// AppendJSONKey appends a field's key, given as its JSON string with the
// colon (`"id":`), preceded by a comma unless it is the first entry of the
// object being written: generated encoders call it for the fields before
// the first required one, whose position in the object is not known until
// run time. No JSON value ends in '{', so the last byte tells.
func AppendJSONKey(b []byte, key string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	return append(b, key...)
}

// AppendJSONBytes appends v as a base64 string (standard alphabet, padded,
// as Jackson and encoding/json write byte arrays).
func AppendJSONBytes(b []byte, v []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// AppendJSONBool appends true or false.
func AppendJSONBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// AppendJSONInt32 appends v as a JSON integer.
func AppendJSONInt32(b []byte, v int32) []byte { return strconv.AppendInt(b, int64(v), 10) }

// AppendJSONInt64 appends v as a JSON integer, every digit exact. Readers
// that parse numbers as float64 (JavaScript) lose precision beyond 2^53;
// the decoders here accept the number as a string too, for the producers
// that write it so.
func AppendJSONInt64(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// AppendJSONUint32 appends v as a JSON integer.
func AppendJSONUint32(b []byte, v uint32) []byte { return strconv.AppendUint(b, uint64(v), 10) }

// AppendJSONUint64 appends v as a JSON integer, every digit exact.
func AppendJSONUint64(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

// AppendJSONFloat64 appends v as encoding/json formats a float64: the
// shortest representation that reads back exactly, in exponent form only
// below 1e-6 or from 1e21. NaN and infinities, which JSON cannot express as
// numbers, are written as the strings "NaN", "Infinity" and "-Infinity",
// as Jackson writes them by default (and reads them back).
func AppendJSONFloat64(b []byte, v float64) []byte { return appendFloat(b, v, 64) }

// AppendJSONFloat32 appends v like AppendJSONFloat64, with the shortest
// digits that read back as the same float32.
func AppendJSONFloat32(b []byte, v float32) []byte { return appendFloat(b, float64(v), 32) }

func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// AppendJSONTimestamp appends t as an RFC 3339 string in UTC with
// millisecond precision, the precision of every other encoding of a
// timestamp here. Years outside 0000..9999 have no RFC 3339 form and are
// written as epoch milliseconds instead, which the decoders also accept.
func AppendJSONTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return AppendJSONTimestampMillis(b, t)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	b = append(b, '"')
	b = append4(b, year)
	b = append(b, '-')
	b = append2(b, int(month))
	b = append(b, '-')
	b = append2(b, day)
	b = append(b, 'T')
	b = append2(b, hour)
	b = append(b, ':')
	b = append2(b, minute)
	b = append(b, ':')
	b = append2(b, sec)
	b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
	return b
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func append4(b []byte, v int) []byte {
	return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// AppendJSONTimestampMillis appends t as an integer of milliseconds since
// the Unix epoch.
func AppendJSONTimestampMillis(b []byte, t time.Time) []byte {
	return strconv.AppendInt(b, t.UnixMilli(), 10)
}

// AppendJSONTime appends t in the form o chooses.
func AppendJSONTime(b []byte, t time.Time, o JSONOptions) []byte {
	if o.Timestamps == JSONEpochMillis {
		return AppendJSONTimestampMillis(b, t)
	}
	return AppendJSONTimestamp(b, t)
}

// AppendJSONDuration appends d as an integer of milliseconds, its unit on
// every other wire of streamgen and Kafka's.
func AppendJSONDuration(b []byte, d time.Duration) []byte {
	return strconv.AppendInt(b, d.Milliseconds(), 10)
}

// AppendJSONNull appends null.
func AppendJSONNull(b []byte) []byte { return append(b, "null"...) }
