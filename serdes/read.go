package serdes

import (
	"encoding/binary"
	"math"
	"time"
)

// The Read functions decode one msgpack value from the start of b and return
// it with the rest of b. They accept every msgpack encoding of a compatible
// type, because data written by other encoders (msgpack/v5, Python,
// tinylib/msgp) picks different but equally valid forms: any integer width
// and signedness whose value fits, str or bin for strings and bytes, float32
// or float64 (or an integer) for floats.
//
// They never panic and never allocate more than the input can back: a
// declared length is checked against the remaining input before anything is
// sized from it. On error, rest is b unchanged.

// IsNil reports whether the next value in b is msgpack nil. Generated
// decoders use it for optional fields and tombstones.
func IsNil(b []byte) bool { return len(b) > 0 && b[0] == 0xc0 }

// ReadNil consumes a msgpack nil.
func ReadNil(b []byte) ([]byte, error) {
	if IsNil(b) {
		return b[1:], nil
	}
	return b, typeErr(b, "nil")
}

// ReadBool decodes a msgpack bool.
func ReadBool(b []byte) (bool, []byte, error) {
	if len(b) > 0 {
		switch b[0] {
		case 0xc2:
			return false, b[1:], nil
		case 0xc3:
			return true, b[1:], nil
		}
	}
	return false, b, typeErr(b, "bool")
}

// readInt decodes any msgpack integer. Unsigned forms and positive fixints
// set u and signed=false; signed forms set i and signed=true.
func readInt(b []byte) (i int64, u uint64, signed bool, rest []byte, err error) {
	if len(b) == 0 {
		return 0, 0, false, b, errShort(b)
	}
	c := b[0]
	switch {
	case c <= 0x7f:
		return 0, uint64(c), false, b[1:], nil
	case c >= 0xe0:
		return int64(int8(c)), 0, true, b[1:], nil
	}
	var n int
	switch c {
	case 0xcc, 0xd0:
		n = 1
	case 0xcd, 0xd1:
		n = 2
	case 0xce, 0xd2:
		n = 4
	case 0xcf, 0xd3:
		n = 8
	default:
		return 0, 0, false, b, typeErr(b, "integer")
	}
	if len(b) < 1+n {
		return 0, 0, false, b, errShort(b)
	}
	p := b[1 : 1+n]
	switch c {
	case 0xcc:
		u = uint64(p[0])
	case 0xcd:
		u = uint64(binary.BigEndian.Uint16(p))
	case 0xce:
		u = uint64(binary.BigEndian.Uint32(p))
	case 0xcf:
		u = binary.BigEndian.Uint64(p)
	case 0xd0:
		return int64(int8(p[0])), 0, true, b[1+n:], nil
	case 0xd1:
		return int64(int16(binary.BigEndian.Uint16(p))), 0, true, b[1+n:], nil
	case 0xd2:
		return int64(int32(binary.BigEndian.Uint32(p))), 0, true, b[1+n:], nil
	case 0xd3:
		return int64(binary.BigEndian.Uint64(p)), 0, true, b[1+n:], nil
	}
	return 0, u, false, b[1+n:], nil
}

// ReadInt64 decodes any msgpack integer that fits in an int64.
func ReadInt64(b []byte) (int64, []byte, error) {
	if len(b) > 0 && b[0] <= 0x7f {
		return int64(b[0]), b[1:], nil
	}
	return readInt64(b)
}

func readInt64(b []byte) (int64, []byte, error) {
	i, u, signed, rest, err := readInt(b)
	if err != nil {
		return 0, b, err
	}
	if signed {
		return i, rest, nil
	}
	if u > math.MaxInt64 {
		return 0, b, newErr(b, "integer overflows int64")
	}
	return int64(u), rest, nil
}

// ReadInt32 decodes any msgpack integer that fits in an int32.
func ReadInt32(b []byte) (int32, []byte, error) {
	if len(b) > 0 && b[0] <= 0x7f {
		return int32(b[0]), b[1:], nil
	}
	v, rest, err := readInt64(b)
	if err != nil {
		return 0, b, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, b, newErr(b, "integer overflows int32")
	}
	return int32(v), rest, nil
}

// ReadUint64 decodes any non-negative msgpack integer.
func ReadUint64(b []byte) (uint64, []byte, error) {
	if len(b) > 0 && b[0] <= 0x7f {
		return uint64(b[0]), b[1:], nil
	}
	return readUint64(b)
}

func readUint64(b []byte) (uint64, []byte, error) {
	i, u, signed, rest, err := readInt(b)
	if err != nil {
		return 0, b, err
	}
	if signed {
		if i < 0 {
			return 0, b, newErr(b, "negative integer for an unsigned field")
		}
		return uint64(i), rest, nil
	}
	return u, rest, nil
}

