package sgstream

import (
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// marked fails the test unless recs are changelog records that each carry
// the layout marker and nothing else; it returns how many are tombstones.
func marked(t *testing.T, recs []RawRecord) (tombstones int) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("no changelog records")
	}
	for _, r := range recs {
		if !engine.IsLayoutMarker(r.Headers) {
			t.Fatalf("changelog record %q at %d has headers %+v, want only the layout marker", r.Key, r.Timestamp, r.Headers)
		}
		if r.Value == nil {
			tombstones++
		}
	}
	return tombstones
}

// TestOwnLayoutChangelogIsMarked: a suppress buffer's changelog is
// streamgen's own layout, so each record carries the marker, the
// tombstone that empties the buffer too, while the table's store, in Kafka
// Streams' layout, logs without headers as Kafka Streams does.
func TestOwnLayoutChangelogIsMarked(t *testing.T) {
	d := newTDrv(t, suppressed(SuppressConfig{TimeLimit: 10 * time.Millisecond}))
	d.pipeS("in", "a", "1", 0)
	d.pipeS("in", "b", "1", 10) // a leaves the buffer: a tombstone
	wantOut(t, d.outS("out", nil), "a=1@0")
	if n := marked(t, d.Output("app-sup-store-changelog")); n != 1 {
		t.Fatalf("%d tombstones in the buffer's changelog, want 1", n)
	}
	for _, r := range d.Output("app-t-store-changelog") {
		if r.Headers != nil {
			t.Fatalf("table changelog record %q has headers %+v", r.Key, r.Headers)
		}
	}
}

// TestMarkOwnLayout: a DSL store the generator marks (msgpack values)
// logs with the marker; marking a store nobody declared is a build error,
// since the generator and the operators disagree on its name.
func TestMarkOwnLayout(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		countTopology(b)
		MarkOwnLayout(b, "counts")
	})
	d.pipeS("in", "a", "x", 1)
	marked(t, d.Output("app-counts-changelog"))

	_, err := newTopology("app", func(b *Builder) {
		countTopology(b)
		MarkOwnLayout(b, "count")
	})
	if err == nil || !strings.Contains(err.Error(), `store "count"`) {
		t.Fatalf("marking an undeclared store: %v", err)
	}
}

// TestOuterJoinStoreChangelogIsKafkas: the unmatched records of a left
// stream-stream join are logged in Kafka Streams' layout, without the
// marker, so that a Kafka Streams join's state can be taken over: the key
// is TimestampedKeyAndJoinSide (timestamp, side byte 1 for left, key), the
// value the whole list after the put, a ListSerde of LeftOrRightValues
// (variable-size flag 1, count, each element's length, side byte, value),
// the record timestamp the record's; a match or an emission logs a
// tombstone.
func TestOuterJoinStoreChangelogIsKafkas(t *testing.T) {
	d := newJDrv(t, func(b *Builder) {
		l := Source(b, "left", jvSrc("left"))
		r := Source(b, "right", jvSrc("right"))
		sd := jvJoinSerdes
		sd.StoreName = "s"
		To(JoinStreams(l, r, "j", LeftJoin, JoinWindows{Before: ms(10), After: ms(10)}, joinStr, sd), "sink", "out", jvSink())
	})
	d.pipe("left", "k", "A", 5)
	d.pipe("left", "k", "B", 5) // a duplicate: the list grows
	d.pipe("right", "k", "X", 7)
	recs := d.Output("app-s-left-shared-join-store-changelog")
	key := "\x00\x00\x00\x00\x00\x00\x00\x05\x01k"
	want := []struct{ value string }{
		{"\x01\x00\x00\x00\x01\x00\x00\x00\x02\x01A"},
		{"\x01\x00\x00\x00\x02\x00\x00\x00\x02\x01A\x00\x00\x00\x02\x01B"},
		{""}, // the match deletes the key: a tombstone
	}
	if len(recs) != len(want) {
		t.Fatalf("%d changelog records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, r := range recs {
		if string(r.Key) != key || string(r.Value) != want[i].value || (want[i].value == "") != (r.Value == nil) || r.Headers != nil {
			t.Fatalf("changelog record %d: key %q value %q headers %+v, want key %q value %q, no headers", i, r.Key, r.Value, r.Headers, key, want[i].value)
		}
	}
	if recs[0].Timestamp != 5 || recs[2].Timestamp != 7 {
		t.Fatalf("changelog timestamps %d, %d, want the records' 5, 7", recs[0].Timestamp, recs[2].Timestamp)
	}
}
