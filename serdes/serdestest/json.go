package serdestest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// jsonOptions are the encoder settings every JSON check runs under.
var jsonOptions = []serdes.JSONOptions{{Timestamps: serdes.JSONRFC3339}, {Timestamps: serdes.JSONEpochMillis}}

// JSONRoundTrip checks, in a subtest named after T, the JSON codec of a
// record under both timestamp settings: every case encodes to valid JSON
// that decodes to what was encoded and re-encodes to the same bytes, and
// every truncation of the encoding fails with a decode error instead of a
// panic. Generated tests pass the zero value and a fully populated sample.
func JSONRoundTrip[T any, PT serdes.JSONRecordPtr[T]](t *testing.T, cases ...T) {
	t.Helper()
	t.Run(name[T](), func(t *testing.T) {
		for _, o := range jsonOptions {
			for i := range cases {
				want := &cases[i]
				b := PT(want).AppendJSONWith(nil, o)
				if !json.Valid(b) {
					t.Fatalf("case %d (%+v): invalid JSON %s", i, o, b)
				}
				var got T
				if err := PT(&got).DecodeJSON(b); err != nil {
					t.Fatalf("case %d (%+v): DecodeJSON(%s): %v", i, o, b, err)
				}
				if !reflect.DeepEqual(&got, want) {
					t.Fatalf("case %d (%+v): round trip changed the record:\n got %+v\nwant %+v\njson %s", i, o, got, *want, b)
				}
				if b2 := PT(&got).AppendJSONWith(nil, o); !bytes.Equal(b, b2) {
					t.Fatalf("case %d (%+v): re-encoding differs:\n%s\n%s", i, o, b, b2)
				}
				for n := 0; n < len(b); n++ {
					var x T
					if err := PT(&x).DecodeJSON(b[:n]); !errors.Is(err, serdes.ErrDecode) {
						t.Fatalf("truncated to %d of %d bytes (%s): got %v, want a decode error", n, len(b), b[:n], err)
					}
				}
			}
		}
	})
}

// FuzzJSONDecode is the body of a generated Fuzz<Record>JSONDecode target,
// seeded with the JSON of seeds: no input may make the decoder panic or
// hang, every failure must be a serdes decode error, and whatever it
// accepts must re-encode to valid JSON whose decoding encodes the same.
func FuzzJSONDecode[T any, PT serdes.JSONRecordPtr[T]](f *testing.F, seeds ...T) {
	for i := range seeds {
		f.Add(PT(&seeds[i]).AppendJSONWith(nil, serdes.JSONOptions{}))
	}
	f.Add([]byte(`{"unknown": [1, {"a": null}, "x\u2028"], "n": -0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v T
		if err := PT(&v).DecodeJSON(b); err != nil {
			if !errors.Is(err, serdes.ErrDecode) {
				t.Fatalf("error %v is not a serdes decode error", err)
			}
			return
		}
		b2 := PT(&v).AppendJSONWith(nil, serdes.JSONOptions{})
		if !json.Valid(b2) {
			t.Fatalf("re-encoding %q gave invalid JSON %q", b, b2)
		}
		var v2 T
		if err := PT(&v2).DecodeJSON(b2); err != nil {
			t.Fatalf("re-decoding %q (from %q): %v", b2, b, err)
		}
		if b3 := PT(&v2).AppendJSONWith(nil, serdes.JSONOptions{}); !bytes.Equal(b2, b3) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b2, b3)
		}
	})
}