// ReadUint32 decodes any non-negative msgpack integer that fits in a uint32.
func ReadUint32(b []byte) (uint32, []byte, error) {
	if len(b) > 0 && b[0] <= 0x7f {
		return uint32(b[0]), b[1:], nil
	}
	v, rest, err := readUint64(b)
	if err != nil {
		return 0, b, err
	}
	if v > math.MaxUint32 {
		return 0, b, newErr(b, "integer overflows uint32")
	}
	return uint32(v), rest, nil
}

// ReadFloat64 decodes a msgpack float64 or float32, or an integer (writers
// such as JSON-to-msgpack converters turn 2.0 into 2).
func ReadFloat64(b []byte) (float64, []byte, error) {
	if len(b) >= 9 && b[0] == 0xcb {
		return math.Float64frombits(binary.BigEndian.Uint64(b[1:9])), b[9:], nil
	}
	if len(b) >= 5 && b[0] == 0xca {
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b[1:5]))), b[5:], nil
	}
	i, u, signed, rest, err := readInt(b)
	if err != nil {
		if len(b) > 0 && (b[0] == 0xca || b[0] == 0xcb) {
			return 0, b, errShort(b)
		}
		return 0, b, typeErr(b, "float")
	}
	if signed {
		return float64(i), rest, nil
	}
	return float64(u), rest, nil
}

// ReadFloat32 decodes a msgpack float32, or a float64 or integer rounded to
// the nearest float32.
func ReadFloat32(b []byte) (float32, []byte, error) {
	if len(b) >= 5 && b[0] == 0xca {
		return math.Float32frombits(binary.BigEndian.Uint32(b[1:5])), b[5:], nil
	}
	v, rest, err := ReadFloat64(b)
	return float32(v), rest, err
}

// readRaw returns the payload of a str (if str) or bin (if bin) value
// without copying it.
func readRaw(b []byte, str, bin bool) (p []byte, rest []byte, ok bool, err error) {
	if len(b) == 0 {
		return nil, b, false, errShort(b)
	}
	c := b[0]
	var n uint64
	var h int
	switch {
	case str && c&0xe0 == 0xa0:
		n, h = uint64(c&0x1f), 1
	case str && c == 0xd9, bin && c == 0xc4:
		if len(b) < 2 {
			return nil, b, true, errShort(b)
		}
		n, h = uint64(b[1]), 2
	case str && c == 0xda, bin && c == 0xc5:
		if len(b) < 3 {
			return nil, b, true, errShort(b)
		}
		n, h = uint64(binary.BigEndian.Uint16(b[1:3])), 3
	case str && c == 0xdb, bin && c == 0xc6:
		if len(b) < 5 {
			return nil, b, true, errShort(b)
		}
		n, h = uint64(binary.BigEndian.Uint32(b[1:5])), 5
	default:
		return nil, b, false, nil
	}
	if n > uint64(len(b)-h) {
		return nil, b, true, errLength(b)
	}
	end := h + int(n)
	return b[h:end:end], b[end:], true, nil
}

// ReadString decodes a msgpack str (or bin) into a new string. Strings must
// be copied: the input buffer is typically reused by the Kafka client.
func ReadString(b []byte) (string, []byte, error) {
	if len(b) > 0 && b[0]&0xe0 == 0xa0 {
		n := int(b[0] & 0x1f)
		if n < len(b) {
			return string(b[1 : 1+n]), b[1+n:], nil
		}
	}
	p, rest, ok, err := readRaw(b, true, true)
	if err != nil {
		return "", b, err
	}
	if !ok {
		return "", b, typeErr(b, "string")
	}
	return string(p), rest, nil
}

// ReadStringBytes decodes a msgpack str (or bin) without copying: the result
// aliases b. Generated decoders use it for string map keys they only compare.
func ReadStringBytes(b []byte) ([]byte, []byte, error) {
	p, rest, ok, err := readRaw(b, true, true)
	if err != nil {
		return nil, b, err
	}
	if !ok {
		return nil, b, typeErr(b, "string")
	}
	return p, rest, nil
}

// ReadBytes decodes a msgpack bin (or str) into a newly allocated slice. An
// empty value decodes to nil, so a zero record survives a round trip
// unchanged.
func ReadBytes(b []byte) ([]byte, []byte, error) {
	p, rest, ok, err := readRaw(b, true, true)
	if err != nil {
		return nil, b, err
	}
	if !ok {
		return nil, b, typeErr(b, "bytes")
	}
	if len(p) == 0 {
		return nil, rest, nil
	}
	return append([]byte(nil), p...), rest, nil
}

