package sgstream

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// failSerde is jvSerde whose Decode refuses the value "bad", the way a
// generated decoder refuses bytes it cannot read, and whose Append refuses
// "unwritable".
type failSerde struct{ jvSerde }

func (failSerde) Append(dst []byte, v *jv) ([]byte, error) {
	if v != nil && v.s == "unwritable" {
		return dst, errors.New("cannot write")
	}
	return jvSerde{}.Append(dst, v)
}

func (failSerde) Decode(b []byte) (*jv, error) {
	if string(b) == "bad" {
		return nil, errors.New("bad bytes")
	}
	return &jv{string(b)}, nil
}

// TestDeadLetterHeaders checks every header of a dead letter, in order, for
// each kind of failure: the original record's headers first, as Kafka
// Streams copies them, then KIP-1034's __streams.errors.* (values as
// Kafka's ExceptionHandlerUtils encodes them), then the legacy
// streamgen.error.* kept for one release.
func TestDeadLetterHeaders(t *testing.T) {
	type want struct{ exception, message, stack string }
	for _, tc := range []struct {
		name  string
		value string
		ts    int64
		want  want
	}{
		{"deserialization", "bad", 5, want{ExceptionSerialization,
			"streamgen: deserialization failed: value: bad bytes",
			ExceptionSerialization + ": streamgen: deserialization failed: value: bad bytes\nCaused by: bad bytes\n"}},
		{"timestamp", "v", -1, want{ExceptionStreams,
			"streamgen: invalid timestamp: extracted timestamp -1 is negative",
			ExceptionStreams + ": streamgen: invalid timestamp: extracted timestamp -1 is negative\n"}},
		{"processing", "unwritable", 5, want{ExceptionProcessing,
			`streamgen: processing failed: serialize value for "out": cannot write`,
			ExceptionProcessing + `: streamgen: processing failed: serialize value for "out": cannot write` + "\nCaused by: cannot write\n"}},
		{"panic", "boom", 5, want{ExceptionPanic, "streamgen: processing failed: panic: boom", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newJDrv(t, dlqTopology, ErrorPolicies(PolicyDeadLetter, PolicyDeadLetter, "dlq"), InvalidTimestamps(TimestampDeadLetter))
			orig := []Header{{Key: "trace", Value: []byte("t-1")}, {Key: "trace", Value: []byte("t-2")}}
			if err := d.Pipe(RawRecord{Topic: "in", Partition: -1, Key: jBytes("k"), Value: jBytes(tc.value), Timestamp: tc.ts, Headers: orig}); err != nil {
				t.Fatalf("pipe: %v", err)
			}
			dlq := d.Output("dlq")
			if len(dlq) != 1 || string(dlq[0].Key) != "k" || string(dlq[0].Value) != tc.value || dlq[0].Timestamp != tc.ts {
				t.Fatalf("dead letters = %+v, want the original record once", dlq)
			}
			got := dlq[0].Headers
			stack := headerValue(got, HeaderErrorsStacktrace)
			if tc.want.stack == "" {
				checkPanicStack(t, stack)
				tc.want.stack = stack
			}
			wantHeaders := append(slices.Clone(orig),
				Header{Key: "__streams.errors.exception", Value: []byte(tc.want.exception)},
				Header{Key: "__streams.errors.message", Value: []byte(tc.want.message)},
				Header{Key: "__streams.errors.stacktrace", Value: []byte(tc.want.stack)},
				Header{Key: "__streams.errors.topic", Value: []byte("in")},
				Header{Key: "__streams.errors.partition", Value: []byte("0")},
				Header{Key: "__streams.errors.offset", Value: []byte("0")},
				Header{Key: "streamgen.error.topic", Value: []byte("in")},
				Header{Key: "streamgen.error.partition", Value: []byte("0")},
				Header{Key: "streamgen.error.offset", Value: []byte("0")},
				Header{Key: "streamgen.error.message", Value: []byte(tc.want.message)},
			)
			if !slices.EqualFunc(got, wantHeaders, func(a, b Header) bool { return a.Key == b.Key && string(a.Value) == string(b.Value) }) {
				t.Fatalf("headers:\n got  %q\n want %q", got, wantHeaders)
			}
		})
	}
}

// dlqTopology reads "in" and writes "out" with failSerde, through a
// MapValues that panics on "boom".
func dlqTopology(b *Builder) {
	src := Source(b, "in", SourceConfig[string, *jv]{Topic: "in", Key: jvSrc("in").Key, Value: failSerde{}})
	To(MapValues(src, "map", func(_ string, v *jv) *jv {
		if v.s == "boom" {
			panic("boom")
		}
		return v
	}), "sink", "out", SinkConfig[string, *jv]{Key: jvSink().Key, Value: failSerde{}})
}

// checkPanicStack checks a panic's stack trace header: Java's shape, the
// panicking function (the MapValues closure above) as the first frame, and
// file base names only, never a machine path.
func checkPanicStack(t *testing.T, stack string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stack, "\n"), "\n")
	if lines[0] != ExceptionPanic+": streamgen: processing failed: panic: boom" || len(lines) < 3 {
		t.Fatalf("stack trace = %q, want the exception line and frames", stack)
	}
	if !strings.HasPrefix(lines[1], "\tat github.com/streamgen/streamgen/runtime/sgstream.dlqTopology.func1(deadletter_test.go:") {
		t.Errorf("first frame = %q, want the panicking closure", lines[1])
	}
	for _, l := range lines[1:] {
		at, file, ok := strings.Cut(l, "(")
		if !strings.HasPrefix(at, "\tat ") || !ok || strings.Contains(file, "/") || !strings.HasSuffix(file, ")") {
			t.Errorf("frame %q: want \"\\tat function(file.go:line)\" with no directory", l)
		}
	}
}

func headerValue(hs []Header, key string) string {
	for _, h := range hs {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
