package serdes

// ProtoRecord is implemented by the pointer type of every generated record
// a protobuf topic side carries, directly or nested (streamgen_protobuf.go).
type ProtoRecord interface {
	// AppendProto appends the record's proto3 encoding to b, allocating
	// nothing beyond growing b. Fields holding their type's zero value are
	// left out, as proto3 does, except optional fields, which are written
	// whenever they are set. A nil receiver appends nothing.
	AppendProto(b []byte) []byte
	// DecodeProto decodes b, exactly one message, into the receiver,
	// replacing its contents. Fields are matched by number; unknown fields
	// (and known ones of another wire type) are skipped, missing ones are
	// zero. An error is a *DecodeError with the field path and the offset.
	DecodeProto(b []byte) error
}

// ProtoRecordPtr constrains PT to be *T for a generated record T with
// protobuf methods.
type ProtoRecordPtr[T any] interface {
	*T
	ProtoRecord
}

// ProtobufCodec is the SchemaCodec of the protobuf format: the generated
// proto3 codec of a record, whose schema is a .proto file with the
// record's message first (message index [0]). Reading needs no
// resolution: proto3 readers match fields by number, skip the ones they
// do not know and leave missing ones zero, so a compatible writer's
// message, older or newer, decodes with the reader's own code, as a Java
// consumer with generated classes reads it.
type ProtobufCodec[T any, PT ProtoRecordPtr[T]] struct {
	schema string
}

// Protobuf returns the protobuf codec of the generated record T, which
// registers schema, its generated .proto file.
func Protobuf[T any, PT ProtoRecordPtr[T]](schema string) ProtobufCodec[T, PT] {
	return ProtobufCodec[T, PT]{schema: schema}
}

// protoFirstMessage is the message index of the first message of a file.
var protoFirstMessage = []int{0}

// SchemaType implements SchemaCodec.
func (ProtobufCodec[T, PT]) SchemaType() SchemaType { return SchemaProtobuf }

// Schema implements SchemaCodec.
func (c ProtobufCodec[T, PT]) Schema() string { return c.schema }

// MessageIndex implements SchemaCodec: the record's message is the first
// of its file.
func (ProtobufCodec[T, PT]) MessageIndex() []int { return protoFirstMessage }

// Append implements SchemaCodec.
func (ProtobufCodec[T, PT]) Append(dst []byte, v PT) ([]byte, error) { return v.AppendProto(dst), nil }

// Decode implements SchemaCodec.
func (ProtobufCodec[T, PT]) Decode(b []byte) (PT, error) {
	v := PT(new(T))
	if err := v.DecodeProto(b); err != nil {
		return nil, err
	}
	return v, nil
}

// Resolve implements SchemaCodec: any writer's message decodes by field
// number, whichever message of its file the index names.
func (c ProtobufCodec[T, PT]) Resolve(string, []int) (func([]byte) (PT, error), error) {
	return c.Decode, nil
}