// readHeader decodes an array (mapPairs=false) or map header.
func readHeader(b []byte, mapType bool) (int, []byte, error) {
	if len(b) == 0 {
		return 0, b, errShort(b)
	}
	c := b[0]
	var n uint64
	var h int
	fix, c16, c32, want := byte(0x90), byte(0xdc), byte(0xdd), "array"
	if mapType {
		fix, c16, c32, want = 0x80, 0xde, 0xdf, "map"
	}
	switch {
	case c&0xf0 == fix:
		n, h = uint64(c&0x0f), 1
	case c == c16:
		if len(b) < 3 {
			return 0, b, errShort(b)
		}
		n, h = uint64(binary.BigEndian.Uint16(b[1:3])), 3
	case c == c32:
		if len(b) < 5 {
			return 0, b, errShort(b)
		}
		n, h = uint64(binary.BigEndian.Uint32(b[1:5])), 5
	default:
		return 0, b, typeErr(b, want)
	}
	// Every element takes at least one byte: refuse counts the input cannot
	// back before anyone sizes a slice or map from them.
	min := n
	if mapType {
		min = 2 * n
	}
	if min > uint64(len(b)-h) {
		return 0, b, errLength(b)
	}
	return int(n), b[h:], nil
}

// ReadArrayHeader decodes an array header and returns the element count,
// which is at most the number of remaining bytes.
func ReadArrayHeader(b []byte) (int, []byte, error) {
	if len(b) > 0 && b[0]&0xf0 == 0x90 && int(b[0]&0x0f) < len(b) {
		return int(b[0] & 0x0f), b[1:], nil
	}
	return readHeader(b, false)
}

// ReadMapHeader decodes a map header and returns the number of key/value
// pairs, which is at most half the number of remaining bytes.
func ReadMapHeader(b []byte) (int, []byte, error) {
	if len(b) > 0 && b[0]&0xf0 == 0x80 && 2*int(b[0]&0x0f) < len(b) {
		return int(b[0] & 0x0f), b[1:], nil
	}
	return readHeader(b, true)
}

// ReadTimestamp decodes an integer of milliseconds since the Unix epoch into
// a UTC time.Time. It also accepts the msgpack timestamp extension (type -1)
// that msgpack/v5 and other encoders write for their native time types.
func ReadTimestamp(b []byte) (time.Time, []byte, error) {
	if len(b) > 0 && (b[0] == 0xd6 || b[0] == 0xd7 || b[0] == 0xc7) {
		return readTimestampExt(b)
	}
	ms, rest, err := ReadInt64(b)
	if err != nil {
		return time.Time{}, b, err
	}
	return time.UnixMilli(ms).UTC(), rest, nil
}

func readTimestampExt(b []byte) (time.Time, []byte, error) {
	var sec, nsec int64
	var n int
	switch {
	case b[0] == 0xd6 && len(b) >= 6 && b[1] == 0xff:
		sec, n = int64(binary.BigEndian.Uint32(b[2:6])), 6
	case b[0] == 0xd7 && len(b) >= 10 && b[1] == 0xff:
		v := binary.BigEndian.Uint64(b[2:10])
		nsec, sec, n = int64(v>>34), int64(v&(1<<34-1)), 10
	case b[0] == 0xc7 && len(b) >= 15 && b[1] == 12 && b[2] == 0xff:
		nsec = int64(binary.BigEndian.Uint32(b[3:7]))
		sec, n = int64(binary.BigEndian.Uint64(b[7:15])), 15
	default:
		return time.Time{}, b, newErr(b, "want timestamp (integer milliseconds or msgpack timestamp extension), got "+typeName(b[0]))
	}
	if nsec > 999999999 {
		return time.Time{}, b, newErr(b, "timestamp extension nanoseconds out of range")
	}
	return time.Unix(sec, nsec).UTC(), b[n:], nil
}

// ReadDuration decodes an integer of milliseconds into a time.Duration,
// saturating instead of overflowing for values beyond ±292 years.
func ReadDuration(b []byte) (time.Duration, []byte, error) {
	ms, rest, err := ReadInt64(b)
	if err != nil {
		return 0, b, err
	}
	return msToDuration(ms), rest, nil
}

