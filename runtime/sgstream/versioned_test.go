package sgstream

import (
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
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

// versionedStrTable is a string table read into a versioned store with a
// history retention of 10.
func versionedStrTable(b *Builder) Table[string, string] {
	return VersionedTableSource(b, "t", strSrc("t"), "t-store", 10*time.Millisecond)
}

// TestVersionedMapValuesInheritsVersionedSemantics: map_values of a
// versioned table is versioned (Kafka's isVersionedOrVersionedUpstream):
// out-of-order updates reach to_stream, a filter after it forwards a row
// that fails before and after, and a stream-table join reads the mapped
// version as of the stream record's timestamp.
func TestVersionedMapValuesInheritsVersionedSemantics(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		m := MapValuesTable(versionedStrTable(b), "m", func(_ string, v string) string { return strings.ToUpper(v) }, serdes.String)
		To(ToStream(m, "m-stream"), "sink", "out", strSink())
		f := FilterTable(m, "f", func(_ string, v string) bool { return v != "HIDE" })
		To(ToStream(f, "f-stream"), "sink2", "filtered", strSink())
		s := Source(b, "s", strSrc("s"))
		j := JoinStreamTable(s, m, "j", LeftJoin, func(_ string, sv string, tv string, _ Missing) string { return sv + "+" + tv })
		To(j, "sink3", "joined", strSink())
	})
	d.pipeS("t", "k", "x", 5)
	d.pipeS("t", "k", "hide", 20)
	d.pipeS("t", "k", "hide", 12) // out of order: forwarded, not latest
	d.pipeS("t", "k", "y", 3)     // older than 20 - 10: not stored, not forwarded
	wantOut(t, d.outS("out", nil), "k=X@5", "k=HIDE@20", "k=HIDE@12")
	// The filter forwards the out-of-order update although it fails before
	// (HIDE@20) and after: a plain table's filter would skip it.
	wantOut(t, d.outS("filtered", nil), "k=X@5", "k=null@20", "k=null@12")
	d.pipeS("s", "k", "a", 11) // as of 11: x@5, valid until the version at 12
	d.pipeS("s", "k", "b", 25)
	d.pipeS("s", "k", "c", 7) // before 20 - 10: only the latest version, valid from 20
	wantOut(t, d.outS("joined", nil), "k=a+X@11", "k=b+HIDE@25", "k=c+@7")
}

// TestVersionedGroupByDropsOutOfOrderUpdates: a table group_by of a
// versioned table sends no out-of-order update (KTableRepartitionMap with
// versioned semantics), so the aggregate reflects the latest version of
// each row; Kafka Streams does not count these as dropped.
func TestVersionedGroupByDropsOutOfOrderUpdates(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		m := MapValuesTable(versionedStrTable(b), "m", func(_ string, v string) string { return v }, serdes.String)
		g := GroupByTable(m, "by-value", func(k, v string) (string, string) { return v, k }, serdes.String, serdes.String)
		To(ToStream(CountTable(g, "count", "counts"), "s"), "sink", "out", i64Sink())
	})
	d.pipeS("t", "a", "red", 10)
	d.pipeS("t", "a", "blue", 20)
	d.pipeS("t", "a", "green", 15) // out of order: not regrouped
	d.pipeS("t", "b", "blue", 16)
	wantOut(t, d.outS("out", decI64), "red=1@10", "red=0@20", "blue=1@20", "blue=2@20")
	if got := d.Tasks()[0].Stats().Dropped; got != 0 {
		t.Fatalf("dropped = %d, want 0", got)
	}
}

// TestVersionedForeignKeyJoinDropsOutOfOrderUpdates: a foreign-key join
// skips the out-of-order updates of a versioned side, left and right, and
// counts them as dropped (SubscriptionSendProcessorSupplier,
// ForeignTableJoinProcessorSupplier).
func TestVersionedForeignKeyJoinDropsOutOfOrderUpdates(t *testing.T) {
	d := newJDrv(t, func(b *Builder) {
		l := VersionedTableSource(b, "orders", jvSrc("orders"), "orders-store", 10*time.Millisecond)
		r := VersionedTableSource(b, "customers", jvSrc("customers"), "customers-store", 10*time.Millisecond)
		j := JoinForeignKey(l, r, "fk", InnerJoin, orderFK, joinStr, "", ForeignKeySerdes[string, *jv, string, *jv]{Result: jvSerde{}})
		To(ToStream(j, "fk-stream"), "sink", "out", jvSink())
	})
	d.pipe("customers", "c1", "Alice", 10)
	d.pipe("customers", "c2", "Bob", 10)
	d.pipe("orders", "o1", "c1|x", 10)
	d.expectOut("o1:c1|x+Alice@10")
	d.pipe("customers", "c1", "Old", 5) // out of order on the right: skipped
	d.pipe("orders", "o1", "c2|y", 6)   // out of order on the left: skipped
	d.expectOut()
	d.pipe("customers", "c1", "Alicia", 11)
	d.expectOut("o1:c1|x+Alicia@11")
	if got := d.Tasks()[0].Stats().Dropped + d.Tasks()[1].Stats().Dropped; got != 2 {
		t.Fatalf("dropped = %d, want 2", got)
	}
}
