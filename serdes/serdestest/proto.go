package serdestest

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// ProtoRoundTrip checks, in a subtest named after T, the protobuf codec of
// a record: every case decodes to what was encoded and re-encodes to the
// same bytes, and no truncation of its encoding makes the decoder panic or
// fail with anything but a decode error. (A truncation at a field boundary
// is a valid, shorter message in proto3, so truncations may decode.)
func ProtoRoundTrip[T any, PT serdes.ProtoRecordPtr[T]](t *testing.T, cases ...T) {
	t.Helper()
	t.Run(name[T](), func(t *testing.T) {
		for i := range cases {
			want := &cases[i]
			b := PT(want).AppendProto(nil)
			var got T
			if err := PT(&got).DecodeProto(b); err != nil {
				t.Fatalf("case %d: DecodeProto(% x): %v", i, b, err)
			}
			if !reflect.DeepEqual(&got, want) {
				t.Fatalf("case %d: round trip changed the record:\n got %+v\nwant %+v\nbytes % x", i, got, *want, b)
			}
			if b2 := PT(&got).AppendProto(nil); !bytes.Equal(b, b2) {
				t.Fatalf("case %d: re-encoding differs:\n% x\n% x", i, b, b2)
			}
			for n := 0; n < len(b); n++ {
				var x T
				if err := PT(&x).DecodeProto(b[:n]); err != nil && !errors.Is(err, serdes.ErrDecode) {
					t.Fatalf("truncated to %d of %d bytes: %v is not a decode error", n, len(b), err)
				}
			}
		}
	})
}

// FuzzProtoDecode is the body of a generated Fuzz<Record>ProtoDecode
// target, seeded with the encodings of seeds and a message of unknown
// fields of every wire type: no input may make the decoder panic or hang,
// every failure must be a serdes decode error, and whatever it accepts
// must re-encode to bytes that decode to the same encoding again.
func FuzzProtoDecode[T any, PT serdes.ProtoRecordPtr[T]](f *testing.F, seeds ...T) {
	for i := range seeds {
		f.Add(PT(&seeds[i]).AppendProto(nil))
	}
	// Unknown fields 1000..1004: varint, fixed64, bytes, a group holding a
	// varint, fixed32.
	f.Add([]byte{0xc0, 0x3e, 0x96, 0x01, 0xc1, 0x3e, 1, 2, 3, 4, 5, 6, 7, 8, 0xd2, 0x3e, 2, 'h', 'i',
		0xdb, 0x3e, 0x08, 0x01, 0xdc, 0x3e, 0xe5, 0x3e, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		var v T
		if err := PT(&v).DecodeProto(b); err != nil {
			if !errors.Is(err, serdes.ErrDecode) {
				t.Fatalf("error %v is not a serdes decode error", err)
			}
			return
		}
		b2 := PT(&v).AppendProto(nil)
		var v2 T
		if err := PT(&v2).DecodeProto(b2); err != nil {
			t.Fatalf("re-decoding % x (from % x): %v", b2, b, err)
		}
		if b3 := PT(&v2).AppendProto(nil); !bytes.Equal(b2, b3) {
			t.Fatalf("encoding is not stable:\n% x\n% x", b2, b3)
		}
	})
}
