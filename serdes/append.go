package serdes

import (
	"encoding/binary"
	"math"
	"time"
)

// The Append functions add one msgpack value to b and return the extended
// slice, like strconv.AppendInt. They never allocate beyond growing b, so a
// caller that reuses its buffer encodes with zero allocations.

// AppendNil appends msgpack nil.
func AppendNil(b []byte) []byte { return append(b, 0xc0) }

// AppendBool appends msgpack true or false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

// AppendInt64 appends v in the smallest msgpack integer form that holds it:
// non-negative values use the unsigned forms (as msgpack/v5 with compact
// integers and most other encoders do), so small values take one byte.
func AppendInt64(b []byte, v int64) []byte {
	if v >= 0 {
		return AppendUint64(b, uint64(v))
	}
	switch {
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
}

// AppendInt32 appends v like AppendInt64.
func AppendInt32(b []byte, v int32) []byte { return AppendInt64(b, int64(v)) }

// AppendUint64 appends v in the smallest msgpack integer form that holds it.
func AppendUint64(b []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), v)
}

// AppendUint32 appends v like AppendUint64.
func AppendUint32(b []byte, v uint32) []byte { return AppendUint64(b, uint64(v)) }

// AppendFloat32 appends msgpack float32 (readers accept it for float64
// fields too).
func AppendFloat32(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(v))
}

// AppendFloat64 appends msgpack float64.
func AppendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(v))
}

// AppendString appends a msgpack str. The bytes are written as they are:
// Go strings are not checked for valid UTF-8, matching Kafka's and
// msgpack/v5's behaviour.
func AppendString(b []byte, s string) []byte {
	b = appendStrHeader(b, len(s))
	return append(b, s...)
}

func appendStrHeader(b []byte, n int) []byte {
	switch {
	case n <= 31:
		return append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
}

// AppendBytes appends a msgpack bin. A nil slice is written as an empty bin;
// optional bytes fields are omitted by generated code instead.
func AppendBytes(b []byte, v []byte) []byte {
	n := len(v)
	switch {
	case n <= math.MaxUint8:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
	return append(b, v...)
}

// AppendArrayHeader appends the header of an array of n elements; the
// caller appends the elements.
func AppendArrayHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

// AppendMapHeader appends the header of a map of n key/value pairs; the
// caller appends 2n values.
func AppendMapHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}

// AppendTimestamp appends t as an integer of milliseconds since the Unix
// epoch, the Kafka convention: any msgpack reader (and Kafka tooling) sees a
// plain number rather than an extension type. Sub-millisecond precision is
// dropped. The zero time.Time is written as its own (large negative) value
// so that it decodes back to the zero time.Time.
func AppendTimestamp(b []byte, t time.Time) []byte { return AppendInt64(b, t.UnixMilli()) }

// AppendDuration appends d as an integer of milliseconds, truncated toward
// zero.
func AppendDuration(b []byte, d time.Duration) []byte { return AppendInt64(b, d.Milliseconds()) }

// AppendEnum appends a generated enum: its int32 number.
func AppendEnum[E ~int32](b []byte, v E) []byte { return AppendInt64(b, int64(v)) }
