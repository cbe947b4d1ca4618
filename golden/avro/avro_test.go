package avro

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	hamba "github.com/hamba/avro/v2"

	"github.com/streamgen/streamgen/serdes"
)

// Schema resolution into the generated types: records another library
// wrote (hamba/avro/v2, as a Go service of the topic would) with an older
// or a newer version of Everything's schema are read by the generated
// decoder through serdes.AvroCodec.Resolve, as the registry serde does
// for a writer schema id it has not seen.

// olderEverything is the first version of the record a Java service
// might have registered: a few fields, narrower types, a symbol fewer,
// and a field it later dropped.
const olderEverything = `{"type":"record","name":"Everything","namespace":"io.example","fields":[
	{"name":"s","type":"string"},
	{"name":"i64","type":"int"},
	{"name":"f64","type":"float"},
	{"name":"leaf","type":{"type":"record","name":"Leaf","fields":[{"name":"name","type":"string"}]}},
	{"name":"opt_s","type":["null","string"],"default":null},
	{"name":"list_s","type":{"type":"array","items":"string"}},
	{"name":"status","type":{"type":"enum","name":"Status","symbols":["PENDING","PAID_LATE"]}},
	{"name":"legacy","type":{"type":"map","values":"long"}}]}`

// olderValue is a record of olderEverything, and olderRead what the
// generated reader reads from it.
func olderValue() map[string]any {
	return map[string]any{"s": "v1", "i64": 42, "f64": float32(0.5), "leaf": map[string]any{"name": "l"}, "opt_s": "o",
		"list_s": []any{"a", "b"}, "status": "PAID_LATE", "legacy": map[string]any{"x": int64(1)}}
}

func olderRead() *Everything {
	o := "o"
	return &Everything{S: "v1", I64: 42, F64: 0.5, Leaf: Leaf{Name: "l"}, OptS: &o, ListS: []string{"a", "b"}, Status: StatusPaidLate,
		// The reader's defaults (streamgen.yaml) for what the writer
		// lacks; a timestamp's is 0, the epoch, as Java reads it.
		At: time.UnixMilli(0).UTC(), UserID: "anonymous", DI32: -5, DU64: math.MaxUint64, DF32: 1.5, DBool: true,
		DAt: time.UnixMilli(1700000000000).UTC(), DTook: 1500 * time.Millisecond}
}

