package sgstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

func suppressed(cfg SuppressConfig) func(b *Builder) {
	return func(b *Builder) {
		tb := TableSource(b, "t", strSrc("in"), "t-store")
		To(ToStream(Suppress(tb, "sup", cfg, nil), "s"), "sink", "out", strSink())
	}
}

func TestSuppressTimeLimitNonResettingLatestValueWins(t *testing.T) {
	d := newTDrv(t, suppressed(SuppressConfig{TimeLimit: 10 * time.Millisecond}))
	d.pipeS("in", "a", "1", 0)
	d.pipeS("in", "a", "2", 5) // replaces the value, keeps buffer time 0
	d.pipeS("in", "b", "1", 8)
	wantOut(t, d.outS("out", nil))
	d.pipeS("in", "c", "1", 10) // 0 <= 10 - 10: a goes, with its latest value and timestamp
	wantOut(t, d.outS("out", nil), "a=2@5")
	d.pipeS("in", "b", nullStr, 17) // tombstones are kept by a time-limit buffer
	wantOut(t, d.outS("out", nil))
	d.pipeS("in", "d", "1", 18) // 8 <= 8: b (now a tombstone) goes; c (10) stays
	wantOut(t, d.outS("out", nil), "b=null@17")
}

func TestSuppressTimeLimitZeroForwardsEveryUpdate(t *testing.T) {
	d := newTDrv(t, suppressed(SuppressConfig{}))
	d.pipeS("in", "a", "1", 3)
	d.pipeS("in", "a", "2", 1)
	wantOut(t, d.outS("out", nil), "a=1@3", "a=2@1")
}

func TestSuppressEmitEarlyWhenFullAndShutdown(t *testing.T) {
	d := newTDrv(t, suppressed(SuppressConfig{TimeLimit: time.Hour, MaxRecords: 2, EmitEarlyWhenFull: true}))
	d.pipeS("in", "a", "1", 3)
	d.pipeS("in", "b", "1", 1)
	d.pipeS("in", "a", "2", 4) // still two keys
	d.pipeS("in", "c", "1", 2) // three keys: the oldest (b, time 1) goes
	wantOut(t, d.outS("out", nil), "b=1@1")

	d2 := newTDrv(t, suppressed(SuppressConfig{TimeLimit: time.Hour, MaxRecords: 1}))
	d2.pipeS("in", "a", "1", 3)
	err := d2.Pipe(RawRecord{Topic: "in", Partition: -1, Key: []byte("b"), Value: []byte("1"), Timestamp: 4})
	if !errors.Is(err, ErrSuppressBufferFull) {
		t.Fatalf("err = %v, want ErrSuppressBufferFull", err)
	}
}

// winSerde serializes Windowed[string] as key, start, end (test only).
type winSerde struct{}

func (winSerde) Append(dst []byte, w Windowed[string]) ([]byte, error) {
	dst = binary.BigEndian.AppendUint64(dst, uint64(w.Start))
	dst = binary.BigEndian.AppendUint64(dst, uint64(w.End))
	return append(dst, w.Key...), nil
}

func (winSerde) Decode(b []byte) (Windowed[string], error) {
	if len(b) < 16 {
		return Windowed[string]{}, fmt.Errorf("short")
	}
	return Windowed[string]{Start: int64(binary.BigEndian.Uint64(b)), End: int64(binary.BigEndian.Uint64(b[8:])), Key: string(b[16:])}, nil
}

func winKey(k string, start, end int64) []byte {
	b, _ := winSerde{}.Append(nil, Windowed[string]{Key: k, Start: start, End: end})
	return b
}

