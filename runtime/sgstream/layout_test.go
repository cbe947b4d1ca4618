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
