// Package serdestest holds the bodies of the tests, fuzz targets and
// benchmarks that streamgen generates for every record (in
// streamgen_records_test.go). The generated file keeps only what is specific
// to a record, its sample value, and calls these helpers, so a generated
// test is a line per record and the test logic can improve without
// regenerating anyone's package.
//
// It imports only the standard library and serdes, so a user's module needs
// no extra dependency to run the generated tests. Values are compared with
// reflect.DeepEqual for the same reason.
package serdestest

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// name is the Go name of T, for subtest names.
func name[T any]() string { return reflect.TypeFor[T]().Name() }

// RoundTrip checks, in a subtest named after T, that every case decodes to
// what was encoded with nothing left over, re-encodes to the same bytes, and
// that every truncation of its encoding fails with an error instead of a
// panic (see Truncations). Generated tests pass the zero value and a fully
// populated sample.
func RoundTrip[T any, PT serdes.RecordPtr[T]](t *testing.T, cases ...T) {
	t.Helper()
	t.Run(name[T](), func(t *testing.T) {
		for i := range cases {
			want := &cases[i]
			b := PT(want).AppendMsg(nil)
			var got T
			rest, err := PT(&got).UnmarshalMsg(b)
			if err != nil {
				t.Fatalf("case %d: UnmarshalMsg: %v", i, err)
			}
			if len(rest) != 0 {
				t.Fatalf("case %d: %d bytes left over", i, len(rest))
			}
			if !reflect.DeepEqual(&got, want) {
				t.Fatalf("case %d: round trip changed the record:\n got %+v\nwant %+v", i, got, *want)
			}
			if b2 := PT(&got).AppendMsg(nil); !bytes.Equal(b, b2) {
				t.Fatalf("case %d: re-encoding differs:\n% x\n% x", i, b, b2)
			}
			Truncations[T, PT](t, b)
		}
	})
}

// Truncations checks that decoding every proper prefix of the encoding b
// fails: a decoder that accepts a truncated record would turn a short read
// into silently wrong data.
func Truncations[T any, PT serdes.RecordPtr[T]](t *testing.T, b []byte) {
	t.Helper()
	for n := 0; n < len(b); n++ {
		var x T
		if _, err := PT(&x).UnmarshalMsg(b[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes (% x), decoded without error", n, len(b), b)
		}
	}
}

// FuzzDecode is the body of a generated Fuzz<Record>Decode target, seeded
// with the encodings of seeds. The decoder reads bytes from the network, so
// no input may make it panic or hang, every failure must be a serdes decode
// error (the runtime routes those to the deserialization policy), and
// whatever it accepts must re-encode to bytes that decode to the same
// encoding again. Encodings are compared rather than values: NaN floats are
// never DeepEqual to themselves.
func FuzzDecode[T any, PT serdes.RecordPtr[T]](f *testing.F, seeds ...T) {
	for i := range seeds {
		f.Add(PT(&seeds[i]).AppendMsg(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v T
		if _, err := PT(&v).UnmarshalMsg(b); err != nil {
			if !errors.Is(err, serdes.ErrDecode) {
				t.Fatalf("error %v is not a serdes decode error", err)
			}
			return
		}
		b2 := PT(&v).AppendMsg(nil)
		var v2 T
		rest, err := PT(&v2).UnmarshalMsg(b2)
		if err != nil || len(rest) != 0 {
			t.Fatalf("re-decoding % x (from % x): %v, %d bytes left", b2, b, err, len(rest))
		}
		if b3 := PT(&v2).AppendMsg(nil); !bytes.Equal(b2, b3) {
			t.Fatalf("encoding is not stable:\n% x\n% x", b2, b3)
		}
	})
}

// BenchmarkMarshal measures AppendMsg of v into a reused buffer, in a
// sub-benchmark named after T. It should report 0 allocs.
func BenchmarkMarshal[T any, PT serdes.RecordPtr[T]](b *testing.B, v T) {
	b.Run(name[T](), func(b *testing.B) {
		p := PT(&v)
		buf := p.AppendMsg(nil)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			buf = p.AppendMsg(buf[:0])
		}
	})
}

// BenchmarkUnmarshal measures UnmarshalMsg of the encoding of v, in a
// sub-benchmark named after T.
func BenchmarkUnmarshal[T any, PT serdes.RecordPtr[T]](b *testing.B, v T) {
	b.Run(name[T](), func(b *testing.B) {
		buf := PT(&v).AppendMsg(nil)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		var out T
		p := PT(&out)
		for b.Loop() {
			if _, err := p.UnmarshalMsg(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