func TestSuppressUntilWindowClosesEmitsAtEndPlusGrace(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		// A windowed table as a windowed aggregation produces it.
		tb := TableSource(b, "w", SourceConfig[Windowed[string], int64]{Topic: "in", Key: winSerde{}, Value: serdes.Int64}, "w-store")
		sup := Suppress(tb, "final", SuppressConfig{UntilWindowCloses: true, Grace: 5 * time.Millisecond}, WindowEnd[string])
		To(ToStream(sup, "s"), "sink", "out", SinkConfig[Windowed[string], int64]{Key: winSerde{}, Value: serdes.Int64})
	})
	pipe := func(k string, start, end int64, v int64, null bool, ts int64) {
		t.Helper()
		var val []byte
		if !null {
			val = binary.BigEndian.AppendUint64(nil, uint64(v))
		}
		if err := d.Pipe(RawRecord{Topic: "in", Partition: -1, Key: winKey(k, start, end), Value: val, Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	out := func() []string {
		var got []string
		for _, r := range d.Output("out") {
			w, _ := winSerde{}.Decode(r.Key)
			got = append(got, fmt.Sprintf("%s[%d,%d)=%d@%d", w.Key, w.Start, w.End, int64(binary.BigEndian.Uint64(r.Value)), r.Timestamp))
		}
		return got
	}
	pipe("a", 0, 10, 1, false, 3)
	pipe("a", 0, 10, 2, false, 7)
	pipe("x", 0, 10, 1, false, 8)
	pipe("x", 0, 10, 0, true, 9) // tombstone: dropped at emit
	pipe("a", 10, 20, 1, false, 12)
	pipe("a", 10, 20, 2, false, 14) // 10 <= 14 - 5? no
	if got := out(); len(got) != 0 {
		t.Fatalf("emitted before the window closed: %q", got)
	}
	pipe("b", 10, 20, 1, false, 15) // 10 <= 15 - 5: [0,10) closes exactly at end + grace
	wantOut(t, out(), "a[0,10)=2@7")
	pipe("a", 20, 30, 1, false, 25) // 20 <= 20
	wantOut(t, out(), "a[10,20)=2@14", "b[10,20)=1@15")
}

func TestSuppressPerPartitionStreamTime(t *testing.T) {
	d := newTDrv(t, suppressed(SuppressConfig{TimeLimit: 10 * time.Millisecond}), DefaultPartitions(2))
	k0, k1 := keyOnPartition(t, "k", 0, 2), keyOnPartition(t, "k", 1, 2)
	k0b := keyOnPartition(t, "z", 0, 2)
	d.pipeS("in", k0, "v", 0)
	d.pipeS("in", k1, "v", 100) // partition 1's time: partition 0's buffer does not move
	wantOut(t, d.outS("out", nil))
	d.pipeS("in", k0b, "v", 10)
	wantOut(t, d.outS("out", nil), k0+"=v@0")
}

func TestSuppressBufferSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	build := suppressed(SuppressConfig{TimeLimit: 10 * time.Millisecond})
	d := newTDrv(t, build, StateDir(dir))
	d.pipeS("in", "a", "1", 0)
	d.pipeS("in", "a", "2", 4)
	wantOut(t, d.outS("out", nil))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := newTDrv(t, build, StateDir(dir))
	d2.pipeS("in", "b", "1", 10)
	wantOut(t, d2.outS("out", nil), "a=2@4")
}

// TestSuppressBufferFullStopsTaskUnderEveryPolicy: shutDownWhenFull is not a
// processing error of one record, so neither skipping nor dead-lettering
// may swallow it.
func TestSuppressBufferFullStopsTaskUnderEveryPolicy(t *testing.T) {
	for name, p := range map[string]Policy{"fail": PolicyFail, "continue": PolicyContinue, "dead-letter": PolicyDeadLetter} {
		t.Run(name, func(t *testing.T) {
			d := newTDrv(t, suppressed(SuppressConfig{TimeLimit: time.Hour, MaxRecords: 1}), ErrorPolicies(PolicyFail, p, "dlq"))
			d.pipeS("in", "a", "1", 3)
			err := d.Pipe(RawRecord{Topic: "in", Partition: -1, Key: []byte("b"), Value: []byte("1"), Timestamp: 4})
			if !errors.Is(err, ErrSuppressBufferFull) {
				t.Fatalf("err = %v, want ErrSuppressBufferFull", err)
			}
			if got := d.Output("dlq"); len(got) != 0 {
				t.Errorf("dead-letter topic got %d records, want none", len(got))
			}
			if s := d.Tasks()[0].Stats(); s.Skipped != 0 || s.DeadLettered != 0 {
				t.Errorf("stats = %+v, want nothing skipped or dead-lettered", s)
			}
		})
	}
}
