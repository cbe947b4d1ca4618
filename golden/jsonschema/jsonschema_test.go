package jsonschema

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/runtime/sgrun"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// The jsonschema topics of this case in the generated TestDriver, whose
// registry is the in-memory one (sgtest.BindRegistry): the bytes on the
// topics are the Confluent wire format around the json format's JSON, the
// ids are those of the registered documents, and a value without the
// framing is dead-lettered by the spec's policy.

func newDriver(t *testing.T) *TestDriver {
	t.Helper()
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// idOf is the id the in-memory registry gave schema under subject.
func idOf(t *testing.T, subject, schema string) int {
	t.Helper()
	id, err := sgregistry.Shared().SchemaID(context.Background(), subject, serdes.Schema{Type: serdes.SchemaJSON, Text: schema}, false)
	if err != nil {
		t.Fatalf("subject %s: %v", subject, err)
	}
	return id
}

// unframe checks b's Confluent header carries id and returns the JSON.
func unframe(t *testing.T, b []byte, id int) []byte {
	t.Helper()
	if len(b) < 5 || b[0] != 0 || int(binary.BigEndian.Uint32(b[1:5])) != id {
		t.Fatalf("want magic 0 and schema id %d, got % x", id, b[:min(len(b), 5)])
	}
	return b[5:]
}

func TestJSONSchemaTopicsEndToEnd(t *testing.T) {
	d := newDriver(t)
	in := &Everything{S: "héllo", I64: 9007199254740993, Leaf: Leaf{Name: "l1"}, Status: StatusPaidLate}
	if err := d.PipeIn("k1", in, 5); err != nil {
		t.Fatal(err)
	}
	out := d.Output("out")
	if len(out) != 1 {
		t.Fatalf("out: %d records, want 1", len(out))
	}
	body := unframe(t, out[0].Value, idOf(t, "out-value", EverythingJSONSchemaEpochMillis))
	var got map[string]any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("out is not JSON after the header: %v\n%s", err, body)
	}
	if got["text"] != "héllo" || got["i64"].(json.Number) != "9007199254740993" || got["status"] != "PAID_LATE" {
		t.Errorf("out = %s", body)
	}
	if _, err := json.Number(got["d_at"].(json.Number)).Int64(); err != nil {
		t.Errorf("out d_at is not epoch millis under json_timestamps: epoch_millis: %s", body)
	}
	if idOf(t, "in-value", EverythingJSONSchema) == idOf(t, "out-value", EverythingJSONSchemaEpochMillis) {
		t.Error("the two timestamp settings registered one document")
	}
	byRec := d.Output("by-record")
	if len(byRec) != 1 {
		t.Fatalf("by-record: %d records, want 1", len(byRec))
	}
	if k := unframe(t, byRec[0].Key, idOf(t, "Leaf", LeafJSONSchema)); string(k) != `{"name":"l1"}` {
		t.Errorf("by-record key = %s, want the Leaf under RecordNameStrategy's subject Leaf", k)
	}
	unframe(t, byRec[0].Value, idOf(t, "io.example.Everything", EverythingJSONSchema))
	packed, err := d.ReadPacked()
	if err != nil || len(packed) != 1 || packed[0].Value.I64 != in.I64 || packed[0].Value.S != in.S {
		t.Errorf("packed (msgpack) = %+v, %v", packed, err)
	}
}

func TestJSONSchemaTableAndTombstone(t *testing.T) {
	d := newDriver(t)
	if err := d.PipeLeaves("a", &Leaf{Name: "x"}, 1); err != nil {
		t.Fatal(err)
	}
	if err := d.PipeLeaves("a", nil, 2); err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadLeavesJSON()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Value == nil || got[0].Value.Name != "x" || got[1].Value != nil {
		t.Errorf("leaves-json = %+v, want x then a tombstone", got)
	}
}

func TestJSONSchemaBadFramingIsDeadLettered(t *testing.T) {
	d := newDriver(t)
	for _, v := range [][]byte{
		[]byte(`{"text":"no header"}`),        // plain JSON: magic byte '{'
		{0, 0, 0},                             // shorter than the header
		{0, 0x7f, 0xff, 0xff, 0xff, '{', '}'}, // an id no registry gave
	} {
		if err := d.Pipe(sgstream.RawRecord{Topic: "in", Key: []byte("k"), Value: v, Timestamp: 1}); err != nil {
			t.Fatal(err)
		}
	}
	dlq := d.Output("dlq")
	if len(dlq) != 3 {
		t.Fatalf("dlq: %d records, want 3", len(dlq))
	}
	for i, want := range []string{"magic byte 0x7b", "shorter than the 5-byte header", "schema id 2147483647: unknown to the in-memory registry"} {
		if msg := header(dlq[i], "__streams.errors.message", "streamgen.error.message"); !strings.Contains(msg, want) {
			t.Errorf("dlq[%d] error %q, want it to say %q", i, msg, want)
		}
	}
	if len(d.Output("out")) != 0 {
		t.Error("an undecodable record reached out")
	}
}

