package serdes

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"time"
)

// The Avro binary encoding (docs/formats.md "Avro"), as the generated
// codecs of the avro format call it: int and long are zig-zag varints,
// float and double little-endian IEEE 754, strings and bytes a long length
// and the bytes, a union the long index of its branch then the value, an
// enum the int index of its symbol. Arrays and maps are blocks: a long
// count (negative: its absolute value, then the block's size in bytes) and
// that many items, ended by a count of 0.
//
// The Read functions decode one value from the start of b and return it
// with the rest of b. They never panic, and never size anything from a
// length prefix the remaining input cannot back.

// AppendAvroLong appends v as an Avro long (a zig-zag varint).
func AppendAvroLong(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// AppendAvroInt32 appends v as an Avro int.
func AppendAvroInt32(b []byte, v int32) []byte { return AppendAvroLong(b, int64(v)) }

// AppendAvroInt64 appends v as an Avro long.
func AppendAvroInt64(b []byte, v int64) []byte { return AppendAvroLong(b, v) }

// AppendAvroUint32 appends v as an Avro long: every uint32 fits.
func AppendAvroUint32(b []byte, v uint32) []byte { return AppendAvroLong(b, int64(v)) }

// AppendAvroUint64 appends v as an Avro long holding its bits: values
// above 2^63-1 are negative longs to a reader in another language, as
// Java represents unsigned 64-bit integers; streamgen reads them back
// exactly.
func AppendAvroUint64(b []byte, v uint64) []byte { return AppendAvroLong(b, int64(v)) }

// AppendAvroBool appends v as an Avro boolean.
func AppendAvroBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendAvroFloat32 appends v as an Avro float.
func AppendAvroFloat32(b []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}

// AppendAvroFloat64 appends v as an Avro double.
func AppendAvroFloat64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// AppendAvroString appends s as an Avro string.
func AppendAvroString(b []byte, s string) []byte {
	return append(AppendAvroLong(b, int64(len(s))), s...)
}

// AppendAvroBytes appends p as Avro bytes.
func AppendAvroBytes(b []byte, p []byte) []byte {
	return append(AppendAvroLong(b, int64(len(p))), p...)
}

// AppendAvroTimestamp appends t as an Avro long of milliseconds since the
// Unix epoch (logical type timestamp-millis).
func AppendAvroTimestamp(b []byte, t time.Time) []byte { return AppendAvroLong(b, t.UnixMilli()) }

// AppendAvroDuration appends d as an Avro long of milliseconds, truncated
// toward zero.
func AppendAvroDuration(b []byte, d time.Duration) []byte {
	return AppendAvroLong(b, d.Milliseconds())
}

// ReadAvroLong decodes an Avro long: at most 10 varint bytes.
func ReadAvroLong(b []byte) (int64, []byte, error) {
	var u uint64
	for i := 0; i < len(b); i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, b, newErr(b, "long varint overflows 64 bits")
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), b[i+1:], nil
		}
	}
	return 0, b, errShort(b)
}

// ReadAvroInt32 decodes an Avro int (a long that fits 32 bits).
func ReadAvroInt32(b []byte) (int32, []byte, error) {
	v, rest, err := ReadAvroLong(b)
	if err != nil {
		return 0, b, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, b, newErr(b, "int "+strconv.FormatInt(v, 10)+" overflows 32 bits")
	}
	return int32(v), rest, nil
}

// ReadAvroInt64 decodes an Avro long.
func ReadAvroInt64(b []byte) (int64, []byte, error) { return ReadAvroLong(b) }

// ReadAvroUint32 decodes an Avro long into a uint32, refusing one out of
// its range.
func ReadAvroUint32(b []byte) (uint32, []byte, error) {
	v, rest, err := ReadAvroLong(b)
	if err != nil {
		return 0, b, err
	}
	if v < 0 || v > math.MaxUint32 {
		return 0, b, newErr(b, "long "+strconv.FormatInt(v, 10)+" is out of the range of uint32")
	}
	return uint32(v), rest, nil
}

// ReadAvroUint64 decodes an Avro long into a uint64, its bits as they are
// (AppendAvroUint64).
func ReadAvroUint64(b []byte) (uint64, []byte, error) {
	v, rest, err := ReadAvroLong(b)
	return uint64(v), rest, err
}

// ReadAvroBool decodes an Avro boolean: the byte 0 or 1.
func ReadAvroBool(b []byte) (bool, []byte, error) {
	if len(b) == 0 {
		return false, b, errShort(b)
	}
	if b[0] > 1 {
		return false, b, newErr(b, "boolean byte 0x"+strconv.FormatUint(uint64(b[0]), 16)+", want 0 or 1")
	}
	return b[0] == 1, b[1:], nil
}

// ReadAvroFloat32 decodes an Avro float.
func ReadAvroFloat32(b []byte) (float32, []byte, error) {
	if len(b) < 4 {
		return 0, b, errShort(b)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:], nil
}

