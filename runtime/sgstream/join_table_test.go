package sgstream

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// Stream-table, stream-global-table and table-table join tests, following
// Kafka Streams' documented behaviour and KStreamKTableJoinTest,
// KStreamKTableLeftJoinTest, KTableKTable{Inner,Left,Outer}JoinTest.

func stJoin(t *testing.T, kind JoinKind, opts ...DriverOpt) *jdrv {
	return newJDrv(t, func(b *Builder) {
		s := Source(b, "s", jvSrc("s"))
		tb := TableSource(b, "t", jvSrc("t"), "t-store")
		To(JoinStreamTable(s, tb, "j", kind, joinStr), "sink", "out", jvSink())
	}, opts...)
}

func TestJoinStreamTableInner(t *testing.T) {
	d := stJoin(t, InnerJoin)
	d.pipe("s", "k", "A", 1)
	d.expectOut()
	d.pipe("t", "k", "X", 5)
	d.expectOut() // table updates never emit
	d.pipe("s", "k", "B", 3)
	d.expectOut("k:B+X@3") // the stream record's timestamp, whatever the table's
	d.pipe("t", "k", "Y", 6)
	d.pipe("s", "k", "C", 7)
	d.expectOut("k:C+Y@7")
	d.pipe("t", "k", jNull, 8)
	d.pipe("s", "k", "D", 9)
	d.pipe("s", jNull, "E", 9)
	d.pipe("s", "k", jNull, 9)
	d.expectOut()
	if got := d.dropped(); got != 2 {
		t.Fatalf("dropped %d, want 2 (null key, null value)", got)
	}
}

func TestJoinStreamTableLeft(t *testing.T) {
	d := stJoin(t, LeftJoin)
	d.pipe("s", "k", "A", 1)
	d.pipe("t", "k", "X", 5)
	d.pipe("s", "k", "B", 3)
	d.pipe("t", "k", jNull, 8)
	d.pipe("s", "k", "C", 9)
	// A null key with a value is still emitted by a left join; a null
	// value is not.
	d.pipe("s", jNull, "N", 10)
	d.pipe("s", "k", jNull, 11)
	d.expectOut("k:A+null@1", "k:B+X@3", "k:C+null@9", "null:N+null@10")
	if got := d.dropped(); got != 1 {
		t.Fatalf("dropped %d, want 1", got)
	}
}

