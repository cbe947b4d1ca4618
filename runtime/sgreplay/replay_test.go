package sgreplay

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

type codecs []TopicCodec

func (cs codecs) Codec(topic string) TopicCodec {
	for _, c := range cs {
		if c.Name() == topic {
			return c
		}
	}
	return nil
}

func (cs codecs) TopicNames() []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return out
}

var testCodecs = codecs{Topic("in", serdes.String, serdes.Int64), TimeWindowedTopic("w", serdes.String, serdes.Int64, 10*time.Second)}

func TestParse(t *testing.T) {
	rec, seq, err := Parse([]byte(`{"topic": "in", "key": "k", "value": 7, "timestamp": 5, "partition": 1, "headers": {"b": "2", "a": "1"}}`), testCodecs)
	if err != nil || seq != nil {
		t.Fatalf("Parse: %v %v", err, seq)
	}
	if rec.Topic != "in" || string(rec.Key) != "k" || !bytes.Equal(rec.Value, []byte{0, 0, 0, 0, 0, 0, 0, 7}) || rec.Timestamp != 5 || rec.Partition != 1 {
		t.Errorf("record = %+v", rec)
	}
	if len(rec.Headers) != 2 || rec.Headers[0].Key != "a" || rec.Headers[1].Key != "b" {
		t.Errorf("headers not sorted: %+v", rec.Headers)
	}
	if rec, _, err := Parse([]byte(`{"topic": "in", "key": null, "value": null, "timestamp": 1}`), testCodecs); err != nil || rec.Key != nil || rec.Value != nil || rec.Partition != -1 {
		t.Errorf("nulls: %+v %v", rec, err)
	}
	if _, m, err := Parse([]byte(`{"sequence": 4}`), testCodecs); err != nil || m == nil || m.Sequence == nil || *m.Sequence != 4 || m.AdvanceWallClock != nil {
		t.Errorf("sequence marker: %+v %v", m, err)
	}
	if _, m, err := Parse([]byte(`{"advance_wall_clock": 1500}`), testCodecs); err != nil || m == nil || m.AdvanceWallClock == nil || *m.AdvanceWallClock != 1500 || m.Sequence != nil {
		t.Errorf("wall-clock advance: %+v %v", m, err)
	}
	for line, want := range map[string]string{
		`{"topic": "in", "key": "k", "value": 1}`:                                  `missing "timestamp"`,
		`{"key": "k", "value": 1, "timestamp": 1}`:                                 `missing "topic"`,
		`{"topic": "x", "key": "k", "value": 1, "timestamp": 1}`:                   `topic "x" is not declared in the spec (declared: in, w)`,
		`{"topic": "in", "key": "k", "value": "one", "timestamp": 1}`:              `topic "in": value:`,
		`{"topic": "in", "key": "k", "value": 1, "timestamp": 1, "x": 1}`:          `unknown field "x"`,
		`{"topic": "in", "key": "k", "value": 1, "timestamp": 1} {}`:               `more than one JSON value`,
		`{"sequence": 1, "topic": "in"}`:                                           `a sequence marker carries no record fields`,
		`{"advance_wall_clock": 5, "timestamp": 1}`:                                `a wall-clock advance carries no record fields`,
		`{"advance_wall_clock": 5, "partition": 0}`:                                `a wall-clock advance carries no record fields`,
		`{"advance_wall_clock": -1}`:                                               `advance_wall_clock -1 is negative`,
		`{"advance_wall_clock": "1s"}`:                                             `not a replay record`,
		`{"advance_wall_clock": 1.5}`:                                              `not a replay record`,
		`{"advance_wall_clock": 1, "sequence": 2}`:                                 `not both`,
		`{"topic": "in", "key": "k", "value": 1, "timestamp": 1, "partition": -2}`: `partition -2 is negative`,
	} {
		if _, _, err := Parse([]byte(line), testCodecs); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", line, err, want)
		}
	}
}

func TestWindowedCodecRoundTrip(t *testing.T) {
	for _, session := range []bool{false, true} {
		c := TimeWindowedTopic("w", serdes.String, serdes.Int64, 10*time.Second)
		if session {
			c = SessionWindowedTopic("w", serdes.String, serdes.Int64)
		}
		key := []byte(`{"key":"k","start":10000,"end":20000}`)
		k, v, err := c.EncodeJSON(key, []byte("3"))
		if err != nil {
			t.Fatal(err)
		}
		gotKey, gotValue, err := c.DecodeJSON(k, v)
		if err != nil {
			t.Fatal(err)
		}
		if string(gotKey) != string(key) || string(gotValue) != "3" {
			t.Errorf("session=%v: round trip gave %s %s", session, gotKey, gotValue)
		}
	}
	if _, _, err := TimeWindowedTopic("w", serdes.String, serdes.Int64, time.Second).DecodeJSON([]byte{1, 2}, nil); err == nil {
		t.Error("a key shorter than its window suffix decoded without error")
	}
}

func TestFormat(t *testing.T) {
	p := int32(2)
	b, err := Format(testCodecs[0], "in", &p, []byte("k"), nil, 9, []Header{{Key: "h", Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"topic":"in","key":"k","value":null,"timestamp":9,"partition":2,"headers":{"h":"v"}}`; string(b) != want {
		t.Errorf("Format = %s, want %s", b, want)
	}
}

// FuzzParse feeds arbitrary lines to the replay reader: it reports errors
// and never panics, and whatever it accepts formats back without error.
func FuzzParse(f *testing.F) {
	f.Add(`{"topic": "in", "key": "a", "value": 5, "timestamp": 5}`)
	f.Add(`{"sequence": 3}`)
	f.Add(`{"topic": "w", "key": {"key": "a", "start": 0, "end": 10000}, "value": null, "timestamp": -1, "partition": 7, "headers": {"a": "b"}}`)
	f.Add(`{"topic": "in", "key": 5, "value": [1], "timestamp": 1.5}`)
	f.Fuzz(func(t *testing.T, line string) {
		rec, seq, err := Parse([]byte(line), testCodecs)
		if err != nil || seq != nil {
			return
		}
		if _, err := Format(testCodecs.Codec(rec.Topic), rec.Topic, nil, rec.Key, rec.Value, rec.Timestamp, rec.Headers); err != nil {
			t.Fatalf("accepted line %q does not format back: %v", line, err)
		}
	})
}
