package sgimpl

import "github.com/streamgen/streamgen/serdes"

// The repeated and map fields of generated protobuf codecs, as
// collections.go has them for msgpack: each generated record states such a
// field in one call. Elements go through a serdes reader or appender (or a
// short literal the generator writes), called and never stored. Repeated
// fields may come in several pieces and, for scalars, packed or not, so
// the readers append to the list they are given.

// ReadProtoPacked reads a packed repeated field's value (its length, then
// elements to its end) and appends the elements to list. size is the
// byte size of an element for fixed32 and fixed64 kinds, 0 for varints:
// it sizes the list from the input before decoding, never beyond what the
// input holds.
func ReadProtoPacked[T any](list []T, b []byte, size int, elem func([]byte) (T, []byte, error)) ([]T, []byte, error) {
	p, rest, err := serdes.ReadProtoLen(b)
	if err != nil {
		return list, b, err
	}
	n := 0
	if size > 0 {
		n = len(p) / size
	} else {
		for _, c := range p {
			if c < 0x80 {
				n++
			}
		}
	}
	if cap(list)-len(list) < n {
		list = append(make([]T, 0, len(list)+n), list...)
	}
	for len(p) > 0 {
		var v T
		if v, p, err = elem(p); err != nil {
			return list, b, serdes.WrapIndex(serdes.ProtoInner(err, rest), len(list))
		}
		list = append(list, v)
	}
	return list, rest, nil
}

// ReadProtoElem reads one element of a repeated field (not packed) and
// appends it to list.
func ReadProtoElem[T any](list []T, b []byte, elem func([]byte) (T, []byte, error)) ([]T, []byte, error) {
	v, rest, err := elem(b)
	if err != nil {
		return list, b, serdes.WrapIndex(err, len(list))
	}
	return append(list, v), rest, nil
}

// ReadProtoMapEntry reads one entry of a map field, the message {string
// key = 1; V value = 2}, and sets it in m (made when nil). valTag is the
// value's tag and elem its reader; a missing key or value is the zero
// value, and a repeated key replaces the earlier one, as protobuf reads
// maps. Other fields of the entry are skipped.
func ReadProtoMapEntry[V any](m map[string]V, b []byte, depth int, valTag uint64, elem func([]byte) (V, []byte, error)) (map[string]V, []byte, error) {
	e, rest, err := serdes.ReadProtoLen(b)
	if err != nil {
		return m, b, err
	}
	var k string
	var v V
	for len(e) > 0 {
		tag, at, err := serdes.ReadProtoTag(e)
		switch {
		case err != nil:
		case tag == 0x0a:
			k, e, err = serdes.ReadProtoString(at)
		case tag == valTag:
			if v, e, err = elem(at); err != nil {
				err = serdes.WrapKey(err, k)
			}
		default:
			e, err = serdes.SkipProtoField(at, tag, depth)
		}
		if err != nil {
			return m, b, serdes.ProtoInner(err, rest)
		}
	}
	if m == nil {
		m = map[string]V{}
	}
	m[k] = v
	return m, rest, nil
}

// AppendProtoMap appends m as a map field: an entry message per key, in
// sorted key order so equal records encode to equal bytes (as protobuf's
// deterministic marshalling does), each with tag, its key as field 1 and
// its value, with valTag and elem, as field 2. Both are written even when
// zero, as protobuf writes map entries. Maps of up to 16 entries sort on
// the stack and allocate nothing.
func AppendProtoMap[V any](b []byte, tag uint64, m map[string]V, valTag uint64, elem func([]byte, V) []byte) []byte {
	var buf [16]entry[V]
	for _, e := range sortedEntries(m, buf[:0]) {
		b = append(serdes.AppendProtoVarint(b, tag), 0)
		at := len(b)
		b = serdes.AppendProtoString(append(b, 0x0a), e.key)
		b = elem(serdes.AppendProtoVarint(b, valTag), e.value)
		b = serdes.ProtoEndLen(b, at)
	}
	return b
}
