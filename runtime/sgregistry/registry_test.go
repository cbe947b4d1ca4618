package sgregistry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// textCodec is a SchemaCodec of strings whose schema is fixed text; a
// writer schema "upper" resolves to a decoder that upper-cases, so a test
// sees which decoder the serde chose.
type textCodec struct {
	schema string
	typ    serdes.SchemaType
	index  []int
}

func (c textCodec) SchemaType() serdes.SchemaType { return c.typ }
func (c textCodec) Schema() string                { return c.schema }
func (c textCodec) MessageIndex() []int           { return c.index }
func (c textCodec) Append(dst []byte, v string) ([]byte, error) {
	return append(dst, v...), nil
}
func (c textCodec) Decode(b []byte) (string, error) { return string(b), nil }
func (c textCodec) Resolve(w string, index []int) (func([]byte) (string, error), error) {
	if w != "upper" {
		return nil, errors.New("cannot resolve " + w)
	}
	return func(b []byte) (string, error) { return strings.ToUpper(string(b)), nil }, nil
}

func TestMemoryRegistryFramesAndResolves(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	s := serdes.NewRegistrySerde[string](textCodec{schema: "v2", typ: serdes.SchemaJSON}, serdes.Subject{Topic: "t"})
	if _, err := s.Append(nil, "x"); !errors.Is(err, serdes.ErrUnbound) {
		t.Fatalf("unbound Append: %v, want ErrUnbound", err)
	}
	if err := s.BindRegistry(ctx, m, false); err == nil || !strings.Contains(err.Error(), `topic "t" value (subject "t-value")`) {
		t.Fatalf("lookup of a missing subject: %v, want an error naming topic and subject", err)
	}
	if _, err := s.Append(nil, "x"); err == nil {
		t.Fatal("a serde whose schema was not found wrote a record")
	}
	upper, _ := m.SchemaID(ctx, "other", serdes.Schema{Type: serdes.SchemaJSON, Text: "upper"}, true)
	if err := s.BindRegistry(ctx, m, true); err != nil {
		t.Fatal(err)
	}
	b, err := s.Append([]byte("pre"), "ab")
	if err != nil || string(b) != "pre\x00\x00\x00\x00\x02ab" {
		t.Fatalf("Append = %q, %v; want the prefix, magic 0, id 2, then the bare encoding", b, err)
	}
	if v, err := s.Decode(b[3:]); err != nil || v != "ab" {
		t.Errorf("own id: %q, %v", v, err)
	}
	if v, err := s.Decode([]byte{0, 0, 0, 0, byte(upper), 'a', 'b'}); err != nil || v != "AB" {
		t.Errorf("writer id %d: %q, %v; want the resolved decoder", upper, v, err)
	}
	if v, err := s.Decode(nil); err != nil || v != "" {
		t.Errorf("tombstone: %q, %v", v, err)
	}
	for in, want := range map[string]string{
		"{}":                    "magic byte 0x7b",
		"\x00\x00":              "shorter than the 5-byte header",
		"\x00\x00\x00\x00\x09x": "schema id 9: unknown to the in-memory registry",
	} {
		_, err := s.Decode([]byte(in))
		var de *serdes.DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%q) = %v, want a *serdes.DecodeError saying %q", in, err, want)
		}
	}
}

func TestProtobufIndexFraming(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	for _, c := range []struct {
		index []int
		want  string
	}{{[]int{0}, "\x00"}, {[]int{1, 2}, "\x04\x02\x04"}} {
		s := serdes.NewRegistrySerde[string](textCodec{schema: "p", typ: serdes.SchemaProtobuf, index: c.index}, serdes.Subject{Topic: "p", Key: true})
		if err := s.BindRegistry(ctx, m, true); err != nil {
			t.Fatal(err)
		}
		b, _ := s.Append(nil, "v")
		if got := string(b[5:]); got != c.want+"v" {
			t.Errorf("index %v: framed % x, want the indexes % x after the id", c.index, b, c.want)
		}
		if v, err := s.Decode(b); err != nil || v != "v" {
			t.Errorf("index %v: Decode = %q, %v", c.index, v, err)
		}
	}
}

func TestSubjectNames(t *testing.T) {
	for s, want := range map[serdes.Subject]string{
		{Topic: "orders"}:            "orders-value",
		{Topic: "orders", Key: true}: "orders-key",
		{Topic: "orders", Strategy: serdes.RecordNameStrategy, Record: "io.example.Order"}: "io.example.Order",
	} {
		if got := s.Name(); got != want {
			t.Errorf("%+v: %s, want %s", s, got, want)
		}
	}
}

func TestCredentialsNeverInErrors(t *testing.T) {
	if got := Redact("http://bob:s3cret@127.0.0.1:1/apis"); strings.Contains(got, "s3cret") {
		t.Errorf("Redact kept the password: %s", got)
	}
	cl, err := New(Config{URL: "http://bob:s3cret@127.0.0.1:1/apis/ccompat/v7"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.SchemaID(context.Background(), "s", serdes.Schema{Type: serdes.SchemaJSON, Text: "{}"}, false)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("unreachable registry: %v, want an error without the password", err)
	}
	if _, err := New(Config{URL: "ftp://bob:s3cret@x"}); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("bad URL: %v", err)
	}
}

// FuzzProtobufFraming fuzzes the header reader with Protobuf message
// indexes, the variable-length part of the wire format: no panic, and
// every failure is a *serdes.DecodeError.
func FuzzProtobufFraming(f *testing.F) {
	s := serdes.NewRegistrySerde[string](textCodec{schema: "upper", typ: serdes.SchemaProtobuf, index: []int{0}}, serdes.Subject{Topic: "p"})
	if err := s.BindRegistry(context.Background(), NewMemory(), true); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 0, 0, 1, 0, 'v'})
	f.Add([]byte{0, 0, 0, 0, 1, 4, 2, 4, 'v'})
	f.Add([]byte{0, 0, 0, 0, 1, 0x81})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := s.Decode(b); err != nil {
			var de *serdes.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v is not a *serdes.DecodeError", err, err)
			}
		}
	})
}

// TestAppendAllocatesNothing: the header is built at bind, so framing
// adds no allocation to an encoder appending into a reused buffer.
func TestAppendAllocatesNothing(t *testing.T) {
	s := serdes.NewRegistrySerde[string](textCodec{schema: "s", typ: serdes.SchemaProtobuf, index: []int{1, 2}}, serdes.Subject{Topic: "a"})
	if err := s.BindRegistry(context.Background(), NewMemory(), true); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf, _ = s.Append(buf[:0], "value") }); n != 0 {
		t.Errorf("Append: %v allocs/op, want 0", n)
	}
}
