package serdes

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every reader and to Skip. None may
// panic; each error must be a *DecodeError; and whenever a reader accepts a
// value, Skip must agree on where that value ends.
func FuzzDecode(f *testing.F) {
	seeds := [][]byte{
		{}, {0xc0}, {0x91, 0x01}, {0xdd, 0xff, 0xff, 0xff, 0xff},
		AppendString(nil, "hello"), AppendInt64(nil, -1<<40), AppendFloat64(nil, 1.5),
		AppendMapHeader(AppendBytes(nil, []byte{1}), 1),
		{0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 1}, {0xc7, 12, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		skipRest, skipErr := Skip(b)
		check := func(name string, rest []byte, err error) {
			t.Helper()
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) || !errors.Is(err, ErrDecode) {
					t.Fatalf("%s: error %T %v is not a *DecodeError", name, err, err)
				}
				_ = de.Error()
				if Locate(err, b); de.Offset < 0 || de.Offset > len(b) {
					t.Fatalf("%s: offset %d outside input of %d bytes", name, de.Offset, len(b))
				}
				if len(rest) != len(b) {
					t.Fatalf("%s: error but rest was advanced", name)
				}
				return
			}
			if len(rest) > len(b) || !bytes.Equal(rest, b[len(b)-len(rest):]) {
				t.Fatalf("%s: rest is not a suffix of the input", name)
			}
			if skipErr != nil || len(skipRest) != len(rest) {
				t.Fatalf("%s accepted %d bytes, Skip: %d rest, %v", name, len(b)-len(rest), len(skipRest), skipErr)
			}
		}
		var rest []byte
		var err error
		_, rest, err = ReadBool(b)
		check("ReadBool", rest, err)
		_, rest, err = ReadInt32(b)
		check("ReadInt32", rest, err)
		_, rest, err = ReadInt64(b)
		check("ReadInt64", rest, err)
		_, rest, err = ReadUint32(b)
		check("ReadUint32", rest, err)
		_, rest, err = ReadUint64(b)
		check("ReadUint64", rest, err)
		_, rest, err = ReadFloat32(b)
		check("ReadFloat32", rest, err)
		_, rest, err = ReadFloat64(b)
		check("ReadFloat64", rest, err)
		_, rest, err = ReadString(b)
		check("ReadString", rest, err)
		_, rest, err = ReadBytes(b)
		check("ReadBytes", rest, err)
		_, rest, err = ReadTimestamp(b)
		check("ReadTimestamp", rest, err)
		_, rest, err = ReadDuration(b)
		check("ReadDuration", rest, err)
		_, _, rest, err = ReadKey(b)
		check("ReadKey", rest, err)
		rest, err = ReadNil(b)
		check("ReadNil", rest, err)
		if n, rest, err := ReadArrayHeader(b); err == nil && n > len(rest) {
			t.Fatalf("array of %d elements in %d bytes", n, len(rest))
		}
		if n, rest, err := ReadMapHeader(b); err == nil && 2*n > len(rest) {
			t.Fatalf("map of %d pairs in %d bytes", n, len(rest))
		}
		if skipErr == nil {
			check("Skip", skipRest, nil)
		}
		if !bytes.Equal(b, orig) {
			t.Fatalf("input modified")
		}
	})
}
