package sgstream

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// Helpers shared by the table, aggregation, suppress and process tests.

// tdrv wraps a testDriver over a topology built in the test.
type tdrv struct {
	t *testing.T
	*testDriver
}

func newTDrv(t *testing.T, build func(b *Builder), opts ...DriverOpt) *tdrv {
	t.Helper()
	return &tdrv{t, buildDriver(t, "app", build, opts...)}
}

// buildDriver builds a topology for appID and a testDriver over it, failing
// the test at once if either cannot be made, and closes the driver when the
// test ends. Every driver wrapper in these tests (tdrv, jdrv, typedDriver)
// starts here, so a failure to build is reported the same way everywhere.
func buildDriver(t *testing.T, appID string, build func(b *Builder), opts ...DriverOpt) *testDriver {
	t.Helper()
	tp, err := newTopology(appID, build)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newTestDriver(tp, driverConfig(opts))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// nullStr marks a null key or value in pipeS.
const nullStr = "\x00null"

// pipeS pipes a record with string key and string value (nullStr = null).
func (d *tdrv) pipeS(topic, key, value string, ts int64) {
	d.t.Helper()
	pipeStrings(d.t, d.testDriver, topic, key, value, ts)
}

// pipeStrings pipes into d a record with string key and string value
// (nullStr = null), failing the test if the driver refuses it. The join
// (jdrv) and table (tdrv) helpers both pipe through it.
func pipeStrings(t *testing.T, d *testDriver, topic, key, value string, ts int64) {
	t.Helper()
	if err := d.Pipe(RawRecord{Topic: topic, Partition: -1, Key: strBytes(key), Value: strBytes(value), Timestamp: ts}); err != nil {
		t.Fatal(err)
	}
}

func strBytes(s string) []byte {
	if s == nullStr {
		return nil
	}
	return []byte(s)
}

// outS returns topic's output as "key=value@ts" with string keys and values
// decoded by dec (nil: string); null is "null".
func (d *tdrv) outS(topic string, dec func([]byte) string) []string {
	return formatOutput(d.Output(topic), "=", dec)
}

// formatOutput renders recs as "key<sep>value@ts", the key as a string, the
// value decoded by dec (nil: string), and a null key or value as "null".
// The join helpers use sep ":" and the table helpers "=".
func formatOutput(recs []RawRecord, sep string, dec func([]byte) string) []string {
	if dec == nil {
		dec = func(b []byte) string { return string(b) }
	}
	var out []string
	for _, r := range recs {
		k, v := "null", "null"
		if r.Key != nil {
			k = string(r.Key)
		}
		if r.Value != nil {
			v = dec(r.Value)
		}
		out = append(out, fmt.Sprintf("%s%s%s@%d", k, sep, v, r.Timestamp))
	}
	return out
}

func decI64(b []byte) string { return fmt.Sprint(int64(binary.BigEndian.Uint64(b))) }

func wantOut(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("output:\n got  %q\n want %q", got, want)
	}
}

func strSrc(topic string) SourceConfig[string, string] {
	return SourceConfig[string, string]{Topic: topic, Key: serdes.String, Value: serdes.String}
}

func strSink() SinkConfig[string, string] {
	return SinkConfig[string, string]{Key: serdes.String, Value: serdes.String}
}

func i64Sink() SinkConfig[string, int64] {
	return SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64}
}

func keep(_ string, v string) bool { return strings.HasPrefix(v, "keep") }

func TestTableSourceToStreamForwardsEveryUpdateAndTombstone(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		tb := TableSource(b, "users", strSrc("users"), "users-store")
		To(ToStream(tb, "users-stream"), "sink", "out", strSink())
	})
	d.pipeS("users", "a", "1", 10)
	d.pipeS("users", "a", "2", 5) // out of order: applied anyway
	d.pipeS("users", "a", nullStr, 20)
	d.pipeS("users", "b", nullStr, 21) // delete of a key never written: still forwarded
	d.pipeS("users", nullStr, "x", 22) // null key: dropped
	wantOut(t, d.outS("out", nil), "a=1@10", "a=2@5", "a=null@20", "b=null@21")
	if got := d.Tasks()[0].Stats().Dropped; got != 1 {
		t.Fatalf("dropped = %d, want 1", got)
	}
}

// A filter on a materialized table asks it for old values (KTableFilter's
// constructor calls parent.enableSendingOldValues(false)), so an update that
// fails before and after is skipped: a row leaves the filtered table with one
// tombstone, and a row that never was in it sends none.
func TestTableFilterForwardsTombstoneOnlyForRowsThatLeave(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		tb := TableSource(b, "t", strSrc("in"), "t-store")
		f := FilterTable(tb, "f", keep)
		To(ToStream(f, "s"), "sink", "out", strSink())
		nf := FilterNotTable(tb, "nf", keep)
		To(ToStream(nf, "s2"), "sink2", "out2", strSink())
	})
	d.pipeS("in", "a", "keep1", 1)
	d.pipeS("in", "a", "drop", 2)
	d.pipeS("in", "b", "drop", 3)  // old value absent, new fails: skipped
	d.pipeS("in", "a", nullStr, 4) // old value fails, new absent: skipped
	wantOut(t, d.outS("out", nil), "a=keep1@1", "a=null@2")
	wantOut(t, d.outS("out2", nil), "a=drop@2", "b=drop@3", "a=null@4")
}