func msToDuration(ms int64) time.Duration {
	const limit = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms > limit:
		return math.MaxInt64
	case ms < -limit:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// ReadKey decodes the key of a record map entry. Records are keyed by field
// ID (a positive integer), but a string key is accepted too and returned in
// name (aliasing b) for the caller to match against spec field names, so
// data written by msgpack/v5 from a struct tagged with the spec names, or by
// a Python dict, decodes. Keys of any other type, and integers outside
// 1..MaxInt32, come back as id 0 and a nil name: no field has ID 0, so the
// caller skips the value as unknown.
func ReadKey(b []byte) (id int, name []byte, rest []byte, err error) {
	if len(b) > 0 && b[0] <= 0x7f {
		return int(b[0]), nil, b[1:], nil
	}
	return readKey(b)
}

func readKey(b []byte) (int, []byte, []byte, error) {
	if len(b) == 0 {
		return 0, nil, b, errShort(b)
	}
	if p, rest, ok, err := readRaw(b, true, true); ok || err != nil {
		if err != nil {
			return 0, nil, b, err
		}
		if p == nil {
			p = b[:0]
		}
		return 0, p, rest, nil
	}
	if i, u, signed, rest, err := readInt(b); err == nil {
		switch {
		case signed && i >= 1 && i <= math.MaxInt32:
			return int(i), nil, rest, nil
		case !signed && u >= 1 && u <= math.MaxInt32:
			return int(u), nil, rest, nil
		}
		return 0, nil, rest, nil
	}
	rest, err := Skip(b)
	if err != nil {
		return 0, nil, b, err
	}
	return 0, nil, rest, nil
}

// Skip consumes one msgpack value of any type, including nested arrays and
// maps, so decoders can ignore fields they do not know (an older reader on
// newer data). It is iterative, keeping only a count of values still to
// skip, so hostile nesting cannot overflow the stack.
func Skip(b []byte) ([]byte, error) {
	orig := b
	pending := uint64(1)
	for pending > 0 {
		if len(b) == 0 {
			return orig, errShort(b)
		}
		c := b[0]
		var size, children uint64
		switch {
		case c <= 0x7f || c >= 0xe0:
			size = 1
		case c <= 0x8f:
			size, children = 1, 2*uint64(c&0x0f)
		case c <= 0x9f:
			size, children = 1, uint64(c&0x0f)
		case c <= 0xbf:
			size = 1 + uint64(c&0x1f)
		default:
			var ok bool
			size, children, ok = skipSize(b)
			if !ok {
				if c == 0xc1 {
					return orig, newErr(b, "invalid byte 0xc1")
				}
				return orig, errShort(b)
			}
		}
		if size > uint64(len(b)) {
			return orig, errLength(b)
		}
		b = b[size:]
		pending += children - 1
		if pending > uint64(len(b)) {
			return orig, errLength(b)
		}
	}
	return b, nil
}

// skipSize returns the encoded size (header plus payload) and the number of
// child values of the value starting with b[0] in 0xc0..0xdf. ok is false if
// the header itself is truncated or the byte is invalid.
func skipSize(b []byte) (size, children uint64, ok bool) {
	c := b[0]
	u8 := func(i int) (uint64, bool) {
		if len(b) <= i {
			return 0, false
		}
		return uint64(b[i]), true
	}
	u16 := func() (uint64, bool) {
		if len(b) < 3 {
			return 0, false
		}
		return uint64(binary.BigEndian.Uint16(b[1:3])), true
	}
	u32 := func() (uint64, bool) {
		if len(b) < 5 {
			return 0, false
		}
		return uint64(binary.BigEndian.Uint32(b[1:5])), true
	}
	var n uint64
	switch c {
	case 0xc0, 0xc2, 0xc3:
		return 1, 0, true
	case 0xcc, 0xd0:
		return 2, 0, true
	case 0xcd, 0xd1:
		return 3, 0, true
	case 0xce, 0xd2, 0xca:
		return 5, 0, true
	case 0xcf, 0xd3, 0xcb:
		return 9, 0, true
	case 0xd4:
		return 3, 0, true
	case 0xd5:
		return 4, 0, true
	case 0xd6:
		return 6, 0, true
	case 0xd7:
		return 10, 0, true
	case 0xd8:
		return 18, 0, true
	case 0xc4, 0xd9:
		n, ok = u8(1)
		return 2 + n, 0, ok
	case 0xc5, 0xda:
		n, ok = u16()
		return 3 + n, 0, ok
	case 0xc6, 0xdb:
		n, ok = u32()
		return 5 + n, 0, ok
	case 0xc7:
		n, ok = u8(1)
		return 3 + n, 0, ok
	case 0xc8:
		n, ok = u16()
		return 4 + n, 0, ok
	case 0xc9:
		n, ok = u32()
		return 6 + n, 0, ok
	case 0xdc:
		n, ok = u16()
		return 3, n, ok
	case 0xdd:
		n, ok = u32()
		return 5, n, ok
	case 0xde:
		n, ok = u16()
		return 3, 2 * n, ok
	case 0xdf:
		n, ok = u32()
		return 5, 2 * n, ok
	}
	return 0, 0, false
}

// ReadEnum decodes a generated enum: its int32 number, kept as it is when the
// schema does not declare it.
func ReadEnum[E ~int32](b []byte) (E, []byte, error) {
	v, rest, err := ReadInt32(b)
	return E(v), rest, err
}
