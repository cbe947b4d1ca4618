package avro

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// The avro topics of this case in the generated TestDriver, whose registry
// is the in-memory one: the bytes on the topics are the Confluent wire
// format around the generated encoding, a record of another registered
// writer schema is resolved, and what cannot be read is dead-lettered by
// the spec's policy with the reason.

func newDriver(t *testing.T) *TestDriver {
	t.Helper()
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// memoryID registers schema under subject in the in-memory registry the
// driver uses and returns its id.
func memoryID(t *testing.T, subject, schema string) int {
	t.Helper()
	id, err := sgregistry.Shared().SchemaID(context.Background(), subject, serdes.Schema{Type: serdes.SchemaAvro, Text: schema}, true)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestAvroTopicsEndToEnd(t *testing.T) {
	d := newDriver(t)
	in := streamgenSampleEverything(0)
	if err := d.PipeIn("k1", &in, 5); err != nil {
		t.Fatal(err)
	}
	out := d.Output("out")
	if len(out) != 1 {
		t.Fatalf("out: %d records, want 1", len(out))
	}
	body, err := in.AppendAvro(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := framed(memoryID(t, "out-value", EverythingAvroSchema), body); string(out[0].Value) != string(want) {
		t.Errorf("out = % x..., want the header of out-value's id, then the generated encoding", out[0].Value[:8])
	}
	raw := d.Output("statuses")
	if len(raw) != 1 {
		t.Fatalf("statuses: %d records, want 1", len(raw))
	}
	if want := framed(memoryID(t, "statuses-key", `"long"`), serdes.AppendAvroLong(nil, in.I64)); string(raw[0].Key) != string(want) {
		t.Errorf("statuses key % x, want % x", raw[0].Key, want)
	}
	if want := framed(memoryID(t, "statuses-value", StatusAvroSchema), []byte{4}); string(raw[0].Value) != string(want) {
		t.Errorf("statuses value % x, want % x (PAID_LATE is symbol 2)", raw[0].Value, want)
	}
}

func TestAvroOtherWritersAndBadRecords(t *testing.T) {
	d := newDriver(t)
	older := memoryID(t, "in-value", olderEverything)
	wrong := memoryID(t, "in-value", strings.Replace(olderEverything, `{"name":"s","type":"string"}`, `{"name":"s","type":"long"}`, 1))
	wrongBody := hambaWrite(t, strings.Replace(olderEverything, `{"name":"s","type":"string"}`, `{"name":"s","type":"long"}`, 1),
		map[string]any{"s": int64(1), "i64": 1, "f64": float32(1), "leaf": map[string]any{"name": ""}, "opt_s": nil, "list_s": []any{}, "status": "PENDING", "legacy": map[string]any{}})
	for _, v := range [][]byte{
		framed(older, hambaWrite(t, olderEverything, olderValue())), // resolved, then copied to out
		{1, 0, 0, 0, 1, 0},            // magic byte 1
		{0, 0, 0},                     // shorter than the header
		framed(0x7fffffff, []byte{0}), // an id no registry gave
		framed(wrong, wrongBody),      // a writer the app cannot read
		framed(older, []byte{0x7e}),   // s's length beyond the record
	} {
		if err := d.Pipe(sgstream.RawRecord{Topic: "in", Key: []byte("k"), Value: v, Timestamp: 1}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.ReadOut()
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0].Value, olderRead()) {
		t.Fatalf("out = %+v, %v; want the older writer's record as the reader's defaults fill it", got, err)
	}
	dlq := d.Output("dlq")
	wants := []string{"magic byte", "shorter than the 5-byte header", "schema id 2147483647", "field s: the writer's long cannot be read as the reader's string",
		"decode s at offset 5: declared length exceeds the remaining input"}
	if len(dlq) != len(wants) {
		t.Fatalf("dlq: %d records, want %d", len(dlq), len(wants))
	}
	for i, want := range wants {
		if msg := header(dlq[i], "__streams.errors.message"); !strings.Contains(msg, want) {
			t.Errorf("dlq[%d] error %q, want it to say %q", i, msg, want)
		}
	}
}

// header is r's header name.
func header(r sgstream.RawRecord, name string) string {
	for _, h := range r.Headers {
		if h.Key == name {
			return string(h.Value)
		}
	}
	return ""
}

// FuzzAvroRegistryDecode fuzzes the whole read path of an avro topic side,
// framing and resolution included, bound to the in-memory registry with
// the app's schema and an older writer's: arbitrary bytes never panic,
// every failure is a *serdes.DecodeError (so the deserialization policy
// sees it), and what decodes re-encodes to bytes that decode and
// re-encode to the same bytes.
func FuzzAvroRegistryDecode(f *testing.F) {
	d, err := NewTestDriver() // binds the registry serdes
	if err != nil {
		f.Fatal(err)
	}
	d.Close()
	ctx := context.Background()
	older, err := sgregistry.Shared().SchemaID(ctx, "in-value", serdes.Schema{Type: serdes.SchemaAvro, Text: olderEverything}, true)
	if err != nil {
		f.Fatal(err)
	}
	full := streamgenSampleEverything(0)
	own, err := sgRegistryInValue.Append(nil, &full)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(own)
	f.Add(framed(older, hambaWrite(f, olderEverything, olderValue())))
	f.Add(binary.BigEndian.AppendUint32([]byte{0}, 99))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := sgRegistryInValue.Decode(b)
		if err != nil {
			var de *serdes.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v is not a *serdes.DecodeError", err, err)
			}
			return
		}
		if v == nil {
			return // empty bytes: a tombstone
		}
		again, err := sgRegistryInValue.Append(nil, v)
		if err != nil {
			t.Fatalf("a decoded record does not encode: %v", err) // its enums came from symbols
		}
		w, err := sgRegistryInValue.Decode(again)
		if err != nil {
			t.Fatalf("re-encoded % x does not decode: %v", again, err)
		}
		if third, _ := sgRegistryInValue.Append(nil, w); !bytes.Equal(third, again) {
			t.Fatalf("re-encoding is not stable:\n% x\n% x", again, third)
		}
	})
}
