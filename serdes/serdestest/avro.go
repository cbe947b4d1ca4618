package serdestest

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// AvroRoundTrip checks, in a subtest named after T, the Avro codec of a
// record: every case encodes, decodes to what was encoded and re-encodes
// to the same bytes, and every truncation of the encoding fails with a
// decode error instead of a panic.
func AvroRoundTrip[T any, PT serdes.AvroRecordPtr[T]](t *testing.T, cases ...T) {
	t.Helper()
	t.Run(name[T](), func(t *testing.T) {
		for i := range cases {
			want := &cases[i]
			b, err := PT(want).AppendAvro(nil)
			if err != nil {
				t.Fatalf("case %d: AppendAvro: %v", i, err)
			}
			var got T
			if err := PT(&got).DecodeAvro(b); err != nil {
				t.Fatalf("case %d: DecodeAvro(% x): %v", i, b, err)
			}
			if !reflect.DeepEqual(&got, want) {
				t.Fatalf("case %d: round trip changed the record:\n got %+v\nwant %+v", i, got, *want)
			}
			if b2, _ := PT(&got).AppendAvro(nil); !bytes.Equal(b, b2) {
				t.Fatalf("case %d: re-encoding differs:\n% x\n% x", i, b, b2)
			}
			for n := 0; n < len(b); n++ {
				var x T
				if err := PT(&x).DecodeAvro(b[:n]); !errors.Is(err, serdes.ErrDecode) {
					t.Fatalf("truncated to %d of %d bytes: got %v, want a decode error", n, len(b), err)
				}
			}
		}
	})
}

// FuzzAvroDecode is the body of a generated Fuzz<Record>AvroDecode target,
// seeded with the encodings of seeds: no input may make the decoder panic
// or hang, every failure must be a serdes decode error, and whatever it
// accepts must re-encode to bytes that decode to the same encoding.
func FuzzAvroDecode[T any, PT serdes.AvroRecordPtr[T]](f *testing.F, seeds ...T) {
	for i := range seeds {
		b, err := PT(&seeds[i]).AppendAvro(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v T
		if err := PT(&v).DecodeAvro(b); err != nil {
			if !errors.Is(err, serdes.ErrDecode) {
				t.Fatalf("error %v is not a serdes decode error", err)
			}
			return
		}
		b2, err := PT(&v).AppendAvro(nil)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", b, err)
		}
		var v2 T
		if err := PT(&v2).DecodeAvro(b2); err != nil {
			t.Fatalf("re-decoding % x (from % x): %v", b2, b, err)
		}
		if b3, _ := PT(&v2).AppendAvro(nil); !bytes.Equal(b2, b3) {
			t.Fatalf("encoding is not stable:\n% x\n% x", b2, b3)
		}
	})
}
