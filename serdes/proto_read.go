package serdes

import (
	"encoding/binary"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Readers of the proto3 wire format for generated protobuf decoders. Each
// reads one value from the start of b and returns the bytes after it; a
// length-delimited value's declared length is checked against what is
// left before anything is allocated, so hostile input cannot ask for more
// memory than it brings. Errors are *DecodeError; the generated decoder
// adds the field path.

// ReadProtoVarint reads a base-128 varint of at most ten bytes.
func ReadProtoVarint(b []byte) (uint64, []byte, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), b[1:], nil
	}
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, b, newErr(b, "varint overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, b[i+1:], nil
		}
	}
	if len(b) >= 10 {
		return 0, b, newErr(b, "varint longer than 10 bytes")
	}
	return 0, b, errShort(b)
}

// ReadProtoTag reads a field's tag (field number << 3 | wire type),
// refusing field number 0, numbers beyond 2^29-1 and the wire types 6 and
// 7, which no encoder writes.
func ReadProtoTag(b []byte) (uint64, []byte, error) {
	tag, rest, err := ReadProtoVarint(b)
	switch {
	case err != nil:
		return 0, b, err
	case tag>>3 == 0:
		return 0, b, newErr(b, "field number 0")
	case tag > math.MaxUint32:
		return 0, b, newErr(b, "field number beyond 2^29-1")
	case tag&7 > ProtoFixed32:
		return 0, b, newErr(b, "invalid wire type "+strconv.Itoa(int(tag&7)))
	}
	return tag, rest, nil
}

// ReadProtoLen reads a length-delimited value: its content and the bytes
// after it.
func ReadProtoLen(b []byte) (content, rest []byte, err error) {
	n, rest, err := ReadProtoVarint(b)
	if err != nil {
		return nil, b, err
	}
	if n > uint64(len(rest)) {
		return nil, b, errLength(b)
	}
	return rest[:n:n], rest[n:], nil
}

// ReadProtoMsg reads a length-delimited nested message at b with merge,
// a generated decoder merging the message's fields into its record at
// depth+1. Offsets of errors inside the message count from the outer
// input's start, as everywhere else.
func ReadProtoMsg(b []byte, depth int, merge func(b []byte, depth int) error) ([]byte, error) {
	m, rest, err := ReadProtoLen(b)
	if err != nil {
		return b, err
	}
	return rest, ProtoInner(merge(m, depth+1), rest)
}

// ProtoInner moves the position of an error inside a length-delimited
// value to the outer input: rest is what follows the value. Readers
// compute offsets from the bytes left after the failing value, and a
// value's content is followed by rest.
func ProtoInner(err error, rest []byte) error {
	if de, ok := err.(*DecodeError); ok {
		de.remaining += len(rest)
	}
	return err
}

// SkipProtoField skips the value of a field the decoder does not know
// (written by a newer schema, or with a wire type its field does not
// have), whatever its wire type: groups are skipped to their end, nested
// at most MaxDepth deep.
func SkipProtoField(b []byte, tag uint64, depth int) ([]byte, error) {
	switch tag & 7 {
	case ProtoVarint:
		_, rest, err := ReadProtoVarint(b)
		return rest, err
	case ProtoFixed64:
		if len(b) < 8 {
			return b, errShort(b)
		}
		return b[8:], nil
	case ProtoFixed32:
		if len(b) < 4 {
			return b, errShort(b)
		}
		return b[4:], nil
	case ProtoLen:
		_, rest, err := ReadProtoLen(b)
		return rest, err
	case protoGroup:
		return skipProtoGroup(b, tag>>3, depth+1)
	}
	return b, newErr(b, "end of group without its start")
}

// skipProtoGroup skips a group's fields up to its end tag.
func skipProtoGroup(b []byte, num uint64, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return b, TooDeep(b)
	}
	for {
		tag, rest, err := ReadProtoTag(b)
		if err != nil {
			return b, err
		}
		if tag&7 == protoEnd {
			if tag>>3 != num {
				return b, newErr(b, "end of group "+strconv.FormatUint(tag>>3, 10)+" inside group "+strconv.FormatUint(num, 10))
			}
			return rest, nil
		}
		if b, err = SkipProtoField(rest, tag, depth); err != nil {
			return b, err
		}
	}
}

// ReadProtoBool reads a bool varint: any non-zero value is true.
func ReadProtoBool(b []byte) (bool, []byte, error) {
	v, rest, err := ReadProtoVarint(b)
	return v != 0, rest, err
}

