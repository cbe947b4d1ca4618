package serdes

// JSONRecord is implemented by the pointer type of every generated record
// used on a topic whose key or value format is json.
type JSONRecord interface {
	// AppendJSONWith appends the JSON object of the record to b, with the
	// topic's options, allocating nothing beyond growing b. A nil receiver
	// appends null.
	AppendJSONWith(b []byte, o JSONOptions) []byte
	// DecodeJSON decodes b, exactly one JSON object (whitespace around it
	// allowed), into the receiver, replacing its contents. Unknown members
	// are skipped; missing and null ones take their spec default. An error
	// is a *DecodeError with the field path and the offset in b.
	DecodeJSON(b []byte) error
	IsNil() bool
}

// JSONRecordPtr constrains PT to be *T for a generated record T with JSON
// methods.
type JSONRecordPtr[T any] interface {
	*T
	JSONRecord
}

// JSONSerde is the serde of a generated record on a topic whose format is
// json. Options are the topic's (how timestamps are written).
type JSONSerde[T any, PT JSONRecordPtr[T]] struct {
	Options JSONOptions
}

// JSON returns the JSON serde of the generated record type T with options
// o: serdes.JSON[Order](serdes.JSONOptions{}) is a Serde[*Order].
func JSON[T any, PT JSONRecordPtr[T]](o JSONOptions) JSONSerde[T, PT] {
	return JSONSerde[T, PT]{Options: o}
}

// Append appends the JSON object of v; a nil v appends null (the runtime
// normally writes a nil record as a tombstone before it gets here).
func (s JSONSerde[T, PT]) Append(dst []byte, v PT) ([]byte, error) {
	return v.AppendJSONWith(dst, s.Options), nil
}

// Decode decodes one record. Empty input and a JSON null decode to a nil
// record (a tombstone), as Kafka's JSON deserializers return null for them.
func (JSONSerde[T, PT]) Decode(b []byte) (PT, error) {
	if len(SkipJSONSpace(b)) == 0 || isOnlyNull(b) {
		return nil, nil
	}
	v := PT(new(T))
	if err := v.DecodeJSON(b); err != nil {
		return nil, err
	}
	return v, nil
}

// isOnlyNull reports whether b is the JSON null and whitespace.
func isOnlyNull(b []byte) bool {
	b = SkipJSONSpace(b)
	return len(b) >= 4 && string(b[:4]) == "null" && len(SkipJSONSpace(b[4:])) == 0
}

// JSONValueSerde is the JSON serde of a key or value that is not a record:
// a primitive (a JSON string, number, bool) or a generated enum (its name),
// on a topic that names the json format.
type JSONValueSerde[T any] struct {
	appendFn func([]byte, T) []byte
	read     func([]byte) (T, []byte, error)
}

// JSONValue returns the JSON serde of a value written with appendFn and
// read with read, the AppendJSON and ReadJSON functions of its type
// (generated ones for enums): serdes.JSONValue(serdes.AppendJSONInt64,
// serdes.ReadJSONInt64) is a Serde[int64].
func JSONValue[T any](appendFn func([]byte, T) []byte, read func([]byte) (T, []byte, error)) JSONValueSerde[T] {
	return JSONValueSerde[T]{appendFn: appendFn, read: read}
}

// Append appends the JSON of v.
func (s JSONValueSerde[T]) Append(dst []byte, v T) ([]byte, error) { return s.appendFn(dst, v), nil }

// Decode decodes exactly one JSON value.
func (s JSONValueSerde[T]) Decode(b []byte) (T, error) {
	var v T
	err := DecodeJSONTop(b, func(b []byte) (rest []byte, err error) {
		v, rest, err = s.read(b)
		return rest, err
	})
	return v, err
}
