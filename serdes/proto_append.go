package serdes

import (
	"encoding/binary"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// The proto3 wire format (docs/formats.md "Protobuf"), as the generated
// protobuf codecs write it. Generated encoders append a field's tag as
// constant bytes and call these for its value; a nested message is
// written after a one-byte length placeholder that ProtoEndLen fixes once
// the message's size is known, so nothing is sized twice and nothing is
// allocated beyond growing the buffer.

// Wire types of the proto3 encoding.
const (
	ProtoVarint  = 0
	ProtoFixed64 = 1
	ProtoLen     = 2
	protoGroup   = 3
	protoEnd     = 4
	ProtoFixed32 = 5
)

// AppendProtoVarint appends v as a base-128 varint.
func AppendProtoVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// protoVarintLen is the length of v as a varint.
func protoVarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// AppendProtoBool appends a bool varint.
func AppendProtoBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendProtoInt32 appends an int32 varint: negative values sign-extended
// to ten bytes, as proto3 requires so int32 and int64 fields read each
// other's values.
func AppendProtoInt32(b []byte, v int32) []byte { return AppendProtoVarint(b, uint64(int64(v))) }

// AppendProtoInt64 appends an int64 varint.
func AppendProtoInt64(b []byte, v int64) []byte { return AppendProtoVarint(b, uint64(v)) }

// AppendProtoUint32 appends a uint32 varint.
func AppendProtoUint32(b []byte, v uint32) []byte { return AppendProtoVarint(b, uint64(v)) }

// AppendProtoUint64 appends a uint64 varint.
func AppendProtoUint64(b []byte, v uint64) []byte { return AppendProtoVarint(b, v) }

// AppendProtoFloat32 appends a float as fixed32, little-endian.
func AppendProtoFloat32(b []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}

// AppendProtoFloat64 appends a double as fixed64, little-endian.
func AppendProtoFloat64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// AppendProtoEnum appends an enum's number as an int32 varint.
func AppendProtoEnum[E ~int32](b []byte, v E) []byte { return AppendProtoInt32(b, int32(v)) }

// AppendProtoString appends a length-delimited string. A proto3 string
// must be UTF-8 (Java's and Go's parsers reject others), so invalid bytes
// are written as U+FFFD, as the json format writes them.
func AppendProtoString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = AppendProtoVarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendProtoBytes appends length-delimited bytes.
func AppendProtoBytes(b []byte, v []byte) []byte {
	b = AppendProtoVarint(b, uint64(len(v)))
	return append(b, v...)
}

// AppendProtoTimestamp appends t as a length-delimited
// google.protobuf.Timestamp: seconds since the Unix epoch and nanoseconds
// (0..999,999,999), each left out when zero.
func AppendProtoTimestamp(b []byte, t time.Time) []byte {
	return appendProtoSecNanos(b, t.Unix(), int32(t.Nanosecond()))
}

// AppendProtoDuration appends d as a length-delimited
// google.protobuf.Duration: seconds and nanoseconds of the same sign.
func AppendProtoDuration(b []byte, d time.Duration) []byte {
	return appendProtoSecNanos(b, int64(d/time.Second), int32(d%time.Second))
}

// appendProtoSecNanos appends the message {int64 seconds = 1; int32 nanos
// = 2} that Timestamp and Duration share, with its length (at most 17
// bytes, so one length byte).
func appendProtoSecNanos(b []byte, sec int64, nanos int32) []byte {
	n := 0
	if sec != 0 {
		n += 1 + protoVarintLen(uint64(sec))
	}
	if nanos != 0 {
		n += 1 + protoVarintLen(uint64(int64(nanos)))
	}
	b = append(b, byte(n))
	if sec != 0 {
		b = AppendProtoVarint(append(b, 0x08), uint64(sec))
	}
	if nanos != 0 {
		b = AppendProtoVarint(append(b, 0x10), uint64(int64(nanos)))
	}
	return b
}

// protoZeros are the bytes ProtoEndLen grows a buffer by.
var protoZeros [9]byte

// ProtoEndLen completes a length-delimited value whose content starts at
// b[at:], after a one-byte length placeholder at b[at-1]: it writes the
// content's length there, moving the content along when the length needs
// more than one byte (content of 128 bytes or more). Generated encoders
// append a nested message this way, so its size is never computed in a
// separate pass.
func ProtoEndLen(b []byte, at int) []byte {
	n := len(b) - at
	if n < 0x80 {
		b[at-1] = byte(n)
		return b
	}
	extra := protoVarintLen(uint64(n)) - 1
	b = append(b, protoZeros[:extra]...)
	copy(b[at+extra:], b[at:len(b)-extra])
	AppendProtoVarint(b[at-1:at-1], uint64(n)) // in place: the capacity is there
	return b
}

// AppendProtoPacked appends list as a packed repeated field's value (its
// length, then each element with elem), after the tag the caller wrote.
func AppendProtoPacked[T any](b []byte, list []T, elem func([]byte, T) []byte) []byte {
	b = append(b, 0)
	at := len(b)
	for _, v := range list {
		b = elem(b, v)
	}
	return ProtoEndLen(b, at)
}
