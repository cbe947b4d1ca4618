package sgapp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// testApp upper-cases values from "in" to "out", dropping empty ones; it is
// a hand-wired stand-in for generated code.
func testApp() *App {
	return &App{
		ID: "replay-test",
		Build: func(b *sgstream.Builder) {
			in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
			kept := sgstream.FilterNot(in, "drop-empty", func(k, v string) bool { return v == "" })
			up := sgstream.MapValues(kept, "upper", func(k, v string) string { return strings.ToUpper(v) })
			sgstream.To(up, "sink", "out", sgstream.SinkConfig[string, string]{Key: serdes.String, Value: serdes.String})
		},
		Topics: []TopicCodec{sgreplay.Topic("in", serdes.String, serdes.String), sgreplay.Topic("out", serdes.String, serdes.String)},
	}
}

func TestReplayWritesOutputsAndSkipsBadLines(t *testing.T) {
	in := `{"topic": "in", "key": "a", "value": "hello", "timestamp": 5}
not json
{"topic": "nope", "key": "a", "value": "x", "timestamp": 6}

{"topic": "in", "key": "b", "value": "", "timestamp": 7}
{"topic": "in", "key": "c", "value": "bye", "timestamp": 8, "headers": {"h": "1"}}
`
	var out, errOut bytes.Buffer
	if err := Replay(testApp(), strings.NewReader(in), &out, &errOut, ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `{"topic":"out","key":"a","value":"HELLO","timestamp":5}
{"topic":"out","key":"c","value":"BYE","timestamp":8,"headers":{"h":"1"}}
`
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	for _, frag := range []string{"line 2: not a replay record", `line 3: topic "nope" is not declared in the spec (declared: in, out)`} {
		if !strings.Contains(errOut.String(), frag) {
			t.Errorf("stderr %q does not mention %q", errOut.String(), frag)
		}
	}
}

func TestReplayStrictStopsAtBadLine(t *testing.T) {
	in := "{\"topic\": \"in\", \"key\": \"a\", \"value\": \"x\", \"timestamp\": 1}\n{\"topic\": \"in\", \"key\": \"a\"}\n"
	var out, errOut bytes.Buffer
	err := Replay(testApp(), strings.NewReader(in), &out, &errOut, ReplayOptions{Strict: true})
	if err == nil || !strings.Contains(err.Error(), `line 2: missing "timestamp"`) {
		t.Fatalf("err = %v, want line 2 missing timestamp", err)
	}
	if out.String() != "{\"topic\":\"out\",\"key\":\"a\",\"value\":\"X\",\"timestamp\":1}\n" {
		t.Fatalf("output before the bad line: %q", out.String())
	}
}

func TestReplaySequencesStartFresh(t *testing.T) {
	// A count per key shows whether state carried over between sequences.
	app := &App{
		ID: "seq-test",
		Build: func(b *sgstream.Builder) {
			in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
			g := sgstream.GroupByKey(in, serdes.String, serdes.String)
			counts := sgstream.Count(g, "count", "counts")
			sgstream.To(sgstream.ToStream(counts, "to-stream"), "sink", "out", sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
		},
		Topics: []TopicCodec{sgreplay.Topic("in", serdes.String, serdes.String), sgreplay.Topic("out", serdes.String, serdes.Int64)},
	}
	in := `{"sequence": 1}
{"topic": "in", "key": "a", "value": "x", "timestamp": 1}
{"topic": "in", "key": "a", "value": "y", "timestamp": 2}
{"sequence": 2}
{"topic": "in", "key": "a", "value": "z", "timestamp": 3}
`
	var out, errOut bytes.Buffer
	if err := Replay(app, strings.NewReader(in), &out, &errOut, ReplayOptions{Sequences: true, Strict: true}); err != nil {
		t.Fatalf("%v (stderr %s)", err, errOut.String())
	}
	want := `{"sequence":1}
{"topic":"out","key":"a","value":1,"timestamp":1}
{"topic":"out","key":"a","value":2,"timestamp":2}
{"sequence":2}
{"topic":"out","key":"a","value":1,"timestamp":3}
`
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
