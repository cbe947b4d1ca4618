package protobuf

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// The protobuf format against google.golang.org/protobuf: the generated
// .proto files compile (protocompile, the compiler buf uses), and for
// every field type the generated codecs write the bytes protobuf-go's
// deterministic marshalling writes for the same message, and each reads
// the other's. Evolution runs both ways against hand-written older and
// newer versions of the message.

// compile compiles the .proto text src, named name, with the well-known
// types, and returns its message called msg.
func compile(t testing.TB, name, src, msg string) protoreflect.MessageDescriptor {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{name: src}),
	})}
	files, err := c.Compile(context.Background(), name)
	if err != nil {
		t.Fatalf("%s does not compile: %v\n%s", name, err, src)
	}
	d := files[0].Messages().ByName(protoreflect.Name(msg))
	if d == nil {
		t.Fatalf("%s has no message %s", name, msg)
	}
	return d
}

// deterministic is protobuf-go's marshalling with map keys sorted.
var deterministic = proto.MarshalOptions{Deterministic: true}

// TestGeneratedProtoMatchesProtobufGo checks that the registered files
// compile, that their first message is the record's, and that our bytes
// and protobuf-go's agree both ways for the zero and the full sample of
// every record.
func TestGeneratedProtoMatchesProtobufGo(t *testing.T) {
	everything := compile(t, "everything.proto", EverythingProto, "Everything")
	leaf := compile(t, "leaf.proto", LeafProto, "Leaf")
	compile(t, "empty.proto", EmptyProto, "Empty")
	if got := everything.FullName(); got != "io.example.pb.Everything" {
		t.Errorf("full name %s, want the schema_name io.example.pb.Everything", got)
	}
	if everything.ParentFile().Messages().Get(0) != everything {
		t.Error("the record's message is not the first of its file (message index [0])")
	}
	full, leafSample := streamgenSampleEverything(0), streamgenSampleLeaf(0)
	check(t, everything, &Everything{}, &full)
	check(t, leaf, &Leaf{}, &leafSample)
	// Every field of the full sample is set, so every field type is on the wire.
	m := dynamicpb.NewMessage(everything)
	if err := proto.Unmarshal(full.AppendProto(nil), m); err != nil {
		t.Fatal(err)
	}
	fields := everything.Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); !m.Has(fd) {
			t.Errorf("field %s is not set in the sample: its type is not cross-checked", fd.Name())
		}
	}
}

// check runs the cross-check on each record value: protobuf-go reads our
// bytes with no unknown fields and re-marshals them identically, and our
// decoder reads protobuf-go's bytes back to the value.
func check[T any, PT serdes.ProtoRecordPtr[T]](t *testing.T, d protoreflect.MessageDescriptor, values ...PT) {
	t.Helper()
	for i, v := range values {
		ours := v.AppendProto(nil)
		m := dynamicpb.NewMessage(d)
		if err := proto.Unmarshal(ours, m); err != nil {
			t.Fatalf("%s %d: protobuf-go cannot read our bytes: %v\n% x", d.Name(), i, err, ours)
		}
		if u := m.GetUnknown(); len(u) > 0 {
			t.Errorf("%s %d: protobuf-go found fields of unexpected wire types: % x", d.Name(), i, u)
		}
		theirs, err := deterministic.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%s %d: bytes differ from protobuf-go's\nours   % x\ntheirs % x", d.Name(), i, ours, theirs)
		}
		back := PT(new(T))
		if err := back.DecodeProto(theirs); err != nil {
			t.Fatalf("%s %d: cannot read protobuf-go's bytes: %v", d.Name(), i, err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Errorf("%s %d: read protobuf-go's bytes as\n%+v\nwant\n%+v", d.Name(), i, back, v)
		}
	}
}

