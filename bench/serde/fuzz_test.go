package serde

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/serdes"
	"github.com/vmihailenco/msgpack/v5"
)

// FuzzUnmarshalOrder feeds arbitrary bytes to a generated decoder. It must
// never panic; failures must be *serdes.DecodeError with an offset inside
// the input; and anything it accepts must re-encode to bytes that decode to
// the same encoding again (the encoding is canonical).
func FuzzUnmarshalOrder(f *testing.F) {
	f.Add(sampleOrder().AppendMsg(nil))
	f.Add((&Order{}).AppendMsg(nil))
	if b, err := msgpack.Marshal(samplePeer()); err == nil {
		f.Add(b)
	}
	f.Add([]byte{0x81, 0x05, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var o Order
		rest, err := o.UnmarshalMsg(b)
		if err != nil {
			var de *serdes.DecodeError
			if !errors.As(err, &de) || !errors.Is(err, serdes.ErrDecode) {
				t.Fatalf("error %T %v is not a *serdes.DecodeError", err, err)
			}
			if de.Offset < 0 || de.Offset > len(b) || !strings.HasPrefix(de.Error(), "streamgen: decode") {
				t.Fatalf("bad error %q (offset %d of %d)", de.Error(), de.Offset, len(b))
			}
			return
		}
		if len(rest) > len(b) {
			t.Fatalf("rest longer than input")
		}
		enc := o.AppendMsg(nil)
		var o2 Order
		if _, err := o2.UnmarshalMsg(enc); err != nil {
			t.Fatalf("re-decoding our own encoding: %v", err)
		}
		if enc2 := o2.AppendMsg(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n% x\n% x", enc, enc2)
		}
	})
}
