package serdes

import (
	"encoding/binary"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Serde converts values of one Go type to and from the bytes of a Kafka
// record key or value. The runtime holds one per topic side and store.
//
// Append appends the encoding of v to dst, so the runtime reuses one buffer
// per task. Decode must not retain b: the runtime's buffer is reused.
type Serde[T any] interface {
	Append(dst []byte, v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// The primitive serdes below write the same bytes as Kafka's Java
// serializers for the corresponding types, so keys written by Java clients
// partition and compare identically. Fixed-width types are big-endian.
var (
	// String is UTF-8, like StringSerializer.
	String StringSerde
	// Bytes is the bytes as they are, like ByteArraySerializer.
	Bytes BytesSerde
	// Bool is one byte, 1 or 0, like BooleanSerializer.
	Bool BoolSerde
	// Int32 is 4 bytes big-endian, like IntegerSerializer.
	Int32 Int32Serde
	// Int64 is 8 bytes big-endian, like LongSerializer.
	Int64 Int64Serde
	// Uint32 is 4 bytes big-endian (Java has no unsigned serializer).
	Uint32 Uint32Serde
	// Uint64 is 8 bytes big-endian (Java has no unsigned serializer).
	Uint64 Uint64Serde
	// Float32 is the IEEE 754 bits, 4 bytes big-endian, like FloatSerializer.
	Float32 Float32Serde
	// Float64 is the IEEE 754 bits, 8 bytes big-endian, like DoubleSerializer.
	Float64 Float64Serde
	// Timestamp is milliseconds since the Unix epoch as Int64; decoded
	// times are in UTC.
	Timestamp TimestampSerde
	// Duration is milliseconds as Int64.
	Duration DurationSerde
)

// Compile-time checks that every serde implements Serde.
var (
	_ Serde[string]        = String
	_ Serde[[]byte]        = Bytes
	_ Serde[bool]          = Bool
	_ Serde[int32]         = Int32
	_ Serde[int64]         = Int64
	_ Serde[uint32]        = Uint32
	_ Serde[uint64]        = Uint64
	_ Serde[float32]       = Float32
	_ Serde[float64]       = Float64
	_ Serde[time.Time]     = Timestamp
	_ Serde[time.Duration] = Duration
	_ Serde[int32]         = EnumSerde[int32]{}
)

// fixedErr reports a fixed-width value of the wrong length.
func fixedErr(b []byte, what string, n int) error {
	return &DecodeError{Msg: what + ": want " + strconv.Itoa(n) + " bytes, got " + strconv.Itoa(len(b))}
}

// StringSerde is the type of String.
type StringSerde struct{}

// Append appends s.
func (StringSerde) Append(dst []byte, s string) ([]byte, error) { return append(dst, s...), nil }

// Decode copies b into a string. Invalid UTF-8 is an error, as Kafka
// tooling (and JSON replay) would otherwise mangle it.
func (StringSerde) Decode(b []byte) (string, error) {
	if !utf8.Valid(b) {
		return "", Locate(newErr(b, "string: invalid UTF-8"), b)
	}
	return string(b), nil
}

// BytesSerde is the type of Bytes.
type BytesSerde struct{}

// Append appends v.
func (BytesSerde) Append(dst []byte, v []byte) ([]byte, error) { return append(dst, v...), nil }

// Decode returns a copy of b, since the caller's buffer is reused.
func (BytesSerde) Decode(b []byte) ([]byte, error) { return append([]byte(nil), b...), nil }

// BoolSerde is the type of Bool.
type BoolSerde struct{}

// Append appends 1 for true and 0 for false.
func (BoolSerde) Append(dst []byte, v bool) ([]byte, error) {
	if v {
		return append(dst, 1), nil
	}
	return append(dst, 0), nil
}

// Decode accepts exactly one byte, 0 or 1, as Kafka's BooleanDeserializer.
func (BoolSerde) Decode(b []byte) (bool, error) {
	if len(b) != 1 {
		return false, fixedErr(b, "bool", 1)
	}
	switch b[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, Locate(newErr(b, "bool: want byte 0 or 1"), b)
}

// Int32Serde is the type of Int32.
type Int32Serde struct{}

// Append appends v as 4 bytes big-endian.
func (Int32Serde) Append(dst []byte, v int32) ([]byte, error) {
	return binary.BigEndian.AppendUint32(dst, uint32(v)), nil
}

// Decode reads exactly 4 bytes big-endian.
func (Int32Serde) Decode(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fixedErr(b, "int32", 4)
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// Int64Serde is the type of Int64.
type Int64Serde struct{}

// Append appends v as 8 bytes big-endian.
func (Int64Serde) Append(dst []byte, v int64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, uint64(v)), nil
}

// Decode reads exactly 8 bytes big-endian.
func (Int64Serde) Decode(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fixedErr(b, "int64", 8)
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// Uint32Serde is the type of Uint32.
type Uint32Serde struct{}

// Append appends v as 4 bytes big-endian.
func (Uint32Serde) Append(dst []byte, v uint32) ([]byte, error) {
	return binary.BigEndian.AppendUint32(dst, v), nil
}

// Decode reads exactly 4 bytes big-endian.
func (Uint32Serde) Decode(b []byte) (uint32, error) {
	if len(b) != 4 {
		return 0, fixedErr(b, "uint32", 4)
	}
	return binary.BigEndian.Uint32(b), nil
}

// Uint64Serde is the type of Uint64.
type Uint64Serde struct{}

// Append appends v as 8 bytes big-endian.
func (Uint64Serde) Append(dst []byte, v uint64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, v), nil
}

// Decode reads exactly 8 bytes big-endian.
func (Uint64Serde) Decode(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fixedErr(b, "uint64", 8)
	}
	return binary.BigEndian.Uint64(b), nil
}

// Float32Serde is the type of Float32.
type Float32Serde struct{}

// Append appends the IEEE 754 bits of v, 4 bytes big-endian. NaN payloads
// are kept (Java's FloatSerializer canonicalizes them).
func (Float32Serde) Append(dst []byte, v float32) ([]byte, error) {
	return binary.BigEndian.AppendUint32(dst, math.Float32bits(v)), nil
}

// Decode reads exactly 4 bytes big-endian.
func (Float32Serde) Decode(b []byte) (float32, error) {
	if len(b) != 4 {
		return 0, fixedErr(b, "float32", 4)
	}
	return math.Float32frombits(binary.BigEndian.Uint32(b)), nil
}

// Float64Serde is the type of Float64.
type Float64Serde struct{}

// Append appends the IEEE 754 bits of v, 8 bytes big-endian. NaN payloads
// are kept (Java's DoubleSerializer canonicalizes them).
func (Float64Serde) Append(dst []byte, v float64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v)), nil
}

// Decode reads exactly 8 bytes big-endian.
func (Float64Serde) Decode(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, fixedErr(b, "float64", 8)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// TimestampSerde is the type of Timestamp.
type TimestampSerde struct{}

// Append appends t.UnixMilli() as 8 bytes big-endian.
func (TimestampSerde) Append(dst []byte, t time.Time) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, uint64(t.UnixMilli())), nil
}

