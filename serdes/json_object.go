package serdes

// Objects, arrays and skipping: the loops generated JSON decoders would
// otherwise repeat. Like DecodeRecord, each takes a function that is called
// and never stored, so closures stay on the caller's stack.

// consume skips whitespace and one expected byte.
func consume(b []byte, c byte, want string) ([]byte, error) {
	b = SkipJSONSpace(b)
	if len(b) == 0 {
		return b, errShort(b)
	}
	if b[0] != c {
		return b, newErr(b, "want "+want+", got "+jsonKind(b[0]))
	}
	return b[1:], nil
}

// ReadJSONObject decodes a JSON object from the start of b: for each
// member it reads the key (unescaped; valid only during the call: a slice
// of b unless it holds escapes, so keys cost no allocation) and
// calls field with it and the bytes at the value. A null value is skipped
// (the field keeps the default the caller set: null and absent mean the
// same), and field must skip the value of a key it does not know
// (SkipJSON) so records written by a newer schema decode. An error of
// field gets the key prepended to its path. A repeated key is decoded
// again, so the last one wins, as in encoding/json and Jackson.
//
// depth counts the records enclosing this one; beyond MaxDepth decoding
// fails, so hostile input cannot overflow the stack.
func ReadJSONObject(b []byte, depth int, field func(key, b []byte) ([]byte, error)) ([]byte, error) {
	if depth > MaxDepth {
		return b, TooDeep(b)
	}
	return readMembers(b, func(key, b []byte) ([]byte, error) {
		if IsJSONNull(b) {
			return SkipJSONSpace(b)[4:], nil
		}
		rest, err := field(key, b)
		if err != nil {
			return rest, WrapField(err, string(key))
		}
		return rest, nil
	})
}

// readMembers calls member with the key and the bytes at the value of each
// member of the JSON object at the start of b: the syntax of every object.
func readMembers(b []byte, member func(key, b []byte) ([]byte, error)) ([]byte, error) {
	b, err := consume(b, '{', "object")
	if err != nil {
		return b, err
	}
	if b = SkipJSONSpace(b); len(b) > 0 && b[0] == '}' {
		return b[1:], nil
	}
	for {
		var key []byte
		if key, b, err = readRawString(SkipJSONSpace(b), nil); err != nil {
			return b, err
		}
		if b, err = consume(b, ':', "':' after an object key"); err != nil {
			return b, err
		}
		if b, err = member(key, SkipJSONSpace(b)); err != nil {
			return b, err
		}
		var done bool
		if b, done, err = next(b, '}', "an object"); err != nil || done {
			return b, err
		}
	}
}

// next consumes what follows an element of an array or object: a comma
// (done is false) or the closing byte (done is true).
func next(b []byte, closing byte, in string) (rest []byte, done bool, err error) {
	b = SkipJSONSpace(b)
	switch {
	case len(b) == 0:
		return b, false, errShort(b)
	case b[0] == ',':
		return b[1:], false, nil
	case b[0] == closing:
		return b[1:], true, nil
	}
	return b, false, newErr(b, "want ',' or '"+string(closing)+"' in "+in+", got "+jsonKind(b[0]))
}

// readJSONArray calls elem for each element of the JSON array at the
// start of b, with its index; an element's error gets the index prepended
// to its path.
func readJSONArray(b []byte, elem func(i int, b []byte) ([]byte, error)) ([]byte, error) {
	b, err := consume(b, '[', "array")
	if err != nil {
		return b, err
	}
	b = SkipJSONSpace(b)
	if len(b) > 0 && b[0] == ']' {
		return b[1:], nil
	}
	for i := 0; ; i++ {
		if b, err = elem(i, b); err != nil {
			return b, WrapIndex(err, i)
		}
		var done bool
		if b, done, err = next(b, ']', "an array"); err != nil || done {
			return b, err
		}
	}
}

// ReadJSONList decodes a JSON array with elem for each element. An empty
// array decodes as nil, as in the msgpack decoders, so a zero record
// survives a round trip unchanged.
func ReadJSONList[T any](b []byte, elem func([]byte) (T, []byte, error)) ([]T, []byte, error) {
	return ReadJSONRecordList(b, func(b []byte, v *T) (_ []byte, err error) {
		*v, b, err = elem(b)
		return b, err
	})
}

// ReadJSONRecordList is ReadJSONList for elements decoded in place, as
// records are.
func ReadJSONRecordList[T any](b []byte, decode func(b []byte, v *T) ([]byte, error)) ([]T, []byte, error) {
	var out []T
	var zero T
	rest, err := readJSONArray(b, func(i int, b []byte) ([]byte, error) {
		if out == nil {
			// JSON has no element count to size from: start at a few, so
			// short lists take one allocation instead of three.
			out = make([]T, 0, 4)
		}
		out = append(out, zero)
		return decode(b, &out[i])
	})
	if err != nil {
		return nil, b, err
	}
	return out, rest, nil
}

// ReadJSONMap decodes a JSON object with elem for each value. An empty
// object decodes as nil. Unlike a record, a null value is an error unless
// elem accepts it: a map has no default to fall back on.
func ReadJSONMap[T any](b []byte, elem func([]byte) (T, []byte, error)) (map[string]T, []byte, error) {
	var out map[string]T
	rest, err := readMembers(b, func(key, b []byte) ([]byte, error) {
		v, rest, err := elem(b)
		if err != nil {
			return rest, WrapKey(err, string(key))
		}
		if out == nil {
			out = map[string]T{}
		}
		out[string(key)] = v
		return rest, nil
	})
	if err != nil {
		return nil, b, err
	}
	return out, rest, nil
}

// SkipJSON skips one JSON value of any type, checking its syntax: the
// value of a field this schema does not know. Arrays and objects nested
// deeper than MaxDepth are an error.
func SkipJSON(b []byte) ([]byte, error) { return skipJSON(b, 0) }

func skipJSON(b []byte, depth int) ([]byte, error) {
	b = SkipJSONSpace(b)
	if len(b) == 0 {
		return b, errShort(b)
	}
	if depth > MaxDepth {
		return b, newErr(b, "values nested deeper than 256")
	}
	switch c := b[0]; {
	case c == '"':
		_, rest, err := readRawString(b, nil)
		return rest, err
	case c == '{':
		return skipObject(b, depth)
	case c == '[':
		return readJSONArray(b, func(_ int, b []byte) ([]byte, error) { return skipJSON(b, depth+1) })
	case c == 't':
		return expectLit(b, "true")
	case c == 'f':
		return expectLit(b, "false")
	case c == 'n':
		return expectLit(b, "null")
	}
	n, _, err := scanNumber(b)
	return b[n:], err
}

func skipObject(b []byte, depth int) ([]byte, error) {
	return readMembers(b, func(_, b []byte) ([]byte, error) { return skipJSON(b, depth+1) })
}

// DecodeJSONTop runs decode on the whole of b, the input of a generated
// DecodeJSON: only whitespace may follow the value, and an error is
// located in b.
func DecodeJSONTop(b []byte, decode func(b []byte) ([]byte, error)) error {
	rest, err := decode(b)
	if err == nil {
		if rest = SkipJSONSpace(rest); len(rest) != 0 {
			err = newErr(rest, "unexpected data after the value")
		}
	}
	return Locate(err, b)
}
