package sgimpl

import "github.com/streamgen/streamgen/serdes"

// The loops over list and map fields of generated JSON encoders, as
// collections.go has them for msgpack: each generated record states a
// collection field in one call. The JSON primitives they call are in
// serdes (json_*.go).

// AppendJSONList appends list as a JSON array, each element with elem.
func AppendJSONList[T any](b []byte, list []T, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, v)
	}
	return append(b, ']')
}

// AppendJSONRecordList appends a list of records as a JSON array, each
// record where it is (not copied).
func AppendJSONRecordList[T any, PT interface {
	*T
	AppendJSONWith([]byte, serdes.JSONOptions) []byte
}](b []byte, list []T, o serdes.JSONOptions) []byte {
	b = append(b, '[')
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = PT(&list[i]).AppendJSONWith(b, o)
	}
	return append(b, ']')
}

// AppendJSONMap appends m as a JSON object, each value with elem, in
// sorted key order so equal records encode to equal bytes. Maps of up to
// 16 entries sort on the stack and allocate nothing.
func AppendJSONMap[T any](b []byte, m map[string]T, elem func([]byte, T) []byte) []byte {
	var buf [16]entry[T]
	b = append(b, '{')
	for i, e := range sortedEntries(m, buf[:0]) {
		if i > 0 {
			b = append(b, ',')
		}
		b = serdes.AppendJSONString(b, e.key)
		b = append(b, ':')
		b = elem(b, e.value)
	}
	return append(b, '}')
}