// header is the first of names among r's headers.
func header(r sgstream.RawRecord, names ...string) string {
	for _, n := range names {
		for _, h := range r.Headers {
			if h.Key == n {
				return string(h.Value)
			}
		}
	}
	return ""
}

// TestJSONSchemaDescribesTheEncoding validates what the generated encoders
// write, for the records the topics carry with every field set, against
// the generated documents with a draft-07 validator: a document that
// refused its own records would make every Java consumer that validates
// refuse them too.
func TestJSONSchemaDescribesTheEncoding(t *testing.T) {
	full, leaf := streamgenSampleEverything(0), streamgenSampleLeaf(0)
	for _, c := range []struct {
		name, schema string
		opts         serdes.JSONOptions
		v            serdes.JSONRecord
	}{
		{"Everything rfc3339", EverythingJSONSchema, serdes.JSONOptions{}, &full},
		{"Everything epoch_millis", EverythingJSONSchemaEpochMillis, serdes.JSONOptions{Timestamps: serdes.JSONEpochMillis}, &full},
		{"Everything defaults", EverythingJSONSchema, serdes.JSONOptions{}, &Everything{}},
		{"Leaf", LeafJSONSchema, serdes.JSONOptions{}, &leaf},
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(c.schema))
		if err != nil {
			t.Fatalf("%s: the document is not JSON: %v", c.name, err)
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft7)
		comp.AssertFormat()
		if err := comp.AddResource("doc.json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := comp.Compile("doc.json")
		if err != nil {
			t.Fatalf("%s: not a valid draft-07 document: %v", c.name, err)
		}
		body := c.v.AppendJSONWith(nil, c.opts)
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: the document refuses the encoder's JSON: %v\n%s", c.name, err, body)
		}
	}
}

// FuzzJSONSchemaRegistryDecode fuzzes the whole read path of a jsonschema
// topic side, framing included, bound to the in-memory registry: arbitrary
// bytes never panic, every failure is a *serdes.DecodeError (so the
// deserialization policy sees it), and what decodes re-encodes to bytes
// that decode again.
func FuzzJSONSchemaRegistryDecode(f *testing.F) {
	d, err := NewTestDriver() // binds the registry serdes
	if err != nil {
		f.Fatal(err)
	}
	d.Close()
	full := streamgenSampleEverything(0)
	framed, err := sgRegistryInValue.Append(nil, &full)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(framed)
	f.Add([]byte{0, 0, 0, 0, 1, '{', '}'})
	f.Add([]byte{0, 0, 0, 0, 99, '{', '}'})
	f.Add([]byte(`{"text":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := sgRegistryInValue.Decode(b)
		if err != nil {
			var de *serdes.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v is not a *serdes.DecodeError", err, err)
			}
			return
		}
		again, err := sgRegistryInValue.Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sgRegistryInValue.Decode(again); err != nil {
			t.Fatalf("re-encoded %q does not decode: %v", again, err)
		}
	})
}

// TestEmbeddedAndReplayUseTheInMemoryRegistry runs the app as `run
// --embedded` and `replay` do, with no registry server: both bind the
// registry serdes to the in-memory registry and register on first use.
func TestEmbeddedAndReplayUseTheInMemoryRegistry(t *testing.T) {
	t.Setenv("STREAMGEN_REGISTRY_URL", "") // make test sets it for the real-registry tests
	line := `{"topic":"in","key":"k1","value":{"s":"embedded","i64":42,"leaf":{"name":"l"}},"timestamp":1}` + "\n"
	input := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(input, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	args := []string{"--embedded", "--state-dir", filepath.Join(t.TempDir(), "state"), "--input", input, "--print", "out", "--until-idle", "2s"}
	if code := sgrun.RunContext(ctx, NewApp(), args, &out, &errOut); code != 0 {
		t.Fatalf("run --embedded: exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), `"s":"embedded"`) || !strings.Contains(errOut.String(), "schema registry in memory") {
		t.Errorf("run --embedded printed:\n%s\nlogged:\n%s", out.String(), errOut.String())
	}
	out.Reset()
	if err := sgapp.Replay(NewApp(), strings.NewReader(line), &out, &errOut, sgapp.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"topic":"out"`) || !strings.Contains(out.String(), `"s":"embedded"`) {
		t.Errorf("replay printed:\n%s", out.String())
	}
}

// BenchmarkFraming compares a jsonschema side's encoder and decoder (the
// registry serde on the in-memory registry) with the json format's on the
// same record: the difference is the cost of the Confluent framing.
func BenchmarkFraming(b *testing.B) {
	d, err := NewTestDriver()
	if err != nil {
		b.Fatal(err)
	}
	d.Close()
	v := streamgenSampleEverything(0)
	plain := serdes.JSON[Everything](serdes.JSONOptions{})
	for _, c := range []struct {
		name  string
		serde serdes.Serde[*Everything]
	}{{"json", plain}, {"jsonschema", sgRegistryInValue}} {
		buf, _ := c.serde.Append(nil, &v)
		b.Run(c.name+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf, _ = c.serde.Append(buf[:0], &v)
			}
		})
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := c.serde.Decode(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