// TestReadsWhatProtobufGoWrites reads a message protobuf-go builds from
// its JSON mapping, with negative numbers, unpacked repeated scalars and
// a message field split in two (merged, as protobuf reads it).
func TestReadsWhatProtobufGoWrites(t *testing.T) {
	d := compile(t, "everything.proto", EverythingProto, "Everything")
	m := dynamicpb.NewMessage(d)
	doc := `{"s": "héllo", "i32": -5, "i64": "-9007199254740993", "u64": "18446744073709551615",
		"f32": -0.0, "at": "2024-01-02T03:04:05.678901234Z", "took": "-1.5s", "status": "REFUNDED",
		"optI": 0, "optS": "", "optStatus": "PENDING", "listStatus": ["PAID", "PAID_LATE"], "mapAt": {"b": "1970-01-01T00:00:00Z"},
		"listI64": ["1", "-1"], "leaf": {"name": "x"}, "top": 3}`
	if err := protojson.Unmarshal([]byte(doc), m); err != nil {
		t.Fatal(err)
	}
	b, err := deterministic.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// The same list again unpacked, and a second piece of leaf: a reader
	// must accept both encodings of repeated scalars and merge messages.
	b = append(b, 0xc0, 0x01, 0x07, 0x6a, 0x00)
	var got Everything
	if err := got.DecodeProto(b); err != nil {
		t.Fatal(err)
	}
	zero, empty := int32(0), ""
	pending := StatusPending
	want := Everything{S: "héllo", I32: -5, I64: -9007199254740993, U64: 18446744073709551615,
		At: time.Date(2024, 1, 2, 3, 4, 5, 678901234, time.UTC), Took: -1500 * time.Millisecond, Status: StatusRefunded,
		OptI: &zero, OptS: &empty, OptStatus: &pending, ListStatus: []Status{StatusPaid, StatusPaidLate},
		MapAt: map[string]time.Time{"b": time.Unix(0, 0).UTC()}, ListI64: []int64{1, -1, 7}, Leaf: Leaf{Name: "x"}, Top: 3}
	got.F32 = 0 // -0.0: written (its bits are not zero), compared below
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

// TestEvolution reads across versions both ways: a newer writer's extra
// fields (every wire type, a group included) are skipped, an older
// writer's missing fields are zero, and protobuf-go, reading with the
// older or newer message, does the same with ours.
func TestEvolution(t *testing.T) {
	older := compile(t, "v1.proto", `syntax = "proto3";
package io.example.pb;
message Everything { string s = 1; int64 i64 = 5; Leaf leaf = 13; repeated Leaf list_leaf = 23; }
message Leaf { string name = 1; }`, "Everything")
	newer := compile(t, "v3.proto", EverythingProto[:strings.LastIndex(EverythingProto, "  uint64 big")]+
		"  string added = 500;\n  repeated Leaf more = 501;\n  map<string, int64> counts = 502;\n  double ratio = 503;\n  fixed32 f = 504;\n"+
		EverythingProto[strings.LastIndex(EverythingProto, "  uint64 big"):], "Everything")

	// An older writer: what it has is read, the rest is zero.
	old := dynamicpb.NewMessage(older)
	if err := protojson.Unmarshal([]byte(`{"s": "v1", "i64": "7", "leaf": {"name": "l"}, "listLeaf": [{"name": "a"}]}`), old); err != nil {
		t.Fatal(err)
	}
	b, _ := deterministic.Marshal(old)
	var got Everything
	if err := got.DecodeProto(b); err != nil {
		t.Fatal(err)
	}
	if want := (Everything{S: "v1", I64: 7, Leaf: Leaf{Name: "l"}, ListLeaf: []Leaf{{Name: "a"}}}); !reflect.DeepEqual(got, want) {
		t.Errorf("from the older writer: %+v", got)
	}

	// A newer writer: its new fields are skipped, a group too.
	nw := dynamicpb.NewMessage(newer)
	if err := protojson.Unmarshal([]byte(`{"s": "v3", "added": "x", "more": [{"name": "m"}], "counts": {"a": "1"}, "ratio": 0.5, "f": 9, "top": 1}`), nw); err != nil {
		t.Fatal(err)
	}
	b, _ = deterministic.Marshal(nw)
	b = append(b, 0xab, 0x20, 0x08, 0x01, 0xac, 0x20) // group 516 {1: 1}
	if err := got.DecodeProto(b); err != nil {
		t.Fatal(err)
	}
	if want := (Everything{S: "v3", Top: 1}); !reflect.DeepEqual(got, want) {
		t.Errorf("from the newer writer: %+v", got)
	}

	// The other way: older and newer readers read ours.
	full := streamgenSampleEverything(0)
	ours := full.AppendProto(nil)
	for _, d := range []protoreflect.MessageDescriptor{older, newer} {
		m := dynamicpb.NewMessage(d)
		if err := proto.Unmarshal(ours, m); err != nil {
			t.Fatalf("%s reader: %v", d.ParentFile().Path(), err)
		}
		if s := m.Get(d.Fields().ByName("s")).String(); s != full.S {
			t.Errorf("%s reader: s = %q", d.ParentFile().Path(), s)
		}
	}
}

// TestHostileInput checks the decoder's limits: nesting beyond MaxDepth,
// a length beyond the input (no allocation of it), field number 0, wire
// types 6 and 7, an unterminated group, and invalid UTF-8, each a decode
// error naming the field path.
func TestHostileInput(t *testing.T) {
	deep := []byte{}
	for i := 0; i < serdes.MaxDepth+2; i++ {
		deep = append([]byte{0x12}, append(serdes.AppendProtoVarint(nil, uint64(len(deep))), deep...)...)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"too deep", deep, "nested deeper than 256"},
		{"huge length", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, "decode s at offset 1: declared length exceeds"},
		{"huge packed", []byte{0xc2, 0x01, 0xff, 0xff, 0xff, 0xff, 0x07, 1}, "decode list_i64 at offset 2"},
		{"field 0", []byte{0x00, 0x01}, "field number 0"},
		{"wire type 7", []byte{0x0f}, "invalid wire type 7"},
		{"open group", []byte{0xab, 0x20, 0x08}, "unexpected end"},
		{"bad utf-8", []byte{0x6a, 0x03, 0x0a, 0x01, 0xff}, "decode leaf.name at offset 3: string is not valid UTF-8"},
		{"bad map value", []byte{0xea, 0x01, 0x06, 0x0a, 0x01, 'k', 0x12, 0x01, 0x0a}, `decode map_leaf["k"]`},
	} {
		var n Node
		var e Everything
		err := e.DecodeProto(c.b)
		if c.name == "too deep" {
			err = n.DecodeProto(c.b)
		}
		if !errors.Is(err, serdes.ErrDecode) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a decode error saying %q", c.name, err, c.want)
		}
	}
}

