package serdes

import (
	"errors"
	"sync"
)

// AvroRecord is implemented by the pointer type of every generated record
// an avro topic side carries, directly or nested.
type AvroRecord interface {
	// AppendAvro appends the record in the Avro binary encoding of its
	// generated schema, allocating nothing beyond growing b. The only
	// error is an enum number the schema does not declare.
	AppendAvro(b []byte) ([]byte, error)
	// DecodeAvro decodes b, exactly one record written with the generated
	// schema, into the receiver. An error is a *DecodeError with the field
	// path and the offset in b.
	DecodeAvro(b []byte) error
	IsNil() bool
}

// AvroRecordPtr constrains PT to be *T for a generated record T with Avro
// methods.
type AvroRecordPtr[T any] interface {
	*T
	AvroRecord
}

// ErrAvroNil is the error of appending a nil record: Avro has no null at
// the top of a record schema (the runtime writes a nil record as a
// tombstone before it gets here).
var ErrAvroNil = errors.New("streamgen: avro: a nil record has no Avro encoding")

// AvroCodec is the SchemaCodec of the avro format for the generated record
// T, whose schema (.avsc) is a constant of the generated code. Bytes of
// another writer schema are resolved by ResolveAvro and decoded by the
// generated decoder.
type AvroCodec[T any, PT AvroRecordPtr[T]] struct {
	schema string
}

// Avro returns the avro codec of the generated record T registering
// schema, the record's generated .avsc.
func Avro[T any, PT AvroRecordPtr[T]](schema string) AvroCodec[T, PT] {
	return AvroCodec[T, PT]{schema: schema}
}

// SchemaType implements SchemaCodec.
func (AvroCodec[T, PT]) SchemaType() SchemaType { return SchemaAvro }

// Schema implements SchemaCodec.
func (c AvroCodec[T, PT]) Schema() string { return c.schema }

// MessageIndex implements SchemaCodec: Avro has none.
func (AvroCodec[T, PT]) MessageIndex() []int { return nil }

// Append implements SchemaCodec.
func (AvroCodec[T, PT]) Append(dst []byte, v PT) ([]byte, error) {
	if v == nil {
		return dst, ErrAvroNil
	}
	return v.AppendAvro(dst)
}

// Decode implements SchemaCodec.
func (AvroCodec[T, PT]) Decode(b []byte) (PT, error) {
	v := PT(new(T))
	if err := v.DecodeAvro(b); err != nil {
		return nil, err
	}
	return v, nil
}

// Resolve implements SchemaCodec with ResolveAvro.
func (c AvroCodec[T, PT]) Resolve(writer string, _ []int) (func([]byte) (PT, error), error) {
	return resolvedDecoder(writer, c.schema, c.Decode)
}

// AvroValueCodec is the SchemaCodec of a primitive or an enum on an avro
// topic side: its schema is "string", "long", … or the enum's schema.
type AvroValueCodec[T any] struct {
	schema string
	app    func([]byte, T) ([]byte, error)
	read   func([]byte) (T, []byte, error)
}

// AvroValue returns the avro codec of a primitive written with app and
// read with read (serdes.AppendAvroInt64, serdes.ReadAvroInt64), whose
// schema is schema.
func AvroValue[T any](schema string, app func([]byte, T) []byte, read func([]byte) (T, []byte, error)) AvroValueCodec[T] {
	return AvroValueCodec[T]{schema: schema, read: read,
		app: func(b []byte, v T) ([]byte, error) { return app(b, v), nil }}
}

// AvroEnum returns the avro codec of a generated enum, with its generated
// appender and reader.
func AvroEnum[T any](schema string, app func([]byte, T) ([]byte, error), read func([]byte) (T, []byte, error)) AvroValueCodec[T] {
	return AvroValueCodec[T]{schema: schema, app: app, read: read}
}

// SchemaType implements SchemaCodec.
func (AvroValueCodec[T]) SchemaType() SchemaType { return SchemaAvro }

// Schema implements SchemaCodec.
func (c AvroValueCodec[T]) Schema() string { return c.schema }

// MessageIndex implements SchemaCodec.
func (AvroValueCodec[T]) MessageIndex() []int { return nil }

// Append implements SchemaCodec.
func (c AvroValueCodec[T]) Append(dst []byte, v T) ([]byte, error) { return c.app(dst, v) }

// Decode implements SchemaCodec.
func (c AvroValueCodec[T]) Decode(b []byte) (T, error) {
	var v T
	err := DecodeAvroTop(b, func(b []byte) (rest []byte, err error) {
		v, rest, err = c.read(b)
		return rest, err
	})
	return v, err
}

// Resolve implements SchemaCodec with ResolveAvro.
func (c AvroValueCodec[T]) Resolve(writer string, _ []int) (func([]byte) (T, error), error) {
	return resolvedDecoder(writer, c.schema, c.Decode)
}

// transcodeBufs are the buffers resolved decoders transcode into: the
// decoders copy what they keep, so a buffer is reused at once.
var transcodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// resolvedDecoder is the decoder of bytes written with writer: they are
// transcoded into the encoding of reader (ResolveAvro) and decoded by
// decode, the fast path's decoder, which reads them as they are when the
// two encodings agree. An error of decode has no offset in the
// writer's bytes (it is in the transcoded ones) and keeps only its path.
func resolvedDecoder[T any](writer, reader string, decode func([]byte) (T, error)) (func([]byte) (T, error), error) {
	res, err := ResolveAvro(writer, reader)
	if err != nil {
		return nil, err
	}
	if res.Identity() {
		return decode, nil
	}
	return func(b []byte) (T, error) {
		buf := transcodeBufs.Get().(*[]byte)
		defer transcodeBufs.Put(buf)
		out, err := res.Transcode((*buf)[:0], b)
		*buf = out[:0]
		if err != nil {
			var zero T
			return zero, err
		}
		v, err := decode(out)
		if de, ok := err.(*DecodeError); ok {
			de.Offset = -1
		}
		return v, err
	}, nil
}