// ReadAvroFloat64 decodes an Avro double.
func ReadAvroFloat64(b []byte) (float64, []byte, error) {
	if len(b) < 8 {
		return 0, b, errShort(b)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
}

// readAvroRaw decodes the length prefix of a string or bytes and returns
// the content, a sub-slice of b.
func readAvroRaw(b []byte) ([]byte, []byte, error) {
	n, rest, err := ReadAvroLong(b)
	switch {
	case err != nil:
		return nil, b, err
	case n < 0:
		return nil, b, newErr(b, "negative length "+strconv.FormatInt(n, 10))
	case n > int64(len(rest)):
		return nil, b, errLength(b)
	}
	return rest[:n], rest[n:], nil
}

// ReadAvroString decodes an Avro string (copied: the input belongs to the
// Kafka client).
func ReadAvroString(b []byte) (string, []byte, error) {
	p, rest, err := readAvroRaw(b)
	return string(p), rest, err
}

// ReadAvroBytes decodes Avro bytes into a copy. Empty bytes decode as nil,
// the zero value, except where an optional field needs them present (the
// generated code sets those).
func ReadAvroBytes(b []byte) ([]byte, []byte, error) {
	p, rest, err := readAvroRaw(b)
	if err != nil || len(p) == 0 {
		return nil, rest, err
	}
	return append([]byte(nil), p...), rest, nil
}

// ReadAvroTimestamp decodes an Avro long of milliseconds since the epoch,
// in UTC.
func ReadAvroTimestamp(b []byte) (time.Time, []byte, error) {
	ms, rest, err := ReadAvroLong(b)
	if err != nil {
		return time.Time{}, b, err
	}
	return time.UnixMilli(ms).UTC(), rest, nil
}

// ReadAvroDuration decodes an Avro long of milliseconds; values beyond
// time.Duration's range saturate.
func ReadAvroDuration(b []byte) (time.Duration, []byte, error) {
	ms, rest, err := ReadAvroLong(b)
	if err != nil {
		return 0, b, err
	}
	return msToDuration(ms), rest, nil
}

// ReadAvroIndex decodes the int index of an enum symbol or a union branch
// and checks it is below n.
func ReadAvroIndex(b []byte, n int, what string) (int, []byte, error) {
	v, rest, err := ReadAvroLong(b)
	if err != nil {
		return 0, b, err
	}
	if v < 0 || v >= int64(n) {
		return 0, b, newErr(b, what+" index "+strconv.FormatInt(v, 10)+" is out of range, want 0 to "+strconv.Itoa(n-1))
	}
	return int(v), rest, nil
}

// IsAvroNull reports whether the next value is the null branch (index 0)
// of an optional field's union ["null", T].
func IsAvroNull(b []byte) bool { return len(b) > 0 && b[0] == 0 }

// ReadAvroPresent consumes the index of the value branch (1) of an
// optional field's union, refusing any other.
func ReadAvroPresent(b []byte) ([]byte, error) {
	if len(b) > 0 && b[0] == 2 {
		return b[1:], nil
	}
	if _, _, err := ReadAvroIndex(b, 2, "union"); err != nil {
		return b, err
	}
	return b, newErr(b, "want the union's value branch, index 1")
}

// MaxAvroEmptyItems bounds how many items of an array or map may take no
// input bytes (an array of empty records): their count is not limited by
// the input's size, so a hostile count would otherwise loop for ever.
const MaxAvroEmptyItems = 1 << 16

// AvroBlocks reads the items of an Avro array or map: item decodes one
// item (for a map, its key and value) from the start of b and returns the
// rest. Counts are checked as items decode, never used to size memory:
// each item takes at least one byte of input, or counts against
// MaxAvroEmptyItems. i is the item's index, for error paths.
func AvroBlocks(b []byte, item func(b []byte, i int) ([]byte, error)) ([]byte, error) {
	return avroBlocks(b, nil, item)
}

// avroBlocks is AvroBlocks, calling header (unless nil) with each block's
// item count before its items.
func avroBlocks(b []byte, header func(n int64), item func(b []byte, i int) ([]byte, error)) ([]byte, error) {
	i, empty := 0, 0
	for {
		n, rest, err := ReadAvroLong(b)
		if err != nil {
			return b, err
		}
		if n == 0 {
			return rest, nil
		}
		if n < 0 {
			if n == math.MinInt64 {
				return b, newErr(b, "block count out of range")
			}
			n = -n
			if _, rest, err = ReadAvroLong(rest); err != nil { // the block's size in bytes
				return b, err
			}
		}
		b = rest
		if header != nil {
			header(n)
		}
		for ; n > 0; n-- {
			before := len(b)
			if b, err = item(b, i); err != nil {
				return b, err
			}
			if len(b) == before {
				if empty++; empty > MaxAvroEmptyItems {
					return b, newErr(b, "more than "+strconv.Itoa(MaxAvroEmptyItems)+" items of no bytes")
				}
			}
			i++
		}
	}
}

// AvroTrailing is the error of bytes left after a value that should end
// its input.
func AvroTrailing(rest []byte) error {
	return newErr(rest, strconv.Itoa(len(rest))+" bytes after the value")
}

// DecodeAvroTop decodes exactly one value from b with read and locates any
// error in b.
func DecodeAvroTop(b []byte, read func([]byte) ([]byte, error)) error {
	rest, err := read(b)
	if err == nil && len(rest) > 0 {
		err = AvroTrailing(rest)
	}
	return Locate(err, b)
}

// UnknownAvroEnum is the error of appending an enum number its schema does
// not declare (kept from a newer msgpack writer): Avro writes an enum as
// the index of a symbol, and there is none for it.
func UnknownAvroEnum(enum string, n int32) error {
	return errors.New("streamgen: avro: enum " + enum + ": number " + strconv.Itoa(int(n)) + " has no Avro symbol")
}
