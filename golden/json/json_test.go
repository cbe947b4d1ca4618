package json

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// The JSON topics of this case as the topology reads and writes them,
// through the generated TestDriver: the bytes on the topics are JSON, and
// a value that is not is dead-lettered by the spec's policy with its
// position and field path.

func newDriver(t *testing.T) *TestDriver {
	t.Helper()
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestJSONTopicsEndToEnd(t *testing.T) {
	d := newDriver(t)
	at := time.UnixMilli(1700000000123).UTC()
	in := `{"text":"héllo \"q\"\u2028","i64":9007199254740993,"u64":"18446744073709551615","at":"2023-11-14T22:13:20.123Z",` +
		`"status":"PAID_LATE","unknown":{"deep":[1,2,{"x":null}]},"userId":null,"list_leaf":[{"name":"a"},{"name":"b"}],` +
		`"old \"one\" \u00fc":"kept"}`
	if err := d.Pipe(sgstream.RawRecord{Topic: "in", Key: []byte(`"k1"`), Value: []byte(in), Timestamp: 5}); err != nil {
		t.Fatal(err)
	}
	out := d.Output("out")
	if len(out) != 1 {
		t.Fatalf("out: %d records, want 1", len(out))
	}
	var got map[string]any
	dec := json.NewDecoder(strings.NewReader(string(out[0].Value)))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("out is not JSON: %v\n%s", err, out[0].Value)
	}
	for k, want := range map[string]string{
		"text": "héllo \"q\"\u2028", "i64": "9007199254740993", "u64": "18446744073709551615",
		"at": "1700000000123", "status": "PAID_LATE", "userId": "anonymous", "d_i32": "-5",
	} {
		if g := jsonString(got[k]); g != want {
			t.Errorf("out %q = %q, want %q", k, g, want)
		}
	}
	if _, ok := got["unknown"]; ok {
		t.Errorf("unknown member was kept: %s", out[0].Value)
	}
	if !strings.Contains(string(out[0].Value), `"old \"one\" ü":"kept"`) {
		t.Errorf("json_name with escapes (read escaped, written plain) missing: %s", out[0].Value)
	}
	if !strings.Contains(string(out[0].Value), `\u2028`) {
		t.Errorf("U+2028 not escaped: %s", out[0].Value)
	}
	if string(out[0].Key) != "k1" {
		t.Errorf("out key %q: want the Kafka string serializer's k1", out[0].Key)
	}
	packed, err := d.ReadPacked()
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) != 1 || packed[0].Value.I64 != 9007199254740993 || !packed[0].Value.At.Equal(at) || packed[0].Value.Status != StatusPaidLate {
		t.Errorf("packed (msgpack) = %+v", packed)
	}
	if sc := d.Output("status-counts"); len(sc) != 1 || string(sc[0].Key) != `"PAID_LATE"` || string(sc[0].Value) != "0" {
		t.Errorf("status-counts = %+v", sc)
	}
	if ab := d.Output("at-by-id"); len(ab) != 1 || string(ab[0].Key) != "9007199254740993" || string(ab[0].Value) != "1700000000123" {
		t.Errorf("at-by-id = %+v", ab)
	}
}

// jsonString renders a decoded JSON value for comparison.
func jsonString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case nil:
		return "<absent>"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestJSONDecodeErrorsAreDeadLettered checks that a value the JSON decoder
// refuses goes through the engine's deserialization policy (dead_letter
// here) with the topic, partition, offset and the field path.
func TestJSONDecodeErrorsAreDeadLettered(t *testing.T) {
	cases := []struct{ value, msg string }{
		{`{"list_leaf":[{"name":"a"},{"name":"b"},{"name":7}]}`, "list_leaf[2].name at offset 48: want string, got number"},
		{`{"i64":1.5}`, "i64 at offset 7: want an integer, got \"1.5\""},
		{`{"u64":18446744073709551616}`, "u64 at offset 7: integer overflows uint64"},
		{`{"status":"REFUNDED"}`, "status at offset 10: enum Status has no value \"REFUNDED\""},
		{`{"map_leaf":{"x":{"name":"a"}},"text":"a"} trailing`, "decode at offset 43: unexpected data after the value"},
		{`{"text":"a\u00"}`, "text at offset 10: invalid \\u escape"},
	}
	for _, c := range cases {
		d := newDriver(t)
		// The driver numbers offsets per partition: this is the second record.
		if err := d.PipeIn("ok", &Everything{}, 1); err != nil {
			t.Fatal(err)
		}
		d.Output("out")
		if err := d.Pipe(sgstream.RawRecord{Topic: "in", Key: []byte(`"k"`), Value: []byte(c.value)}); err != nil {
			t.Fatalf("%s: the dead_letter policy should absorb the error, got %v", c.value, err)
		}
		if out := d.Output("out"); len(out) != 0 {
			t.Errorf("%s: %d records reached out", c.value, len(out))
		}
		dlq, err := d.ReadDlq()
		if err != nil || len(dlq) != 1 {
			t.Fatalf("%s: dlq = %v, %v", c.value, dlq, err)
		}
		if string(dlq[0].Value) != c.value {
			t.Errorf("dead letter value %q, want the original bytes", dlq[0].Value)
		}
		headers := map[string]string{}
		for _, h := range dlq[0].Headers {
			headers[h.Key] = string(h.Value)
		}
		if msg := headers["__streams.errors.message"]; !strings.Contains(msg, c.msg) {
			t.Errorf("%s: error message %q, want it to contain %q", c.value, msg, c.msg)
		}
		if headers["__streams.errors.topic"] != "in" || headers["__streams.errors.partition"] != "0" || headers["__streams.errors.offset"] != "1" {
			t.Errorf("%s: headers %v, want topic in, partition 0, offset 1", c.value, headers)
		}
	}
}

