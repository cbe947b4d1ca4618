package serdes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The registry formats (avro, protobuf, jsonschema) write the Confluent
// wire format: a magic byte 0, the 4-byte big-endian schema id, for
// Protobuf the message indexes, then the bare encoding of a SchemaCodec.
// RegistrySerde adds and strips that framing. It learns its schema id
// when the runtime binds it to a registry at start (BindRegistry), so the
// hot path appends a constant header and never talks to the registry.
// serdes is a standard-library-only leaf, so the registry client and the
// framing itself are the Registry's (runtime/sgregistry, on franz-go's
// pkg/sr).

// Schema is a schema as a registry stores it.
type Schema struct {
	Type SchemaType
	Text string
}

// Registry is a schema registry as a registry serde uses it.
type Registry interface {
	// SchemaID returns the id of s under subject: looked up, or registered
	// when register is set. A subject without s is an error that names
	// the subject.
	SchemaID(ctx context.Context, subject string, s Schema, register bool) (int, error)
	// SchemaByID returns the schema registered with id.
	SchemaByID(ctx context.Context, id int) (Schema, error)
	// AppendHeader appends the wire-format header of id (and the
	// Protobuf message index, nil for the other formats).
	AppendHeader(dst []byte, id int, index []int) []byte
	// CutHeader splits b into its schema id, its message index (read only
	// when protobuf is set) and the bare encoding after them.
	CutHeader(b []byte, protobuf bool) (id int, index []int, rest []byte, err error)
}

// SubjectStrategy is how a topic side's registry subject is named.
type SubjectStrategy uint8

const (
	// TopicNameStrategy is <topic>-key or <topic>-value (Confluent's default).
	TopicNameStrategy SubjectStrategy = iota
	// RecordNameStrategy is the record's full schema name (schema_name),
	// so one record type shares its subject across topics.
	RecordNameStrategy
)

// Subject names the registry subject of one topic side.
type Subject struct {
	Topic string
	Key   bool
	// Strategy names the subject; Record is the full schema name
	// RecordNameStrategy uses.
	Strategy SubjectStrategy
	Record   string
}

// Name is the subject's name in the registry.
func (s Subject) Name() string {
	if s.Strategy == RecordNameStrategy {
		return s.Record
	}
	if s.Key {
		return s.Topic + "-key"
	}
	return s.Topic + "-value"
}

// side is "key" or "value".
func (s Subject) side() string {
	if s.Key {
		return "key"
	}
	return "value"
}

// RegistryBinder is a serde the runtime binds to a schema registry before
// records flow: every registry serde of a generated app (sgapp.App.Registry).
type RegistryBinder interface {
	// Subject is the subject the serde's schema lives under.
	Subject() Subject
	// BindRegistry looks the serde's schema up under its subject, or
	// registers it when register is set, and from then on frames records
	// with its id and resolves other writers' ids through r. The error
	// names the topic side and the subject; after one the serde still
	// reads (writer schemas by id) but refuses to write, which is what a
	// consumer of a topic whose subject lacks the app's schema needs.
	BindRegistry(ctx context.Context, r Registry, register bool) error
}

// RegistrySerde is the serde of a topic side in a registry format: a
// SchemaCodec in the Confluent wire format. It is safe for concurrent use
// by every task of the app; generated code holds one per topic side.
type RegistrySerde[T any] struct {
	codec   SchemaCodec[T]
	subject Subject
	bound   atomic.Pointer[registryBinding[T]]
}

// registryBinding is what binding learnt: the registry, the header of the
// own schema, and the decoders of writer schemas by id.
type registryBinding[T any] struct {
	reg     Registry
	id      int
	header  []byte
	readers sync.Map // readerKey → func([]byte) (T, error)
	// writeErr is why the serde cannot write (its schema was not found).
	writeErr error
}

// NewRegistrySerde returns the registry serde of codec on the topic side
// subject names. It writes nothing until bound (BindRegistry).
func NewRegistrySerde[T any](codec SchemaCodec[T], subject Subject) *RegistrySerde[T] {
	return &RegistrySerde[T]{codec: codec, subject: subject}
}

var (
	_ Serde[int]     = (*RegistrySerde[int])(nil)
	_ RegistryBinder = (*RegistrySerde[int])(nil)
)

// String describes the topic side and its subject, for errors.
func (s Subject) String() string {
	return "topic " + strconv.Quote(s.Topic) + " " + s.side() + " (subject " + strconv.Quote(s.Name()) + ")"
}

// Subject implements RegistryBinder.
func (s *RegistrySerde[T]) Subject() Subject { return s.subject }

// Codec is the codec the serde frames.
func (s *RegistrySerde[T]) Codec() SchemaCodec[T] { return s.codec }

