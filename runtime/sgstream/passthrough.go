package sgstream

import (
	"unsafe"

	"github.com/streamgen/streamgen/serdes"
)

// Values whose encoding is their own bytes (serdes.String, serdes.Bytes)
// need no encoding at a sink: the collector copies what it keeps, so the
// sink hands it a view of the string or the slice itself, and a record that
// passes through unchanged is copied once on its way to Kafka instead of
// three times (decode, encode, the collector's copy). On the sink path of a
// pass-through topology the copies and the allocation of the decoded value
// were a fifth of the CPU left to streamgen (docs/benchmarks.md, findings).

// byteView says how a serde of T encodes: viewString when T is string and
// the serde serdes.String, viewBytes when T is []byte and the serde
// serdes.Bytes, viewNone otherwise (encode with Append).
type byteView uint8

const (
	viewNone byteView = iota
	viewString
	viewBytes
)

func viewOf[T any](s serdes.Serde[T]) byteView {
	var zero T
	switch any(s).(type) {
	case serdes.StringSerde:
		if _, ok := any(zero).(string); ok {
			return viewString
		}
	case serdes.BytesSerde:
		if _, ok := any(zero).([]byte); ok {
			return viewBytes
		}
	}
	return viewNone
}

// bytesOf returns the encoding of *v without copying it, for a view other
// than viewNone: the bytes of the string, or the slice. They are valid as
// long as *v is, and must not be written.
func bytesOf[T any](view byteView, v *T) []byte {
	if view == viewString {
		s := *(*string)(unsafe.Pointer(v))
		return unsafe.Slice(unsafe.StringData(s), len(s))
	}
	return *(*[]byte)(unsafe.Pointer(v))
}

// encodeView appends the encoding of *v to buf with s, or returns it
// without copying if view allows; never nil (an empty value is not a null).
func encodeView[T any](view byteView, s serdes.Serde[T], buf []byte, v *T) (out, newBuf []byte, err error) {
	if view != viewNone {
		if b := bytesOf(view, v); b != nil {
			return b, buf, nil
		}
		return nonNil(buf[:0]), buf, nil
	}
	if buf, err = s.Append(buf[:0], *v); err != nil {
		return nil, buf, err
	}
	return nonNil(buf), buf, nil
}
