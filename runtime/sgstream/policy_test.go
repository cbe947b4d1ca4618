package sgstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// TestInvalidTimestampPolicies checks what each invalid_timestamp policy
// does with a record whose timestamp is negative: fail stops with an error
// naming the record, skip and partition_time (with no partition time yet)
// count it as a skipped bad record, dead_letter writes its original bytes
// to the dead-letter topic with the error headers; the good record after
// it goes through under every policy that does not fail.
func TestInvalidTimestampPolicies(t *testing.T) {
	build := func(b *Builder) { To(Source(b, "in", jvSrc("in")), "sink", "out", jvSink()) }
	for _, tc := range []struct {
		policy                TimestampPolicy
		skipped, deadLettered int64
	}{
		{TimestampSkip, 1, 0},
		{TimestampPartitionTime, 1, 0},
		{TimestampDeadLetter, 0, 1},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			d := newJDrv(t, build, ErrorPolicies(PolicyFail, PolicyFail, "dlq"), InvalidTimestamps(tc.policy))
			d.pipe("in", "bad", "v0", -1)
			d.pipe("in", "good", "v1", 10)
			d.expectOut("good:v1@10")
			var s engine.TaskStats
			for _, tk := range d.Tasks() {
				s.Skipped += tk.Stats().Skipped
				s.DeadLettered += tk.Stats().DeadLettered
				s.BadTimestamp += tk.Stats().BadTimestamp
				s.BadDeserialization += tk.Stats().BadDeserialization
			}
			if s.Skipped != tc.skipped || s.DeadLettered != tc.deadLettered {
				t.Fatalf("skipped %d, dead-lettered %d; want %d, %d", s.Skipped, s.DeadLettered, tc.skipped, tc.deadLettered)
			}
			if s.BadTimestamp != 1 || s.BadDeserialization != 0 {
				t.Fatalf("counted %d bad timestamps, %d bad deserializations; want 1, 0", s.BadTimestamp, s.BadDeserialization)
			}
			dlq := d.Output("dlq")
			if int64(len(dlq)) != tc.deadLettered {
				t.Fatalf("dead-letter topic holds %d records, want %d", len(dlq), tc.deadLettered)
			}
			if tc.deadLettered == 1 {
				r := dlq[0]
				if string(r.Key) != "bad" || string(r.Value) != string(jBytes("v0")) || r.Timestamp != -1 {
					t.Fatalf("dead letter = %q:%q@%d, want the original record", r.Key, r.Value, r.Timestamp)
				}
				h := map[string]string{}
				for _, x := range r.Headers {
					h[x.Key] = string(x.Value)
				}
				if h["__streams.errors.topic"] != "in" || h["__streams.errors.offset"] != "0" ||
					h["__streams.errors.message"] != "streamgen: invalid timestamp: extracted timestamp -1 is negative" {
					t.Fatalf("dead-letter headers = %q", h)
				}
			}
		})
	}
	t.Run("fail", func(t *testing.T) {
		d := newJDrv(t, build, ErrorPolicies(PolicyDeadLetter, PolicyDeadLetter, "dlq"))
		err := d.Pipe(RawRecord{Topic: "in", Partition: -1, Key: jBytes("bad"), Value: jBytes("v0"), Timestamp: -1})
		if !errors.Is(err, ErrInvalidTimestamp) || !strings.Contains(err.Error(), `topic "in" partition 0 offset 0`) {
			t.Fatalf("error = %v, want ErrInvalidTimestamp naming the record", err)
		}
		if n := len(d.Output("dlq")); n != 0 {
			t.Fatalf("fail wrote %d dead letters", n)
		}
	})
}

// TestBadRecordCausesAreCounted: of the records a continue policy skips,
// the task stats tell those that did not decode from those that failed in
// processing, so a replay summary can say why records went missing.
func TestBadRecordCausesAreCounted(t *testing.T) {
	build := func(b *Builder) {
		s := Source(b, "in", SourceConfig[string, int64]{Topic: "in", Key: serdes.String, Value: serdes.Int64})
		To(Filter(s, "f", func(_ string, v int64) bool {
			if v < 0 {
				panic("negative")
			}
			return true
		}), "sink", "out", i64Sink())
	}
	d := newTDrv(t, build, ErrorPolicies(PolicyContinue, PolicyContinue, ""))
	bad := RawRecord{Topic: "in", Partition: -1, Key: []byte("k"), Value: []byte{1, 2, 3}, Timestamp: 1}
	neg, _ := serdes.Int64.Append(nil, -1)
	for _, r := range []RawRecord{bad, {Topic: "in", Partition: -1, Key: []byte("k"), Value: neg, Timestamp: 2}} {
		if err := d.Pipe(r); err != nil {
			t.Fatal(err)
		}
	}
	s := d.Tasks()[0].Stats()
	if s.Skipped != 2 || s.BadDeserialization != 1 || s.BadTimestamp != 0 {
		t.Fatalf("stats %+v; want 2 skipped, 1 of them undecodable", s)
	}
}
