package sgimpl

import (
	"slices"
	"strings"

	"github.com/streamgen/streamgen/serdes"
)

// Generic readers and writers of list and map fields, so a generated record
// states a collection field in one line instead of a loop. Elements go
// through a function (a serdes Read or Append function, or a short literal
// the generator writes), called and never stored, so no closure escapes.

// ReadList decodes a msgpack array with elem for each element. An empty
// array decodes as nil, the zero value, so a zero record survives a round
// trip unchanged. An element's error gets its index prepended to the path.
func ReadList[T any](b []byte, elem func([]byte) (T, []byte, error)) ([]T, []byte, error) {
	return ReadRecordList(b, func(b []byte, v *T) (_ []byte, err error) {
		*v, b, err = elem(b)
		return b, err
	})
}

// ReadRecordList is ReadList for elements decoded in place, as records are:
// decode fills the element in the list's own array, so no element is
// copied or, for a recursive record the compiler cannot prove stays on the
// stack, allocated on its own.
func ReadRecordList[T any](b []byte, decode func(b []byte, v *T) ([]byte, error)) ([]T, []byte, error) {
	n, b, err := serdes.ReadArrayHeader(b)
	if err != nil || n == 0 {
		return nil, b, err
	}
	out := make([]T, 0, min(n, serdes.MaxPrealloc))
	var zero T
	for i := 0; i < n; i++ {
		out = append(out, zero)
		if b, err = decode(b, &out[i]); err != nil {
			return out, b, serdes.WrapIndex(err, i)
		}
	}
	return out, b, nil
}

// ReadMap decodes a msgpack map with string keys, with elem for each value.
// An empty map decodes as nil, like an empty list. A value's error gets its
// key prepended to the path. elem returns the value by value: a pointer to
// a local passed to it would move the local to the heap.
func ReadMap[T any](b []byte, elem func([]byte) (T, []byte, error)) (map[string]T, []byte, error) {
	n, b, err := serdes.ReadMapHeader(b)
	if err != nil || n == 0 {
		return nil, b, err
	}
	out := make(map[string]T, min(n, serdes.MaxPrealloc))
	for ; n > 0; n-- {
		var k string
		if k, b, err = serdes.ReadString(b); err != nil {
			return out, b, err
		}
		var v T
		if v, b, err = elem(b); err != nil {
			return out, b, serdes.WrapKey(err, k)
		}
		out[k] = v
	}
	return out, b, nil
}

// AppendList appends list as a msgpack array, each element with elem.
func AppendList[T any](b []byte, list []T, elem func([]byte, T) []byte) []byte {
	b = serdes.AppendArrayHeader(b, len(list))
	for _, v := range list {
		b = elem(b, v)
	}
	return b
}

// AppendRecordList appends a list of records as a msgpack array. The
// records are appended where they are, not copied.
func AppendRecordList[T any, PT interface {
	*T
	AppendMsg([]byte) []byte
}](b []byte, list []T) []byte {
	b = serdes.AppendArrayHeader(b, len(list))
	for i := range list {
		b = PT(&list[i]).AppendMsg(b)
	}
	return b
}

// AppendMap appends m as a msgpack map, each value with elem, in sorted key
// order: equal records encode to equal bytes, which matters for records
// used as Kafka keys (partitioning, compaction). Maps of up to 16 entries
// are sorted in a stack array, so they allocate nothing.
func AppendMap[T any](b []byte, m map[string]T, elem func([]byte, T) []byte) []byte {
	var buf [16]entry[T]
	b = serdes.AppendMapHeader(b, len(m))
	for _, e := range sortedEntries(m, buf[:0]) {
		b = elem(serdes.AppendString(b, e.key), e.value)
	}
	return b
}

// SortedKeys appends the keys of m to buf in sorted order and returns it.
// Generated encoders use it for maps whose values they append where they
// are (records, collections), in key order as AppendMap does. Passing a
// small array-backed buf keeps maps of up to its capacity free of heap
// allocations.
func SortedKeys[V any](m map[string]V, buf []string) []string {
	for k := range m {
		buf = append(buf, k)
	}
	sortSmall(buf, strings.Compare)
	return buf
}

// entry is one key/value pair of a map field.
type entry[V any] struct {
	key   string
	value V
}

// sortedEntries is SortedKeys with the values: it saves AppendMap a map
// lookup per key.
func sortedEntries[V any](m map[string]V, buf []entry[V]) []entry[V] {
	for k, v := range m {
		buf = append(buf, entry[V]{k, v})
	}
	sortSmall(buf, func(a, b entry[V]) int { return strings.Compare(a.key, b.key) })
	return buf
}

// sortSmall sorts s by cmp: by insertion up to 12 elements, as maps in
// records usually are, which spares them the generic sort's overhead, and
// with slices.SortFunc above.
func sortSmall[E any](s []E, cmp func(a, b E) int) {
	if len(s) > 12 {
		slices.SortFunc(s, cmp)
		return
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && cmp(s[j], s[j-1]) < 0; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