// ReadProtoInt32 reads an int32 varint: the low 32 bits, as proto3 reads
// an int64 value into an int32 field.
func ReadProtoInt32(b []byte) (int32, []byte, error) {
	v, rest, err := ReadProtoVarint(b)
	return int32(v), rest, err
}

// ReadProtoInt64 reads an int64 varint.
func ReadProtoInt64(b []byte) (int64, []byte, error) {
	v, rest, err := ReadProtoVarint(b)
	return int64(v), rest, err
}

// ReadProtoUint32 reads a uint32 varint (the low 32 bits).
func ReadProtoUint32(b []byte) (uint32, []byte, error) {
	v, rest, err := ReadProtoVarint(b)
	return uint32(v), rest, err
}

// ReadProtoUint64 reads a uint64 varint.
func ReadProtoUint64(b []byte) (uint64, []byte, error) { return ReadProtoVarint(b) }

// ReadProtoEnum reads an enum's number. Numbers the schema does not
// declare are kept, as proto3 enums are open.
func ReadProtoEnum[E ~int32](b []byte) (E, []byte, error) {
	v, rest, err := ReadProtoVarint(b)
	return E(int32(v)), rest, err
}

// ReadProtoFloat32 reads a fixed32 float.
func ReadProtoFloat32(b []byte) (float32, []byte, error) {
	if len(b) < 4 {
		return 0, b, errShort(b)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:], nil
}

// ReadProtoFloat64 reads a fixed64 double.
func ReadProtoFloat64(b []byte) (float64, []byte, error) {
	if len(b) < 8 {
		return 0, b, errShort(b)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
}

// ReadProtoString reads a length-delimited string, which proto3 requires
// to be UTF-8.
func ReadProtoString(b []byte) (string, []byte, error) {
	s, rest, err := ReadProtoLen(b)
	if err != nil {
		return "", b, err
	}
	if !utf8.Valid(s) {
		return "", b, newErr(b, "string is not valid UTF-8")
	}
	return string(s), rest, nil
}

// ReadProtoBytes reads length-delimited bytes into a new slice, never nil
// (an optional bytes field that is present is not nil, even when empty).
func ReadProtoBytes(b []byte) ([]byte, []byte, error) {
	v, rest, err := ReadProtoLen(b)
	if err != nil {
		return nil, b, err
	}
	return append(make([]byte, 0, len(v)), v...), rest, nil
}

// ReadProtoTimestamp reads a length-delimited google.protobuf.Timestamp
// into a UTC time.Time; the Unix epoch counts from its fields, and the
// instant of Go's zero time.Time decodes as that zero value, so it
// survives a round trip.
func ReadProtoTimestamp(b []byte) (time.Time, []byte, error) {
	sec, nanos, rest, err := readProtoSecNanos(b)
	if err != nil {
		return time.Time{}, b, err
	}
	t := time.Unix(sec, int64(nanos)).UTC()
	if t.IsZero() {
		return time.Time{}, rest, nil
	}
	return t, rest, nil
}

// ReadProtoDuration reads a length-delimited google.protobuf.Duration,
// saturating beyond time.Duration's ±292 years instead of overflowing.
func ReadProtoDuration(b []byte) (time.Duration, []byte, error) {
	sec, nanos, rest, err := readProtoSecNanos(b)
	if err != nil {
		return 0, b, err
	}
	const limit = math.MaxInt64 / int64(time.Second)
	switch {
	case sec > limit:
		return math.MaxInt64, rest, nil
	case sec < -limit:
		return math.MinInt64, rest, nil
	}
	return time.Duration(sec)*time.Second + time.Duration(nanos), rest, nil
}

// readProtoSecNanos reads the {int64 seconds = 1; int32 nanos = 2}
// message of Timestamp and Duration, skipping other fields.
func readProtoSecNanos(b []byte) (sec int64, nanos int32, rest []byte, err error) {
	m, rest, err := ReadProtoLen(b)
	if err != nil {
		return 0, 0, b, err
	}
	for len(m) > 0 {
		var tag uint64
		var v []byte
		if tag, v, err = ReadProtoTag(m); err != nil {
			return 0, 0, b, ProtoInner(err, rest)
		}
		switch tag {
		case 0x08:
			sec, m, err = ReadProtoInt64(v)
		case 0x10:
			nanos, m, err = ReadProtoInt32(v)
		default:
			m, err = SkipProtoField(v, tag, 0)
		}
		if err != nil {
			return 0, 0, b, ProtoInner(err, rest)
		}
	}
	return sec, nanos, rest, nil
}