// TestJSONTable checks a table read from a JSON topic: its store holds the
// topic's format, and the generated store view reads it back.
func TestJSONTable(t *testing.T) {
	d := newDriver(t)
	if err := d.Pipe(sgstream.RawRecord{Topic: "leaves", Key: []byte("a"), Value: []byte(`{"name":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	st, err := d.LeavesStoreForKey("a")
	if err != nil {
		t.Fatal(err)
	}
	v, _, _, err := st.Get("a")
	if err != nil || v == nil || v.Name != "x" {
		t.Fatalf("store a = %+v, %v", v, err)
	}
	packed, err := d.ReadLeavesPacked()
	if err != nil || len(packed) != 1 || packed[0].Value.Name != "x" {
		t.Fatalf("leaves-packed = %+v, %v", packed, err)
	}
}

// TestReplayShowsWireJSON runs a replay line through the app: a JSON side
// of a topic is written and printed as its wire JSON (json_name members,
// enum names, the topic's timestamp form), a msgpack side as the replay
// format's spec-named object, and an input value that the topic's JSON
// decoder refuses is reported with its line and field path.
func TestReplayShowsWireJSON(t *testing.T) {
	in := `{"topic":"in","key":"k1","value":{"text":"a\u2028b","userId":"u1","status":"PAID","at":"2023-11-14T22:13:20.123Z","i64":9007199254740993},"timestamp":7}
{"topic":"in","key":"k2","value":{"text":7},"timestamp":8}
`
	var out, stderr strings.Builder
	if err := sgapp.Replay(NewApp(), strings.NewReader(in), &out, &stderr, sgapp.ReplayOptions{}); err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr.String())
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec struct{ Topic string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		lines[rec.Topic] += l
	}
	if want := `line 2: topic "in": value: streamgen: decode text at offset 8: want string, got number`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not contain %q", stderr.String(), want)
	}
	for topic, want := range map[string][]string{
		"out":           {`"key":"k1"`, `"text":"a\u2028b"`, `"userId":"u1"`, `"status":"PAID"`, `"at":1700000000123`, `"i64":9007199254740993`},
		"packed":        {`"user_id":"u1"`, `"status":1`, `"at":"2023-11-14T22:13:20.123Z"`},
		"status-counts": {`"key":"PAID","value":0`},
		"at-by-id":      {`"key":9007199254740993,"value":1700000000123`},
	} {
		for _, w := range want {
			if !strings.Contains(lines[topic], w) {
				t.Errorf("%s: %s\ndoes not contain %s", topic, lines[topic], w)
			}
		}
	}
}

// TestJSONSerdeTombstones checks the record serde's edges: an empty value
// and a JSON null are a nil record, as Kafka's JSON deserializers return
// null for them; a nil record encodes as null.
func TestJSONSerdeTombstones(t *testing.T) {
	s := serdes.JSON[Leaf](serdes.JSONOptions{})
	for _, in := range []string{"", "null", " null \n", "  "} {
		if v, err := s.Decode([]byte(in)); err != nil || v != nil {
			t.Errorf("Decode(%q) = %v, %v; want a nil record", in, v, err)
		}
	}
	if b, err := s.Append(nil, nil); err != nil || string(b) != "null" {
		t.Errorf("Append(nil) = %q, %v", b, err)
	}
	if _, err := s.Decode([]byte("null null")); err == nil {
		t.Error(`"null null" decoded`)
	}
	if _, err := s.Decode([]byte(`["name"]`)); err == nil || !strings.Contains(err.Error(), "want object, got array") {
		t.Errorf("array: %v", err)
	}
}
