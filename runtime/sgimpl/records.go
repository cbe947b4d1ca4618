package sgimpl

import "github.com/streamgen/streamgen/serdes"

// Fields names the fields of a generated record by ID: Fields[id] is the spec
// name of field id, and "" an ID the record does not use. Generated code
// declares one per record, written with index keys
// (sgimpl.Fields{1: "id", 2: "user_id"}), for DecodeRecord.
type Fields []string

// lookup returns the ID of the field whose spec name is name, or 0 (no
// field) for an unknown name. It runs only for data keyed by name, so a
// linear scan beats keeping a map per record.
func (f Fields) lookup(name []byte) int {
	for id, n := range f {
		if n != "" && n == string(name) {
			return id
		}
	}
	return 0
}

// DecodeRecord decodes the msgpack map of a record from the start of b: the
// loop every generated decoder would otherwise repeat. For each entry it
// reads the key (a field ID, or a spec name looked up in fields), skips a
// nil value (an absent field keeps the default the caller already set),
// skips a key that names no field (a field of a newer schema, or a key of
// another type), and calls field with the ID and the bytes at the value for
// the others. field decodes the value and returns the bytes after it.
//
// depth counts the records enclosing this one, so hostile input cannot nest
// a recursive schema until the stack overflows. An error of field gets the
// field's name prepended to its path; at depth 0 (a generated UnmarshalMsg)
// errors are also located in b and b itself is returned, as the
// serdes.Record contract says.
//
// field is called, never stored, so a closure passed here stays on the
// caller's stack: decoding allocates no more than the result owns.
func DecodeRecord(b []byte, depth int, fields Fields, field func(id int, b []byte) ([]byte, error)) ([]byte, error) {
	rest, err := decodeRecord(b, depth, fields, field)
	if err != nil && depth == 0 {
		return b, serdes.Locate(err, b)
	}
	return rest, err
}

func decodeRecord(b []byte, depth int, fields Fields, field func(id int, b []byte) ([]byte, error)) ([]byte, error) {
	if depth > serdes.MaxDepth {
		return b, serdes.TooDeep(b)
	}
	n, b, err := serdes.ReadMapHeader(b)
	if err != nil {
		return b, err
	}
	for ; n > 0; n-- {
		var id int
		var name []byte
		id, name, b, err = serdes.ReadKey(b)
		if err != nil {
			return b, err
		}
		if serdes.IsNil(b) {
			b = b[1:]
			continue
		}
		if name != nil {
			id = fields.lookup(name)
		}
		if id <= 0 || id >= len(fields) || fields[id] == "" {
			if b, err = serdes.Skip(b); err != nil {
				return b, err
			}
			continue
		}
		if b, err = field(id, b); err != nil {
			return b, serdes.WrapField(err, fields[id])
		}
	}
	return b, nil
}

// ReadPtr decodes a value with read into a new variable and returns a pointer
// to it: the present value of an optional field.
func ReadPtr[T any](b []byte, read func([]byte) (T, []byte, error)) (*T, []byte, error) {
	v, rest, err := read(b)
	if err != nil {
		return nil, rest, err
	}
	return &v, rest, nil
}