// newerEverything is Everything's generated schema as a newer writer
// evolved it: fields added of every kind (first, in the middle, last), s
// moved to the end, and a symbol added to Status.
func newerEverything(t testing.TB) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(EverythingAvroSchema))
	dec.UseNumber() // keeps d_u64's default -1 exact
	var s map[string]any
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	fields := s["fields"].([]any)
	var out []any
	added := func(name, typ string) map[string]any {
		var f map[string]any
		if err := json.Unmarshal([]byte(`{"name":"`+name+`","type":`+typ+`}`), &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	out = append(out, added("added_first", `{"type":"record","name":"Audit","fields":[{"name":"by","type":"string"},{"name":"tags","type":{"type":"array","items":"string"}}]}`))
	var sField any
	for _, f := range fields {
		fm := f.(map[string]any)
		switch fm["name"] {
		case "s":
			sField = f
			continue
		case "status":
			enum := fm["type"].(map[string]any)
			enum["symbols"] = append(enum["symbols"].([]any), "REFUNDED")
		case "leaf":
			out = append(out, added("added_middle", `{"type":"map","values":["null","Audit",{"type":"fixed","name":"Id","size":4}]}`))
		}
		out = append(out, f)
	}
	out = append(out, added("added_last", `["null","long","string"]`), sField)
	s["fields"] = out
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hambaWrite encodes v with schema as hamba does.
func hambaWrite(t testing.TB, schema string, v any) []byte {
	t.Helper()
	sc, err := hamba.ParseWithCache(schema, "", &hamba.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := hamba.Config{}.Freeze().Marshal(sc, v)
	if err != nil {
		t.Fatalf("hamba encode: %v", err)
	}
	return b
}

// newerValue is the sample record as hamba reads the generated encoding,
// with values for newerEverything's additions and the new symbol.
func newerValue(t testing.TB) map[string]any {
	t.Helper()
	sample := streamgenSampleEverything(0)
	b, err := sample.AppendAvro(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := hamba.Unmarshal(hamba.MustParse(EverythingAvroSchema), b, &v); err != nil {
		t.Fatalf("hamba reads the generated encoding: %v", err)
	}
	v["added_first"] = map[string]any{"by": "java", "tags": []any{"x", "y"}}
	v["added_middle"] = map[string]any{"a": map[string]any{"io.example.Audit": map[string]any{"by": "b", "tags": []any{}}},
		"n": nil, "f": map[string]any{"io.example.Id": [4]byte{1, 2, 3, 4}}}
	v["added_last"] = map[string]any{"string": "late"}
	v["status"] = "REFUNDED"
	return v
}

func resolvedReader(t testing.TB, writer string) func([]byte) (*Everything, error) {
	t.Helper()
	read, err := serdes.Avro[Everything](EverythingAvroSchema).Resolve(writer, nil)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return read
}

func TestAvroReadsAnOlderWriter(t *testing.T) {
	read := resolvedReader(t, olderEverything)
	got, err := read(hambaWrite(t, olderEverything, olderValue()))
	if err != nil {
		t.Fatal(err)
	}
	if want := olderRead(); !reflect.DeepEqual(got, want) {
		t.Errorf("read\n %+v\nwant\n %+v", *got, *want)
	}
	// A field the writer lacks takes the reader's field default (status:
	// PAID), not the enum's (PENDING).
	oldest := `{"type":"record","name":"Everything","namespace":"io.example","fields":[{"name":"s","type":"string"}]}`
	got, err = resolvedReader(t, oldest)(hambaWrite(t, oldest, map[string]any{"s": "v0"}))
	if err != nil || got.S != "v0" || got.Status != StatusPaid || got.UserID != "anonymous" {
		t.Errorf("oldest writer: %+v, %v", got, err)
	}
}

func TestAvroReadsANewerWriter(t *testing.T) {
	newer := newerEverything(t)
	read := resolvedReader(t, newer)
	b := hambaWrite(t, newer, newerValue(t))
	got, err := read(b)
	if err != nil {
		t.Fatal(err)
	}
	want := streamgenSampleEverything(0)
	want.Status = StatusPending // REFUNDED is not the reader's: the enum's default
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("read\n %+v\nwant\n %+v", *got, want)
	}
	// The plan is compiled once and serves every record.
	for i := 0; i < 3; i++ {
		if again, err := read(b); err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("record %d read with the same plan: %v", i, err)
		}
	}
	// Every cut of the writer's bytes is a decode error, never a panic.
	for n := 0; n < len(b); n++ {
		if _, err := read(b[:n]); !errors.Is(err, serdes.ErrDecode) {
			t.Fatalf("cut to %d of %d bytes: %v", n, len(b), err)
		}
	}
}

func TestAvroResolveErrorsNameTheField(t *testing.T) {
	// A writer whose field the reader cannot read is refused when the
	// schema id is first met, naming the field.
	bad := strings.Replace(olderEverything, `{"name":"s","type":"string"}`, `{"name":"s","type":"long"}`, 1)
	if _, err := serdes.Avro[Everything](EverythingAvroSchema).Resolve(bad, nil); err == nil ||
		err.Error() != "field s: the writer's long cannot be read as the reader's string" {
		t.Errorf("a long read as a string: %v", err)
	}
	// A record that breaks off names the field path and the offset in the
	// writer's bytes.
	b := hambaWrite(t, olderEverything, olderValue())
	at := bytes.Index(b, []byte("\x02l\x02\x02o")) // leaf.name, then opt_s
	cut := append(b[:at:at], 0x7e)                 // leaf.name's length: 63
	_, err := resolvedReader(t, olderEverything)(cut)
	var de *serdes.DecodeError
	if !errors.As(err, &de) || de.Path != "leaf.name" || de.Offset != at {
		t.Errorf("cut in leaf.name: %v, want path leaf.name at offset %d", err, at)
	}
}

// TestAvroEncodingMatchesHamba checks the generated encoder byte for byte
// against hamba's encoding of the same record (maps cut to one entry, as
// hamba writes a Go map's entries in no fixed order; hamba's arrays and
// maps are blocks with negative counts and byte sizes, rewritten to plain
// counts by an identity transcode before comparing), and the generated
// decoder reading hamba's own blocks directly.
func TestAvroEncodingMatchesHamba(t *testing.T) {
	v := streamgenSampleEverything(0)
	delete(v.OptMap, "eu")
	delete(v.MapS, "eu")
	delete(v.MapLeaf, "eu")
	delete(v.MapList, "eu")
	delete(v.MapOptLeaf, "eu")
	for _, m := range v.ListMap {
		delete(m, "eu")
	}
	cutNode(v.Node)
	ours, err := v.AppendAvro(nil)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := hamba.Unmarshal(hamba.MustParse(EverythingAvroSchema), ours, &generic); err != nil {
		t.Fatal(err)
	}
	theirs := hambaWrite(t, EverythingAvroSchema, generic)
	var direct Everything
	if err := direct.DecodeAvro(theirs); err != nil || !reflect.DeepEqual(&direct, &v) {
		t.Fatalf("the generated decoder reads hamba's encoding as %+v, %v", direct, err)
	}
	id, err := serdes.ResolveAvro(EverythingAvroSchema, EverythingAvroSchema)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := id.Transcode(nil, theirs)
	if err != nil || !bytes.Equal(plain, ours) {
		t.Errorf("generated encoding\n% x\nhamba's (plain blocks)\n% x (%v)", ours, plain, err)
	}
}

// cutNode leaves one entry in every by_name map of n's tree.
func cutNode(n *Node) {
	if n == nil {
		return
	}
	delete(n.ByName, "eu")
	cutNode(n.Next)
	for i := range n.Children {
		cutNode(&n.Children[i])
	}
	for k, c := range n.ByName {
		cutNode(&c)
		n.ByName[k] = c
	}
}

// BenchmarkAvroDecode reads the sample record written with the app's own
// schema (the generated decoder alone) and with a newer writer's (the
// resolution plan's transcode, then the generated decoder).
func BenchmarkAvroDecode(b *testing.B) {
	sample := streamgenSampleEverything(0)
	own, err := sample.AppendAvro(nil)
	if err != nil {
		b.Fatal(err)
	}
	codec := serdes.Avro[Everything](EverythingAvroSchema)
	newer := newerEverything(b)
	fromNewer := hambaWrite(b, newer, newerValue(b))
	read := resolvedReader(b, newer)
	b.Run("own", func(b *testing.B) {
		b.SetBytes(int64(len(own)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := codec.Decode(own); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("newer-writer", func(b *testing.B) {
		b.SetBytes(int64(len(fromNewer)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := read(fromNewer); err != nil {
				b.Fatal(err)
			}
		}
	})
}
