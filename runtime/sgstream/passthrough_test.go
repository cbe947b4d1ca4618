package sgstream

import (
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// TestEncodeViewKeepsEmptyApartFromNull: the views of serdes.String and
// serdes.Bytes give the value's own bytes, an empty value stays non-nil
// (an empty value is not a tombstone), and other serdes still encode.
func TestEncodeViewKeepsEmptyApartFromNull(t *testing.T) {
	if viewOf[string](serdes.String) != viewString || viewOf[[]byte](serdes.Bytes) != viewBytes || viewOf[int64](serdes.Int64) != viewNone {
		t.Fatal("viewOf picked the wrong views")
	}
	for _, s := range []string{"", "key"} {
		b, _, err := encodeView(viewString, serdes.Serde[string](serdes.String), nil, &s)
		if err != nil || b == nil || string(b) != s {
			t.Errorf("string %q: %q (nil %v), %v", s, b, b == nil, err)
		}
	}
	for _, v := range [][]byte{nil, {}, []byte("v")} {
		b, _, err := encodeView(viewBytes, serdes.Serde[[]byte](serdes.Bytes), nil, &v)
		if err != nil || b == nil || string(b) != string(v) {
			t.Errorf("bytes %q: %q (nil %v), %v", v, b, b == nil, err)
		}
	}
	n := int64(7)
	b, buf, err := encodeView(viewNone, serdes.Serde[int64](serdes.Int64), nil, &n)
	if err != nil || len(b) != 8 || b[7] != 7 || &buf[0] != &b[0] {
		t.Errorf("int64: %v, %v", b, err)
	}
}
