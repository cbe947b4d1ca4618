package serdes

// Record is implemented by the pointer type of every generated record.
type Record interface {
	// AppendMsg appends the msgpack encoding of the record (a map keyed by
	// field ID) to b, allocating nothing beyond growing b. A nil receiver
	// appends msgpack nil.
	AppendMsg(b []byte) []byte
	// UnmarshalMsg decodes one record from the start of b into the receiver,
	// replacing its contents, and returns the rest of b. Fields missing from
	// b take their spec default and unknown fields are skipped; the result
	// does not alias b. An error is a *DecodeError with the field path and
	// the offset in b, and comes with all of b as the rest.
	UnmarshalMsg(b []byte) ([]byte, error)
	// IsNil reports whether the receiver is a nil pointer. It works on a nil
	// receiver, so the runtime can recognise a tombstone returned by a user
	// function through the Record interface, where a typed nil pointer
	// would not compare equal to nil.
	IsNil() bool
}

// RecordPtr constrains PT to be *T for a generated record T.
type RecordPtr[T any] interface {
	*T
	Record
}

// MsgpackSerde is the serde of a generated record type: its AppendMsg and
// UnmarshalMsg encoding (see the package documentation for the format).
type MsgpackSerde[T any, PT RecordPtr[T]] struct{}

// Msgpack returns the serde of the generated record type T, used through its
// pointer type PT: serdes.Msgpack[Order]() is a Serde[*Order].
func Msgpack[T any, PT RecordPtr[T]]() MsgpackSerde[T, PT] { return MsgpackSerde[T, PT]{} }

// Append appends the encoding of v. A nil v is written as msgpack nil; the
// runtime normally turns a nil record into a Kafka tombstone (a null value)
// before it gets here.
func (MsgpackSerde[T, PT]) Append(dst []byte, v PT) ([]byte, error) {
	if v.IsNil() {
		return AppendNil(dst), nil
	}
	return v.AppendMsg(dst), nil
}

// Decode decodes one record. Empty input and msgpack nil decode to a nil
// record (a tombstone). Bytes after the record are an error: they mean the
// data is not what the schema says.
func (MsgpackSerde[T, PT]) Decode(b []byte) (PT, error) {
	if len(b) == 0 || (len(b) == 1 && b[0] == 0xc0) {
		return nil, nil
	}
	v := PT(new(T))
	rest, err := v.UnmarshalMsg(b)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, Locate(newErr(rest, "unexpected bytes after the record"), b)
	}
	return v, nil
}