// BindRegistry implements RegistryBinder. Binding again (a second test
// driver in the process, a registry restarted) replaces the binding.
func (s *RegistrySerde[T]) BindRegistry(ctx context.Context, r Registry, register bool) error {
	sc := Schema{Type: s.codec.SchemaType(), Text: s.codec.Schema()}
	id, err := r.SchemaID(ctx, s.subject.Name(), sc, register)
	if err != nil {
		err = fmt.Errorf("%s: %w", s.subject, err)
		s.bound.Store(&registryBinding[T]{reg: r, id: -1, writeErr: err})
		return err
	}
	s.bound.Store(&registryBinding[T]{reg: r, id: id, header: r.AppendHeader(nil, id, s.codec.MessageIndex())})
	return nil
}

// ErrUnbound is the error of a registry serde used before the runtime
// bound it to a registry: a bug in the code driving the topology.
var ErrUnbound = fmt.Errorf("registry serde used before it was bound to a schema registry")

// Append appends the wire-format header and the bare encoding of v.
func (s *RegistrySerde[T]) Append(dst []byte, v T) ([]byte, error) {
	b := s.bound.Load()
	if b == nil {
		return dst, fmt.Errorf("%s: %w", s.subject, ErrUnbound)
	}
	if b.writeErr != nil {
		return dst, b.writeErr
	}
	return s.codec.Append(append(dst, b.header...), v)
}

// Decode strips the header and decodes with the writer's schema: the
// codec's own, or one fetched by id and resolved against it (cached per
// id). Empty bytes decode to the zero value (a tombstone), as Confluent's
// deserializers return null for them. Every error is a *DecodeError, so
// the deserialization policy handles a bad magic byte, an unknown id or
// an unreachable registry like any other undecodable record.
func (s *RegistrySerde[T]) Decode(data []byte) (T, error) {
	var zero T
	if len(data) == 0 {
		return zero, nil
	}
	b := s.bound.Load()
	if b == nil {
		return zero, &DecodeError{Offset: -1, Msg: s.subject.String() + ": " + ErrUnbound.Error()}
	}
	id, index, rest, err := b.reg.CutHeader(data, s.codec.SchemaType() == SchemaProtobuf)
	if err != nil {
		return zero, &DecodeError{Offset: 0, Msg: "schema registry wire format: " + err.Error()}
	}
	var v T
	if id == b.id && slices.Equal(index, s.codec.MessageIndex()) {
		v, err = s.codec.Decode(rest) // the own schema: no lookup, no method value to allocate
	} else {
		read, rerr := s.reader(b, id, index)
		if rerr != nil {
			return zero, &DecodeError{Offset: 1, Msg: "schema id " + strconv.Itoa(id) + ": " + rerr.Error()}
		}
		v, err = read(rest)
	}
	if err != nil {
		return zero, shiftDecodeError(err, len(data)-len(rest))
	}
	return v, nil
}

// fetchTimeout bounds the registry request of a decoder meeting a new id.
const fetchTimeout = 10 * time.Second

// readerKey identifies a writer: its schema id and, for a message of a
// .proto file other than the first, its message index.
type readerKey struct {
	id    int
	index string
}

// reader returns the decoder of another writer schema id (message
// index), fetched and resolved the first time and cached. Failures are not cached: a registry that was
// unreachable may answer the next record.
func (s *RegistrySerde[T]) reader(b *registryBinding[T], id int, index []int) (func([]byte) (T, error), error) {
	key := readerKey{id: id}
	if len(index) > 0 && !(len(index) == 1 && index[0] == 0) {
		key.index = fmt.Sprint(index)
	}
	if r, ok := b.readers.Load(key); ok {
		return r.(func([]byte) (T, error)), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	w, err := b.reg.SchemaByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if w.Type != s.codec.SchemaType() {
		return nil, fmt.Errorf("the writer's schema is %s, this topic side reads %s", w.Type, s.codec.SchemaType())
	}
	read := s.codec.Decode
	if w.Text != s.codec.Schema() || !slices.Equal(index, s.codec.MessageIndex()) {
		if read, err = s.codec.Resolve(w.Text, index); err != nil {
			return nil, fmt.Errorf("the writer's schema cannot be read as this topic side's: %w", err)
		}
	}
	b.readers.Store(key, read)
	return read, nil
}

// shiftDecodeError moves the offset of a decode error of the bare
// encoding past the n header bytes, so it counts from the record's start;
// an error of another type becomes a *DecodeError, so the
// deserialization policy sees it.
func shiftDecodeError(err error, n int) error {
	de, ok := err.(*DecodeError)
	if !ok {
		return &DecodeError{Offset: -1, Msg: err.Error()}
	}
	c := *de
	if c.Offset >= 0 {
		c.Offset += n
	}
	return &c
}
