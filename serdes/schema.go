package serdes

// SchemaType is the kind of schema a schema registry holds, spelled as
// Confluent's API spells it ("schemaType" in its requests).
type SchemaType string

const (
	SchemaAvro     SchemaType = "AVRO"
	SchemaProtobuf SchemaType = "PROTOBUF"
	SchemaJSON     SchemaType = "JSON"
)

// SchemaCodec is the generated codec of one key or value type in a format
// whose schema lives in a schema registry: avro, protobuf or jsonschema
// (docs/formats.md). It writes and reads the bare encoding; the registry
// layer adds the Confluent wire format around it (magic byte, schema id,
// and for Protobuf the message indexes), looks the schema up or registers
// it, and fetches a writer's schema by id to hand to Resolve.
type SchemaCodec[T any] interface {
	// SchemaType is the registry's name of the format.
	SchemaType() SchemaType
	// Schema is the schema this codec writes, as the registry stores it:
	// Avro schema JSON (.avsc), a .proto file, or a JSON Schema document.
	// It is a constant of the generated code, so every call returns the
	// same text.
	Schema() string
	// MessageIndex is, for Protobuf, the path of the written message in
	// Schema's file (Confluent's message indexes: [0] for the first
	// top-level message); nil for the other formats.
	MessageIndex() []int
	// Append appends the bare encoding of v to dst.
	Append(dst []byte, v T) ([]byte, error)
	// Decode decodes bytes written with this codec's own schema. It never
	// panics; an error is a *DecodeError naming the field path.
	Decode(b []byte) (T, error)
	// Resolve returns the decoder of bytes written under another writer
	// schema (the registry's text, and for Protobuf the message index),
	// following the format's evolution rules. An error says why the two
	// cannot be resolved, naming the field. The registry layer caches the
	// result per schema id.
	Resolve(writer string, index []int) (func(b []byte) (T, error), error)
}