func TestJoinStreamTableRunsInTheTablesSubTopology(t *testing.T) {
	d := stJoin(t, InnerJoin, DefaultPartitions(3))
	for i, k := range []string{"a", "b", "c", "d", "e"} {
		d.pipe("t", k, "T"+k, int64(i))
	}
	for i, k := range []string{"a", "b", "c", "d", "e", "f"} {
		d.pipe("s", k, "S"+k, int64(10+i))
	}
	got := d.out("out")
	slices.Sort(got)
	want := []string{"a:Sa+Ta@10", "b:Sb+Tb@11", "c:Sc+Tc@12", "d:Sd+Td@13", "e:Se+Te@14"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func firstChar(_ string, v *jv) string { return v.s[:1] }

func TestJoinStreamGlobal(t *testing.T) {
	for _, kind := range []JoinKind{InnerJoin, LeftJoin} {
		t.Run(kind.String(), func(t *testing.T) {
			d := newJDrv(t, func(b *Builder) {
				g := GlobalTableSource(b, "g", jvSrc("g"), "g-store")
				s := Source(b, "s", jvSrc("s"))
				To(JoinStreamGlobal(s, g, "j", kind, firstChar, joinStr), "sink", "out", jvSink())
			}, TopicPartitions("g", 3), TopicPartitions("s", 2))
			d.pipe("g", "x", "GX", 100)
			d.pipe("g", "y", "GY", 100)
			// Stream keys on both partitions map to the global table's keys.
			d.pipe("s", keyOnPart(t, 0), "x1", 1)
			d.pipe("s", keyOnPart(t, 1), "y1", 2)
			d.pipe("s", keyOnPart(t, 1), "z1", 3)
			d.pipe("g", "x", jNull, 101)
			d.pipe("s", keyOnPart(t, 0), "x2", 4)
			// A null stream key is no reason to drop (KIP-962): the mapper
			// sees the null key and the value, and its result is looked up.
			d.pipe("s", jNull, "y2", 5)
			d.pipe("s", "k", jNull, 6)
			k0, k1 := keyOnPart(t, 0), keyOnPart(t, 1)
			if kind == InnerJoin {
				d.expectOut(k0+":x1+GX@1", k1+":y1+GY@2", "null:y2+GY@5")
			} else {
				d.expectOut(k0+":x1+GX@1", k1+":y1+GY@2", k1+":z1+null@3", k0+":x2+null@4", "null:y2+GY@5")
			}
		})
	}
}

func keyOnPart(t *testing.T, p int32) string {
	for i := 0; i < 1000; i++ {
		k := "key" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if choosePartition([]byte(k), 2) == p {
			return k
		}
	}
	t.Fatal("no key found")
	return ""
}

func ttJoin(t *testing.T, kind JoinKind, store string) *jdrv {
	return newJDrv(t, func(b *Builder) {
		l := TableSource(b, "l", jvSrc("l"), "l-store")
		r := TableSource(b, "r", jvSrc("r"), "r-store")
		j := JoinTables(l, r, "j", kind, joinStr, store, serdes.Serde[*jv](jvSerde{}))
		To(ToStream(j, "j-stream"), "sink", "out", jvSink())
		// Looking the join result up (a stream-table join on it) uses the
		// result's getter: its store, or the join computed from both sides.
		s := Source(b, "probe", jvSrc("probe"))
		To(JoinStreamTable(s, j, "probe-join", LeftJoin, joinStr), "probe-sink", "probe-out", jvSink())
	})
}

func (d *jdrv) probe(key string, ts int64) string {
	d.t.Helper()
	d.pipe("probe", key, "P", ts)
	got := d.out("probe-out")
	if len(got) != 1 {
		d.t.Fatalf("probe output %q", got)
	}
	return got[0]
}

func TestJoinTablesInner(t *testing.T) {
	for _, store := range []string{"", "j-store"} {
		t.Run("store="+store, func(t *testing.T) {
			d := ttJoin(t, InnerJoin, store)
			d.pipe("l", "k0", "X0", 5)
			d.expectOut()
			d.pipe("r", "k0", "Y0", 10)
			d.expectOut("k0:X0+Y0@10")
			d.pipe("l", "k0", "X0b", 7) // ts = max(this update, other row)
			d.expectOut("k0:X0b+Y0@10")
			if got := d.probe("k0", 20); got != "k0:P+X0b+Y0@20" {
				t.Fatalf("lookup: %s", got)
			}
			d.pipe("r", "k0", jNull, 12) // partner exists: tombstone
			d.expectOut("k0:null@12")
			if got := d.probe("k0", 21); got != "k0:P+null@21" {
				t.Fatalf("lookup after delete: %s", got)
			}
			d.pipe("l", "k0", jNull, 13) // partner absent: nothing
			d.pipe("l", "k1", "X1", 1)
			d.pipe("l", "k1", jNull, 2)
			d.pipe("r", "k2", jNull, 3)
			d.expectOut()
		})
	}
}

func TestJoinTablesLeft(t *testing.T) {
	for _, store := range []string{"", "j-store"} {
		t.Run("store="+store, func(t *testing.T) {
			d := ttJoin(t, LeftJoin, store)
			d.pipe("l", "k0", "X0", 5)
			d.expectOut("k0:X0+null@5")
			d.pipe("r", "k0", "Y0", 10)
			d.expectOut("k0:X0+Y0@10")
			// Deleting the right row joins the left one with null.
			d.pipe("r", "k0", jNull, 12)
			d.expectOut("k0:X0+null@12")
			if got := d.probe("k0", 20); got != "k0:P+X0+null@20" {
				t.Fatalf("lookup: %s", got)
			}
			d.pipe("l", "k0", jNull, 13)
			d.expectOut("k0:null@13")
			// Deleting a row that never existed emits nothing; right rows
			// without a left row emit nothing.
			d.pipe("l", "k1", jNull, 14)
			d.pipe("r", "k2", "Y2", 15)
			d.pipe("r", "k2", jNull, 16)
			d.expectOut()
		})
	}
}

func TestJoinTablesOuter(t *testing.T) {
	for _, store := range []string{"", "j-store"} {
		t.Run("store="+store, func(t *testing.T) {
			d := ttJoin(t, OuterJoin, store)
			d.pipe("l", "k0", "X0", 5)
			d.pipe("r", "k1", "Y1", 6)
			d.pipe("r", "k0", "Y0", 10)
			d.expectOut("k0:X0+null@5", "k1:null+Y1@6", "k0:X0+Y0@10")
			if got := d.probe("k1", 20); got != "k1:P+null+Y1@20" {
				t.Fatalf("lookup: %s", got)
			}
			d.pipe("l", "k0", jNull, 11)
			d.expectOut("k0:null+Y0@11")
			d.pipe("r", "k0", jNull, 12)
			d.expectOut("k0:null@12")
			d.pipe("r", "k9", jNull, 13)
			d.pipe("l", "k9", jNull, 14)
			d.expectOut()
			if got := d.probe("k0", 21); got != "k0:P+null@21" {
				t.Fatalf("lookup after deletes: %s", got)
			}
		})
	}
}

func TestJoinTablesLeftWithFilteredLeftSendsOldValues(t *testing.T) {
	// A left join makes its left parent send old values (Kafka's doJoin),
	// so a filtered-out update whose old value was filtered out too is
	// skipped instead of reaching the join as a tombstone.
	d := newJDrv(t, func(b *Builder) {
		src := TableSource(b, "l", jvSrc("l"), "l-store")
		l := FilterTable(src, "lf", func(_ string, v *jv) bool { return strings.HasPrefix(v.s, "keep") })
		r := TableSource(b, "r", jvSrc("r"), "r-store")
		To(ToStream(JoinTables(l, r, "j", LeftJoin, joinStr, "", nil), "js"), "sink", "out", jvSink())
	})
	d.pipe("l", "k", "drop1", 1)
	d.pipe("l", "k", "drop2", 2)
	d.expectOut()
	d.pipe("l", "k", "keep", 3)
	d.pipe("l", "k", "drop3", 4)
	d.expectOut("k:keep+null@3", "k:null@4")
}
