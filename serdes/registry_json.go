package serdes

// JSONSchemaCodec is the SchemaCodec of the jsonschema format: the JSON
// the json format writes (JSONSerde, the generated AppendJSONWith and
// DecodeJSON), with a generated JSON Schema document as its schema. A
// reader needs no resolution: JSON members are matched by name, unknown
// ones skipped and missing ones defaulted, whichever schema the writer
// registered.
type JSONSchemaCodec[T any, PT JSONRecordPtr[T]] struct {
	json   JSONSerde[T, PT]
	schema string
}

// JSONSchema returns the jsonschema codec of the generated record T,
// writing with options o and registering schema, the record's generated
// JSON Schema document.
func JSONSchema[T any, PT JSONRecordPtr[T]](o JSONOptions, schema string) JSONSchemaCodec[T, PT] {
	return JSONSchemaCodec[T, PT]{json: JSON[T, PT](o), schema: schema}
}

// SchemaType implements SchemaCodec.
func (JSONSchemaCodec[T, PT]) SchemaType() SchemaType { return SchemaJSON }

// Schema implements SchemaCodec.
func (c JSONSchemaCodec[T, PT]) Schema() string { return c.schema }

// MessageIndex implements SchemaCodec: JSON Schema has none.
func (JSONSchemaCodec[T, PT]) MessageIndex() []int { return nil }

// Append implements SchemaCodec.
func (c JSONSchemaCodec[T, PT]) Append(dst []byte, v PT) ([]byte, error) {
	return c.json.Append(dst, v)
}

// Decode implements SchemaCodec.
func (c JSONSchemaCodec[T, PT]) Decode(b []byte) (PT, error) { return c.json.Decode(b) }

// Resolve implements SchemaCodec: every writer's JSON decodes by name.
func (c JSONSchemaCodec[T, PT]) Resolve(string, []int) (func([]byte) (PT, error), error) {
	return c.json.Decode, nil
}
