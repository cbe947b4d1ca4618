package sgstream

import (
	"testing"
	"time"
)

// versionedJoin is a stream-table left join on a versioned table with a
// history retention of 10 and, when grace > 0, a grace period.
func versionedJoin(grace time.Duration) func(b *Builder) {
	return func(b *Builder) {
		s := Source(b, "s", jvSrc("s"))
		tb := VersionedTableSource(b, "t", jvSrc("t"), "t-store", 10*time.Millisecond)
		var out Stream[string, *jv]
		if grace > 0 {
			out = JoinStreamTableGrace(s, tb, "j", LeftJoin, grace, joinStr, jvSrc("").Key, jvSrc("").Value)
		} else {
			out = JoinStreamTable(s, tb, "j", LeftJoin, joinStr)
		}
		To(out, "sink", "out", jvSink())
	}
}

// TestJoinStreamVersionedTable: each stream record sees the table version
// as of its own timestamp, including versions that arrived out of order.
func TestJoinStreamVersionedTable(t *testing.T) {
	d := newJDrv(t, versionedJoin(0))
	d.pipe("t", "k", "X", 5)
	d.pipe("t", "k", "Z", 20)
	d.pipe("t", "k", "Y", 12) // out of order, within the history retention
	d.pipe("t", "k", "W", 3)  // older than 20 - 10: dropped
	d.pipe("s", "k", "A", 4)
	d.pipe("s", "k", "B", 11)
	d.pipe("s", "k", "C", 15)
	d.pipe("s", "k", "D", 21)
	d.expectOut("k:A+null@4", "k:B+X@11", "k:C+Y@15", "k:D+Z@21")
}

// TestJoinStreamVersionedGraceSurvivesRestart: buffered stream records and
// the buffer's stream time are in the logged store, so after a restart on
// the same state directory they are emitted when stream time passes them,
// in timestamp order, and see table updates that arrived meanwhile.
func TestJoinStreamVersionedGraceSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	build := versionedJoin(5 * time.Millisecond)
	d := newJDrv(t, build, StateDir(dir))
	d.pipe("s", "k", "B", 8)
	d.pipe("s", "k", "A", 6)
	d.expectOut() // both wait: stream time 8, grace 5
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := newJDrv(t, build, StateDir(dir))
	d2.pipe("t", "k", "X", 7)
	d2.pipe("s", "k", "L", 1) // 1 < 8 - 5: too late for the buffer, joins at once
	d2.expectOut("k:L+null@1")
	d2.pipe("s", "k", "C", 13)
	d2.expectOut("k:A+null@6", "k:B+X@8")
}