// Decode reads 8 bytes big-endian of milliseconds into a UTC time.
func (TimestampSerde) Decode(b []byte) (time.Time, error) {
	if len(b) != 8 {
		return time.Time{}, fixedErr(b, "timestamp", 8)
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b))).UTC(), nil
}

// DurationSerde is the type of Duration.
type DurationSerde struct{}

// Append appends d.Milliseconds() as 8 bytes big-endian.
func (DurationSerde) Append(dst []byte, d time.Duration) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, uint64(d.Milliseconds())), nil
}

// Decode reads 8 bytes big-endian of milliseconds.
func (DurationSerde) Decode(b []byte) (time.Duration, error) {
	if len(b) != 8 {
		return 0, fixedErr(b, "duration", 8)
	}
	return msToDuration(int64(binary.BigEndian.Uint64(b))), nil
}

// EnumSerde is the serde of a generated enum type: its int32 number, 4
// bytes big-endian like Int32. Numbers the enum does not declare decode
// as they are, so a reader older than the writer keeps them.
type EnumSerde[E ~int32] struct{}

// Enum returns the serde of the enum type E.
func Enum[E ~int32]() EnumSerde[E] { return EnumSerde[E]{} }

// Append appends the number of v as 4 bytes big-endian.
func (EnumSerde[E]) Append(dst []byte, v E) ([]byte, error) {
	return binary.BigEndian.AppendUint32(dst, uint32(v)), nil
}

// Decode reads exactly 4 bytes big-endian.
func (EnumSerde[E]) Decode(b []byte) (E, error) {
	if len(b) != 4 {
		return 0, fixedErr(b, "enum", 4)
	}
	return E(int32(binary.BigEndian.Uint32(b))), nil
}
