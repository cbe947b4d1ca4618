package sgimpl

import "github.com/streamgen/streamgen/serdes"

// The collection readers of generated Avro decoders, as collections.go has
// them for msgpack. Avro arrays and maps come in blocks (serdes.AvroBlocks),
// whose counts are checked as items decode, never trusted to size memory.

// ReadAvroList decodes an Avro array with elem for each item. An empty
// array decodes as nil.
func ReadAvroList[T any](b []byte, elem func([]byte) (T, []byte, error)) ([]T, []byte, error) {
	return ReadAvroRecordList(b, func(b []byte, v *T) (_ []byte, err error) {
		*v, b, err = elem(b)
		return b, err
	})
}

// ReadAvroRecordList is ReadAvroList for items decoded in place.
func ReadAvroRecordList[T any](b []byte, decode func(b []byte, v *T) ([]byte, error)) ([]T, []byte, error) {
	var out []T
	rest, err := serdes.AvroBlocks(b, func(b []byte, i int) ([]byte, error) {
		var zero T
		out = append(out, zero)
		b, err := decode(b, &out[len(out)-1])
		if err != nil {
			return b, serdes.WrapIndex(err, i)
		}
		return b, nil
	})
	return out, rest, err
}

// ReadAvroMap decodes an Avro map with elem for each value. An empty map
// decodes as nil. A repeated key keeps its last value.
func ReadAvroMap[T any](b []byte, elem func([]byte) (T, []byte, error)) (map[string]T, []byte, error) {
	var out map[string]T
	rest, err := serdes.AvroBlocks(b, func(b []byte, _ int) ([]byte, error) {
		k, b, err := serdes.ReadAvroString(b)
		if err != nil {
			return b, err
		}
		v, b, err := elem(b)
		if err != nil {
			return b, serdes.WrapKey(err, k)
		}
		if out == nil {
			out = make(map[string]T)
		}
		out[k] = v
		return b, nil
	})
	return out, rest, err
}