func TestTableFilterSkipsWhenOldValuesRequestedAndBothFail(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		tb := TableSource(b, "t", strSrc("in"), "t-store")
		f := FilterTable(tb, "f", keep)
		sendOldValues(f)
		To(ToStream(f, "s"), "sink", "out", strSink())
	})
	d.pipeS("in", "b", "drop", 1)  // new and old fail: skipped
	d.pipeS("in", "b", "keep", 2)  // passes
	d.pipeS("in", "b", "drop2", 3) // old passed: tombstone
	d.pipeS("in", "b", "drop3", 4) // both fail: skipped
	wantOut(t, d.outS("out", nil), "b=keep@2", "b=null@3")
}

func TestTableMapValuesAndGetterChain(t *testing.T) {
	var got []string
	d := newTDrv(t, func(b *Builder) {
		tb := TableSource(b, "t", strSrc("in"), "t-store")
		m := MapValuesTable(tb, "m", func(_ string, v string) string { return strings.ToUpper(v) }, serdes.String)
		f := FilterTable(m, "f", func(_ string, v string) bool { return v != "HIDE" })
		To(ToStream(m, "s"), "sink", "out", strSink())
		// A lookup node on a second topic reads the filtered, mapped view.
		lk := Source(b, "lookups", strSrc("lookups"))
		b.useStore(lk.info, "t-store")
		var g valueGetter[string, string]
		b.onInit(lk.info, func(tk *task) (err error) {
			g, err = f.getter(tk)
			return err
		})
		lk.to(nodeFunc[string, string](func(r Record[string, string]) error {
			v, ts, ok, err := g.Get(r.Key)
			if err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("%s:%v:%s@%d", r.Key, ok, v, ts))
			return nil
		}))
	})
	d.pipeS("in", "a", "x", 7)
	d.pipeS("in", "b", "hide", 8)
	d.pipeS("lookups", "a", "", 9)
	d.pipeS("lookups", "b", "", 9)
	d.pipeS("lookups", "c", "", 9)
	wantOut(t, d.outS("out", nil), "a=X@7", "b=HIDE@8")
	wantOut(t, got, "a:true:X@7", "b:false:@0", "c:false:@0")
}

func TestToTableUpsertsAndDeletes(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		tb := ToTable(s, "tt", "tt-store", serdes.String, serdes.String)
		To(ToStream(tb, "s"), "sink", "out", strSink())
	})
	d.pipeS("in", "a", "1", 1)
	d.pipeS("in", "a", nullStr, 2)
	d.pipeS("in", nullStr, "x", 3)
	wantOut(t, d.outS("out", nil), "a=1@1", "a=null@2")
	s, err := d.Store("tt-store", 0)
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := NewKVStore(s, serdes.String, serdes.String)
	if _, _, ok, _ := kv.Get("a"); ok {
		t.Fatal("a still in the store after a tombstone")
	}
}

// keyOnPartition returns a key that the default partitioner puts on
// partition p of n.
func keyOnPartition(t *testing.T, prefix string, p int32, n int) string {
	for i := 0; i < 1000; i++ {
		k := fmt.Sprintf("%s%d", prefix, i)
		if choosePartition([]byte(k), n) == p {
			return k
		}
	}
	t.Fatal("no key found")
	return ""
}

func TestGlobalTableSeenByEveryPartition(t *testing.T) {
	var got []string
	d := newTDrv(t, func(b *Builder) {
		g := GlobalTableSource(b, "g", strSrc("g"), "g-store")
		s := Source(b, "src", strSrc("in"))
		info := b.addNode("lookup", "lookup", s.info)
		var getter valueGetter[string, string]
		var tsk *task
		b.onInit(info, func(tk *task) (err error) {
			tsk = tk
			getter, err = g.lookup()(tk)
			return err
		})
		s.to(nodeFunc[string, string](func(r Record[string, string]) error {
			v, _, ok, err := getter.Get(r.Value)
			if err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("p%d:%s=%v:%s", tsk.id.Partition, r.Value, ok, v))
			return nil
		}))
	}, TopicPartitions("g", 3), TopicPartitions("in", 2))
	k0, k1 := keyOnPartition(t, "k", 0, 2), keyOnPartition(t, "k", 1, 2)
	d.pipeS("g", "x", "gx", 1)
	d.pipeS("g", "y", "gy", 1)
	d.pipeS("g", "z", "gz", 1)
	d.pipeS("g", "z", nullStr, 2)
	d.pipeS("in", k0, "x", 3)
	d.pipeS("in", k1, "y", 3)
	d.pipeS("in", k1, "z", 3)
	wantOut(t, got, "p0:x=true:gx", "p1:y=true:gy", "p1:z=false:")
	globals := 0
	for _, tk := range d.Tasks() {
		if tk.ID().IsGlobal() {
			globals++
		}
	}
	if globals != 1 {
		t.Fatalf("%d global tasks, want 1", globals)
	}
}
