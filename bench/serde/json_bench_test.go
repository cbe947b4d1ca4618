package serde

import (
	"encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"
)

// The json format on the same record, side by side with the two JSON
// libraries Go services use: encoding/json and goccy/go-json, both by
// reflection over the json tags of the generated Order (the spec field
// names), so all three write the same members. Run them in one process:
//
//	go test -run '^$' -bench JSON ./bench/serde/
func jsonCodecs() []codec {
	o := sampleOrder()
	return []codec{
		{"streamgen",
			func(buf []byte) ([]byte, error) { return o.AppendJSON(buf[:0]), nil },
			func(buf []byte) error { return new(Order).DecodeJSON(buf) }},
		{"encodingjson",
			func([]byte) ([]byte, error) { return json.Marshal(o) },
			func(buf []byte) error { return json.Unmarshal(buf, new(Order)) }},
		{"goccy",
			func([]byte) ([]byte, error) { return gojson.Marshal(o) },
			func(buf []byte) error { return gojson.Unmarshal(buf, new(Order)) }},
	}
}

func BenchmarkJSONRoundTrip(b *testing.B) { runAll(b, jsonCodecs(), true, true) }
func BenchmarkJSONEncode(b *testing.B)    { runAll(b, jsonCodecs(), true, false) }
func BenchmarkJSONDecode(b *testing.B)    { runAll(b, jsonCodecs(), false, true) }

// TestJSONEncodeAllocs holds the acceptance criterion that JSON encoding
// into a reused buffer allocates nothing.
func TestJSONEncodeAllocs(t *testing.T) {
	o := sampleOrder()
	buf := o.AppendJSON(nil)
	if n := testing.AllocsPerRun(100, func() { buf = o.AppendJSON(buf[:0]) }); n != 0 {
		t.Errorf("AppendJSON: %v allocs, want 0", n)
	}
}

// TestJSONReadableByPeers checks that what streamgen writes is what the
// peers read: encoding/json decodes it into the same record (enums aside:
// the peers read the number, streamgen writes the name, so the status is
// compared by hand).
func TestJSONReadableByPeers(t *testing.T) {
	o := sampleOrder()
	b := o.AppendJSON(nil)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("encoding/json cannot read %s: %v", b, err)
	}
	if string(m["status"]) != `"PAID"` {
		t.Errorf("status %s, want \"PAID\"", m["status"])
	}
	delete(m, "status")
	rest, _ := json.Marshal(m)
	var got Order
	if err := json.Unmarshal(rest, &got); err != nil {
		t.Fatal(err)
	}
	got.Status = o.Status
	if b2 := got.AppendJSON(nil); string(b2) != string(b) {
		t.Errorf("encoding/json read a different record:\n%s\n%s", b, b2)
	}
	// And the other way: streamgen reads what encoding/json writes, the
	// numeric enum included.
	std, _ := json.Marshal(o)
	var back Order
	if err := back.DecodeJSON(std); err != nil {
		t.Fatalf("DecodeJSON(%s): %v", std, err)
	}
	if b3 := back.AppendJSON(nil); string(b3) != string(b) {
		t.Errorf("streamgen read encoding/json's output differently:\n%s\n%s", b, b3)
	}
}
