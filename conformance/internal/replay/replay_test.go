package replay

import (
	"bytes"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	in := `{"sequence": 1}
{"topic":"orders","key":"k1","value":{"b":2,"a":1},"timestamp":5,"headers":{"h":"x"}}
{"topic":"orders","key":"k2","value":null,"timestamp":6}

{"sequence": 2}
{"sequence": 3}
{"topic":"out","key":{"key":"k","start":0,"end":10},"value":3,"timestamp":9,"partition":1}
`
	seqs, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 3 || len(seqs[0].Records) != 2 || len(seqs[1].Records) != 0 || seqs[2].N != 3 {
		t.Fatalf("unexpected parse: %+v", seqs)
	}
	if got := Canonical(seqs[0].Records[0]); got != `{"topic":"orders","key":"k1","value":{"a":1,"b":2},"timestamp":5,"headers":{"h":"x"}}` {
		t.Errorf("canonical = %s", got)
	}
	if got := Canonical(seqs[0].Records[1]); got != `{"topic":"orders","key":"k2","value":null,"timestamp":6}` {
		t.Errorf("tombstone canonical = %s", got)
	}
	var buf bytes.Buffer
	if err := Write(&buf, seqs); err != nil {
		t.Fatal(err)
	}
	again, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range seqs {
		for j := range seqs[i].Records {
			if Canonical(seqs[i].Records[j]) != Canonical(again[i].Records[j]) {
				t.Errorf("sequence %d record %d changed in a round trip", i, j)
			}
		}
	}
}

func TestMissingValueIsNull(t *testing.T) {
	a := Record{Topic: "t", Key: []byte(`"k"`), Timestamp: 1}
	b := Record{Topic: "t", Key: []byte(`"k"`), Value: []byte("null"), Timestamp: 1}
	if Canonical(a) != Canonical(b) {
		t.Errorf("missing value and null differ: %s vs %s", Canonical(a), Canonical(b))
	}
}

func TestRecordBeforeMarker(t *testing.T) {
	if _, err := Read(strings.NewReader(`{"topic":"t","key":"k","value":1,"timestamp":0}`)); err == nil {
		t.Error("want an error for a record before the first sequence marker")
	}
}
