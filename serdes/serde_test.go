package serdes

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"
)

// The expected bytes are what Kafka's Java serializers produce: big-endian
// fixed widths (IntegerSerializer, LongSerializer, DoubleSerializer), one
// byte 0/1 for BooleanSerializer, raw UTF-8 for StringSerializer.
func TestKafkaPrimitiveBytes(t *testing.T) {
	check := func(name string, got []byte, err error, want []byte) {
		t.Helper()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s = % x, %v; want % x", name, got, err, want)
		}
	}
	b, err := String.Append(nil, "héllo")
	check("string", b, err, []byte("héllo"))
	b, err = Int32.Append(nil, -2)
	check("int32", b, err, []byte{0xff, 0xff, 0xff, 0xfe})
	b, err = Int64.Append(nil, 258)
	check("int64", b, err, []byte{0, 0, 0, 0, 0, 0, 1, 2})
	b, err = Float64.Append(nil, 1.0)
	check("float64", b, err, []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0})
	b, err = Float32.Append(nil, 1.0)
	check("float32", b, err, []byte{0x3f, 0x80, 0, 0})
	b, err = Bool.Append(nil, true)
	check("bool", b, err, []byte{1})
	b, err = Uint32.Append(nil, 0xdeadbeef)
	check("uint32", b, err, []byte{0xde, 0xad, 0xbe, 0xef})
	b, err = Uint64.Append(nil, 1)
	check("uint64", b, err, []byte{0, 0, 0, 0, 0, 0, 0, 1})
	b, err = Timestamp.Append(nil, time.UnixMilli(1000))
	check("timestamp", b, err, []byte{0, 0, 0, 0, 0, 0, 0x03, 0xe8})
	b, err = Duration.Append(nil, time.Second)
	check("duration", b, err, []byte{0, 0, 0, 0, 0, 0, 0x03, 0xe8})
	type Status int32
	b, err = Enum[Status]().Append(nil, 3)
	check("enum", b, err, []byte{0, 0, 0, 3})
	b, err = Bytes.Append([]byte{9}, []byte{1, 2})
	check("bytes appends", b, err, []byte{9, 1, 2})
}

func roundTrip[T comparable](t *testing.T, name string, s Serde[T], v T) {
	t.Helper()
	b, err := s.Append(nil, v)
	if err != nil {
		t.Fatalf("%s append: %v", name, err)
	}
	got, err := s.Decode(b)
	if err != nil || got != v {
		t.Errorf("%s: got %v, %v; want %v", name, got, err, v)
	}
	if _, err := s.Decode(append(b, 0)); !errors.Is(err, ErrDecode) && name != "string" {
		t.Errorf("%s with an extra byte: err = %v", name, err)
	}
}

func TestKafkaPrimitiveRoundTrip(t *testing.T) {
	roundTrip(t, "string", Serde[string](String), "héllo")
	roundTrip(t, "bool", Serde[bool](Bool), true)
	roundTrip(t, "int32", Serde[int32](Int32), math.MinInt32)
	roundTrip(t, "int64", Serde[int64](Int64), math.MinInt64)
	roundTrip(t, "uint32", Serde[uint32](Uint32), math.MaxUint32)
	roundTrip(t, "uint64", Serde[uint64](Uint64), math.MaxUint64)
	roundTrip(t, "float32", Serde[float32](Float32), -1.5)
	roundTrip(t, "float64", Serde[float64](Float64), math.Pi)
	roundTrip(t, "timestamp", Serde[time.Time](Timestamp), time.UnixMilli(1700000000123).UTC())
	roundTrip(t, "duration", Serde[time.Duration](Duration), -90*time.Minute)
	type Status int32
	roundTrip(t, "enum", Serde[Status](Enum[Status]()), 42)
}

func TestKafkaDecodeErrors(t *testing.T) {
	if _, err := Bool.Decode([]byte{2}); !errors.Is(err, ErrDecode) {
		t.Errorf("bool 2: %v", err)
	}
	if _, err := Int64.Decode([]byte{1, 2, 3}); err == nil || err.Error() != "streamgen: decode at offset 0: int64: want 8 bytes, got 3" {
		t.Errorf("short int64: %v", err)
	}
	if _, err := String.Decode([]byte{0xff}); !errors.Is(err, ErrDecode) {
		t.Errorf("invalid utf-8: %v", err)
	}
	in := []byte{1, 2}
	out, _ := Bytes.Decode(in)
	in[0] = 9
	if out[0] != 1 {
		t.Errorf("Bytes.Decode aliases its input")
	}
}