// TestProtobufTopicsEndToEnd runs the topology in the TestDriver, on the
// in-memory registry: the bytes on a protobuf topic are the Confluent
// wire format with message index [0] (one 0 byte) around the record's
// proto3 encoding.
func TestProtobufTopicsEndToEnd(t *testing.T) {
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := streamgenSampleEverything(0)
	if err := d.PipePbIn("k1", &in, 5); err != nil {
		t.Fatal(err)
	}
	out := d.Output("pb-out")
	if len(out) != 1 {
		t.Fatalf("pb-out: %d records, want 1", len(out))
	}
	id, err := sgregistry.Shared().SchemaID(context.Background(), "pb-out-value", serdes.Schema{Type: serdes.SchemaProtobuf, Text: EverythingProto}, false)
	if err != nil {
		t.Fatal(err)
	}
	v := out[0].Value
	if len(v) < 6 || v[0] != 0 || int(binary.BigEndian.Uint32(v[1:5])) != id || v[5] != 0 {
		t.Fatalf("out framing % x, want 00, id %d, message index 00", v[:min(len(v), 6)], id)
	}
	if want := in.AppendProto(nil); !bytes.Equal(v[6:], want) {
		t.Errorf("out body differs from the record's encoding")
	}
	keyed := d.Output("pb-by-record")
	if len(keyed) != 1 {
		t.Fatalf("pb-by-record: %d records", len(keyed))
	}
	var k Leaf
	if err := k.DecodeProto(keyed[0].Key[6:]); err != nil || k != in.Leaf {
		t.Errorf("by-record key = %+v, %v", k, err)
	}
	// A value without the framing goes to the dead-letter topic.
	if err := d.Pipe(sgstream.RawRecord{Topic: "pb-in", Key: []byte("k"), Value: []byte{0x0a, 0x01, 'x'}, Timestamp: 6}); err != nil {
		t.Fatal(err)
	}
	if n := len(d.Output("pb-dlq")); n != 1 {
		t.Errorf("pb-dlq: %d records, want 1", n)
	}
}

// TestEncodeAllocs holds that encoding into a reused buffer allocates
// nothing, nested messages, maps and lists included. (A recursive record
// as a map value, Node.by_name, is the exception: Go's escape analysis
// moves the copy of each value to the heap, as for msgpack.)
func TestEncodeAllocs(t *testing.T) {
	full := streamgenSampleEverything(0)
	full.Node = nil
	buf := full.AppendProto(nil)
	if n := testing.AllocsPerRun(100, func() { buf = full.AppendProto(buf[:0]) }); n != 0 {
		t.Errorf("AppendProto: %v allocs, want 0", n)
	}
}

// TestLongNestedMessage checks ProtoEndLen's move: nested messages of 128
// bytes and more get a length of two or more bytes.
func TestLongNestedMessage(t *testing.T) {
	d := compile(t, "everything.proto", EverythingProto, "Everything")
	for _, n := range []int{126, 127, 128, 200, 16383, 16384, 70000} {
		v := Everything{Leaf: Leaf{Name: strings.Repeat("x", n)}, Node: &Node{Children: []Node{{Value: 1}, {ByName: map[string]Node{"a": {Value: int64(n)}}}}}}
		check(t, d, &v)
	}
}

// FuzzProtobufRegistryDecode fuzzes the framed decoder of a protobuf
// side, the one a topic's bytes meet first: the Confluent header with its
// message indexes, then the proto3 decoder of a record holding every
// field type. It is hand-written so the fuzz smoke run of make test runs
// it.
func FuzzProtobufRegistryDecode(f *testing.F) {
	d, err := NewTestDriver() // binds the registry serdes
	if err != nil {
		f.Fatal(err)
	}
	d.Close()
	full := streamgenSampleEverything(0)
	framed, err := sgRegistryPbInValue.Append(nil, &full)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(framed)
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0x0a, 0x01, 'x'})
	f.Add([]byte{0, 0, 0, 0, 1, 2, 2, 4, 0x0a, 0x01, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := sgRegistryPbInValue.Decode(b)
		if err != nil {
			var de *serdes.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v is not a *serdes.DecodeError", err, err)
			}
			return
		}
		again, err := sgRegistryPbInValue.Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sgRegistryPbInValue.Decode(again); err != nil {
			t.Fatalf("re-encoded % x does not decode: %v", again, err)
		}
	})
}
