package sgrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/serdes"
)

func toolApp() *sgapp.App {
	return &sgapp.App{ID: "demo", Build: countBuild("in", "out"),
		Topics: []sgreplay.TopicCodec{sgreplay.Topic("in", serdes.String, serdes.Int64)}}
}

func TestParseFrom(t *testing.T) {
	for _, c := range []struct {
		in   string
		want fromSpec
	}{
		{"start", fromSpec{kind: fromStart}},
		{"end", fromSpec{kind: fromEnd}},
		{"offset:0", fromSpec{kind: fromOffset}},
		{"offset:42", fromSpec{kind: fromOffset, n: 42}},
		{"timestamp:1772445600000", fromSpec{kind: fromTimestamp, n: 1772445600000}},
		{"timestamp:2026-03-02T10:00:00Z", fromSpec{kind: fromTimestamp, n: 1772445600000}},
		{"timestamp:2026-03-02T11:00:00.5+01:00", fromSpec{kind: fromTimestamp, n: 1772445600500}},
		{"timestamp:-5", fromSpec{kind: fromTimestamp, n: -5}},
	} {
		got, err := parseFrom(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseFrom(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "beginning", "offset:", "offset:-1", "offset:1.5", "timestamp:", "timestamp:yesterday",
		"timestamp:2026-03-02", "latest:3"} {
		if got, err := parseFrom(in); err == nil {
			t.Errorf("parseFrom(%q) = %+v, want an error", in, got)
		}
	}
}

func TestConsumeFlags(t *testing.T) {
	app := toolApp()
	f, err := parseConsumeFlags(app, []string{"--brokers", "b:9092", "--from", "offset:3", "--max", "5", "in"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !f.readCommitted || f.from != (fromSpec{kind: fromOffset, n: 3}) || f.max != 5 || len(f.topics) != 1 || f.brokers != "b:9092" {
		t.Errorf("flags = %+v", f)
	}
	if f, err = parseConsumeFlags(app, []string{"--brokers", "b", "--raw", "--isolation", "read_uncommitted", "undeclared"}, io.Discard); err != nil || f.readCommitted {
		t.Errorf("--raw on an undeclared topic with read_uncommitted: %+v, %v", f, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--brokers", "b"}, "name at least one topic"},
		{[]string{"in"}, "no brokers: set --brokers or STREAMGEN_BROKERS"},
		{[]string{"--brokers", "b", "--from", "yesterday", "in"}, `--from "yesterday"`},
		{[]string{"--brokers", "b", "--isolation", "dirty", "in"}, `--isolation "dirty"`},
		{[]string{"--brokers", "b", "--max", "-1", "in"}, "must not be negative"},
		{[]string{"--brokers", "b", "out"}, `topic "out" is not declared in the spec (declared: in); --raw`},
	} {
		var stderr bytes.Buffer
		code := Consume(app, c.args, nil, io.Discard, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("consume %v: exit %d, stderr %q, want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
	if code := Consume(app, []string{"-h"}, nil, io.Discard, io.Discard); code != 0 {
		t.Errorf("consume -h: exit %d", code)
	}
}

func TestProduceFlags(t *testing.T) {
	app := toolApp()
	f, err := parseProduceFlags(app, []string{"--brokers", "b", "--raw", "in.jsonl"}, io.Discard)
	if err != nil || !f.raw || f.file != "in.jsonl" {
		t.Errorf("flags = %+v, %v", f, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "streamgen: produce: no brokers"},
		{[]string{"--brokers", "b", "a", "b"}, "want at most one file"},
	} {
		var stderr bytes.Buffer
		if code := Produce(app, c.args, nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("produce %v: exit %d, stderr %q, want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
	var stderr bytes.Buffer
	if code := Produce(app, []string{"--brokers", "127.0.0.1:1", "/nonexistent/in.jsonl"}, nil, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "no such file") {
		t.Errorf("produce of a missing file: exit %d, stderr %q", code, stderr.String())
	}
}

// TestRawCodec checks the --raw form: standard base64 both ways, null for
// nil, "" for empty bytes (which is not a tombstone).
func TestRawCodec(t *testing.T) {
	c := rawCodecs{}.Codec("any")
	for _, b := range [][]byte{nil, {}, {0, 1, 0xff}, []byte("héllo")} {
		k, v, err := c.DecodeJSON(b, b)
		if err != nil {
			t.Fatal(err)
		}
		bk, bv, err := c.EncodeJSON(k, v)
		if err != nil || !bytes.Equal(bk, b) || !bytes.Equal(bv, b) || (b == nil) != (bv == nil) {
			t.Errorf("%q → %s → %q, %q, %v", b, v, bk, bv, err)
		}
	}
	if k, _, _ := c.DecodeJSON([]byte{0, 1, 0xff}, nil); string(k) != `"AAH/"` {
		t.Errorf("key JSON %s, want \"AAH/\"", k)
	}
	if _, _, err := c.EncodeJSON(json.RawMessage(`{"a":1}`), nil); err == nil || !strings.Contains(err.Error(), "key: want a base64 string") {
		t.Errorf("object as raw key: %v", err)
	}
}

// TestConsumedLineParses checks the round-trip contract on the line level:
// a line with consume's offset field is a valid replay line.
func TestConsumedLineParses(t *testing.T) {
	rec, _, err := sgreplay.Parse([]byte(`{"topic":"in","key":"a","value":7,"timestamp":5,"partition":2,"offset":41}`), toolApp())
	if err != nil || rec.Partition != 2 || rec.Timestamp != 5 {
		t.Fatalf("Parse = %+v, %v", rec, err)
	}
}

// TestWritingCodecsBindOnFirstLine checks that produce binds a topic's
// registry sides once, at the first line naming it, and that a binding
// error stops each of its lines with the side named once.
func TestWritingCodecsBindOnFirstLine(t *testing.T) {
	app := &sgapp.App{ID: "demo", Topics: []sgreplay.TopicCodec{sgreplay.Topic("in", serdes.String, serdes.Int64),
		sgreplay.Topic("bad", serdes.String, serdes.Int64)}}
	binds := map[string]int{}
	codecs := writingCodecs(app, func(topic string) error {
		binds[topic]++
		if topic == "bad" {
			return errors.New(`topic "bad" value (subject "bad-value"): the registry does not hold this schema`)
		}
		return nil
	})
	if writingCodecs(app, nil) != sgreplay.Codecs(app) {
		t.Error("an app without registry sides gets wrapped codecs")
	}
	for range 3 {
		if _, _, err := codecs.Codec("in").EncodeJSON(json.RawMessage(`"k"`), json.RawMessage(`1`)); err != nil {
			t.Fatal(err)
		}
		_, _, err := codecs.Codec("bad").EncodeJSON(json.RawMessage(`"k"`), json.RawMessage(`1`))
		if err == nil || err.Error() != `value (subject "bad-value"): the registry does not hold this schema` {
			t.Errorf("line of a topic whose binding failed: %v", err)
		}
	}
	if binds["in"] != 1 || binds["bad"] != 1 || codecs.Codec("other") != nil {
		t.Errorf("binds %v, want one per topic; undeclared topic codec %v", binds, codecs.Codec("other"))
	}
}
