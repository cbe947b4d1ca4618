package sgtest

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// word stands in for a generated record: a pointer type whose nil is a
// null value (it has IsNil, like serdes.Record).
type word struct{ s string }

func (w *word) IsNil() bool { return w == nil }

type wordSerde struct{}

func (wordSerde) Append(dst []byte, w *word) ([]byte, error) { return append(dst, w.s...), nil }
func (wordSerde) Decode(b []byte) (*word, error)             { return &word{string(b)}, nil }

func typedDriver(t *testing.T, build func(b *sgstream.Builder), opts ...Opt) *Driver {
	t.Helper()
	d, err := Build("typed-app", build, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func mustPipe[K, V any](t *testing.T, d *Driver, topic string, k serdes.Serde[K], v serdes.Serde[V], r sgstream.Record[K, V], opts ...PipeOpt) {
	t.Helper()
	if err := PipeTyped(d, topic, k, v, r, opts...); err != nil {
		t.Fatal(err)
	}
}

func TestTypedPipeAndReadFollowNullRulesAndKeepHeaders(t *testing.T) {
	d := typedDriver(t, func(b *sgstream.Builder) {
		in := sgstream.Source(b, "in", sgstream.SourceConfig[string, *word]{Topic: "in", Key: serdes.String, Value: wordSerde{}})
		kept := sgstream.Filter(in, "kept", func(_ string, v *word) bool { return v != nil && v.s != "" })
		up := sgstream.MapValues(kept, "upper", func(_ string, v *word) *word { return &word{strings.ToUpper(v.s)} })
		sgstream.To(up, "sink", "out", sgstream.SinkConfig[string, *word]{Key: serdes.String, Value: wordSerde{}})
		sgstream.Count(sgstream.GroupByKey(in, serdes.String, wordSerde{}), "count", "counts")
	})
	type rec = sgstream.Record[string, *word]
	hdr := []sgstream.Header{{Key: "trace", Value: []byte("t1")}}
	pipe := func(r rec) { t.Helper(); mustPipe(t, d, "in", serdes.String, wordSerde{}, r) }
	pipe(rec{Key: "a", Value: &word{"x"}, Timestamp: 10, Headers: hdr})
	pipe(rec{Key: "a", Value: nil, Timestamp: 11})                             // nil record: tombstone
	pipe(rec{Key: "b", Value: &word{"y"}, ValueNull: true, Timestamp: 12})     // ValueNull wins over the value
	pipe(rec{Key: "ignored", KeyNull: true, Value: &word{"z"}, Timestamp: 13}) // null key
	pipe(rec{Key: "", Value: &word{""}, Timestamp: 14})                        // empty, not null

	got, err := ReadTyped(d, "out", serdes.String, wordSerde{})
	if err != nil {
		t.Fatal(err)
	}
	want := []rec{
		{Key: "a", Value: &word{"X"}, Timestamp: 10, Headers: hdr},
		{KeyNull: true, Value: &word{"Z"}, Timestamp: 13},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("out = %+v, want %+v", got, want)
	}
	if again, err := ReadTyped(d, "out", serdes.String, wordSerde{}); err != nil || again == nil || len(again) != 0 {
		t.Fatalf("second read = %v, %v; want an empty slice: reading consumes", again, err)
	}

	// sgstream.Count drops null keys and null values: only "a"@10 and the empty
	// key "" (piped as zero bytes, not as null) are counted.
	st, err := KVStore(d, "counts", 0, serdes.String, serdes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	if err := st.All(func(k string, n int64, ts int64) error {
		entries = append(entries, k+"="+strconv.FormatInt(n, 10)+"@"+strconv.FormatInt(ts, 10))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"=1@14", "a=1@10"}; !reflect.DeepEqual(entries, want) {
		t.Fatalf("counts = %q, want %q", entries, want)
	}
}

func TestTypedDriverTwoPartitions(t *testing.T) {
	// With two partitions Kafka's partitioner puts "a" on 0 and "d" on 1.
	for k, p := range map[string]int32{"a": 0, "d": 1} {
		if got := sgpartition.Partition([]byte(k), 2); got != p {
			t.Fatalf("murmur2 partition of %q = %d, the test assumes %d", k, got, p)
		}
	}
	d := typedDriver(t, func(b *sgstream.Builder) {
		in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
		c := sgstream.Count(sgstream.GroupByKey(in, serdes.String, serdes.String), "count", "counts")
		sgstream.To(sgstream.ToStream(c, "changes"), "sink", "out", sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
	}, DefaultPartitions(2))
	type rec = sgstream.Record[string, string]
	pipe := func(r rec, opts ...PipeOpt) {
		t.Helper()
		mustPipe(t, d, "in", serdes.String, serdes.String, r, opts...)
	}
	pipe(rec{Key: "a", Value: "x", Timestamp: 1})
	pipe(rec{Key: "d", Value: "x", Timestamp: 2})
	pipe(rec{Key: "a", Value: "x", Timestamp: 3})
	pipe(rec{Key: "d", Value: "x", Timestamp: 4}, ToPartition(0)) // counted by task 0, written by key to 1

	got, err := ReadTypedOutput(d, "out", serdes.String, serdes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	type out = OutputRecord[string, int64]
	want := []out{
		{Record: sgstream.Record[string, int64]{Key: "a", Value: 1, Timestamp: 1}, Partition: 0},
		{Record: sgstream.Record[string, int64]{Key: "d", Value: 1, Timestamp: 2}, Partition: 1},
		{Record: sgstream.Record[string, int64]{Key: "a", Value: 2, Timestamp: 3}, Partition: 0},
		{Record: sgstream.Record[string, int64]{Key: "d", Value: 1, Timestamp: 4}, Partition: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("out = %+v\nwant %+v", got, want)
	}

	for k, want := range map[string]int32{"a": 0, "d": 1} {
		if p, err := StorePartition(d, "counts", k, serdes.String); err != nil || p != want {
			t.Fatalf("StorePartition(%q) = %d, %v; want %d", k, p, err, want)
		}
	}
	type entry struct {
		n, ts int64
		found bool
	}
	get := func(p int32, k string) entry {
		t.Helper()
		st, err := KVStore(d, "counts", p, serdes.String, serdes.Int64)
		if err != nil {
			t.Fatal(err)
		}
		n, ts, found, err := st.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		return entry{n, ts, found}
	}
	checks := []struct {
		p    int32
		k    string
		want entry
	}{
		{0, "a", entry{2, 3, true}},
		{0, "d", entry{1, 4, true}}, // piped to partition 0 by hand
		{1, "d", entry{1, 2, true}},
		{1, "a", entry{}},
	}
	for _, c := range checks {
		if got := get(c.p, c.k); got != c.want {
			t.Errorf("partition %d key %q = %+v, want %+v", c.p, c.k, got, c.want)
		}
	}
	if _, err := KVStore(d, "counts", 2, serdes.String, serdes.Int64); err == nil || !strings.Contains(err.Error(), `store "counts" has partitions 0 to 1, not 2`) {
		t.Fatalf("partition 2: err = %v", err)
	}
	if _, err := KVStore(d, "nope", 0, serdes.String, serdes.Int64); err == nil || !strings.Contains(err.Error(), `no node of the topology uses store "nope"`) {
		t.Fatalf("unknown store: err = %v", err)
	}
	if err := PipeTyped(d, "in", serdes.String, serdes.String, rec{Key: "a", Value: "x"}, ToPartition(2)); err == nil {
		t.Fatal("piping to partition 2 of a 2-partition topic succeeded")
	}
}

func TestTypedStoreOfIdlePartitionIsEmpty(t *testing.T) {
	d := typedDriver(t, func(b *sgstream.Builder) {
		in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
		sgstream.Count(sgstream.GroupByKey(in, serdes.String, serdes.String), "count", "counts")
	}, DefaultPartitions(2))
	st, err := KVStore(d, "counts", 1, serdes.String, serdes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := st.All(func(string, int64, int64) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("idle partition store: %d entries, err %v; want none", n, err)
	}
}

func TestTypedWindowAndSessionStores(t *testing.T) {
	winKey := sgstream.TimeWindowedSerde[string]{Inner: serdes.String, Size: time.Minute}
	d := typedDriver(t, func(b *sgstream.Builder) {
		in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
		g := sgstream.GroupByKey(in, serdes.String, serdes.String)
		w := sgstream.CountWindowed(sgstream.WindowedBy(g, "tumbling", sgstream.TimeWindows{Size: time.Minute}), "count-win", "win", sgstream.EmitOnUpdate)
		sgstream.To(sgstream.ToStream(w, "win-changes"), "win-sink", "win-out", sgstream.SinkConfig[sgstream.Windowed[string], int64]{Key: winKey, Value: serdes.Int64})
		sgstream.CountSession(sgstream.WindowedBySession(g, "sessions", sgstream.SessionWindows{Gap: 30 * time.Second, Grace: time.Minute}), "count-sess", "sess", sgstream.EmitOnUpdate)
	})
	pipe := func(ts int64) {
		t.Helper()
		mustPipe(t, d, "in", serdes.String, serdes.String, sgstream.Record[string, string]{Key: "a", Value: "x", Timestamp: ts})
	}
	ws, err := WindowStore(d, "win", 0, serdes.String, sgstream.TimestampedValueSerde[int64]{Inner: serdes.Int64})
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(start int64) string {
		t.Helper()
		v, found, err := ws.Fetch("a", start)
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			return "none"
		}
		return strconv.FormatInt(v.Value, 10) + "@" + strconv.FormatInt(v.Timestamp, 10)
	}
	pipe(1_000)
	pipe(2_000)
	if got := fetch(0); got != "2@2000" {
		t.Fatalf("window [0,60000) = %s, want 2@2000", got)
	}
	pipe(61_000)
	// The store keeps a window for size + grace (1m) of stream time.
	if got, got2 := fetch(0), fetch(60_000); got != "none" || got2 != "1@61000" {
		t.Fatalf("windows [0,60000) and [60000,120000) = %s, %s; want none (expired), 1@61000", got, got2)
	}
	got, err := ReadTyped(d, "win-out", winKey, serdes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	type wrec = sgstream.Record[sgstream.Windowed[string], int64]
	want := []wrec{
		{Key: sgstream.Windowed[string]{Key: "a", Start: 0, End: 60_000}, Value: 1, Timestamp: 1_000},
		{Key: sgstream.Windowed[string]{Key: "a", Start: 0, End: 60_000}, Value: 2, Timestamp: 2_000},
		{Key: sgstream.Windowed[string]{Key: "a", Start: 60_000, End: 120_000}, Value: 1, Timestamp: 61_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("win-out = %+v\nwant %+v", got, want)
	}

	ss, err := SessionStore(d, "sess", 0, serdes.String, serdes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	type session struct{ start, end, n int64 }
	var sessions []session
	if err := ss.FindSessions("a", 0, 1<<40, func(start, end, n int64) error {
		sessions = append(sessions, session{start, end, n})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []session{{1_000, 2_000, 2}, {61_000, 61_000, 1}}; !reflect.DeepEqual(sessions, want) {
		t.Fatalf("sessions = %+v, want %+v", sessions, want)
	}

	if _, err := WindowStore(d, "sess", 0, serdes.String, serdes.Int64); err == nil || !strings.Contains(err.Error(), "not a window store") {
		t.Fatalf("window view of a session store: err = %v", err)
	}
	if _, err := SessionStore(d, "win", 0, serdes.String, serdes.Int64); err == nil || !strings.Contains(err.Error(), "not a session store") {
		t.Fatalf("session view of a window store: err = %v", err)
	}
	if _, err := KVStore(d, "win", 0, serdes.String, serdes.Int64); err == nil {
		t.Fatal("key-value view of a window store succeeded")
	}
}

func TestTypedPipeOfWindowedKeyPartitionsByBaseKey(t *testing.T) {
	winKey := sgstream.TimeWindowedSerde[string]{Inner: serdes.String, Size: time.Minute}
	d := typedDriver(t, func(b *sgstream.Builder) {
		in := sgstream.Source(b, "wins", sgstream.SourceConfig[sgstream.Windowed[string], string]{Topic: "wins", Key: winKey, Value: serdes.String, Partitions: 2})
		sgstream.Foreach(in, "drop", func(sgstream.Windowed[string], string) {})
	})
	// "d" is on partition 1 of 2; its windowed key bytes must not be
	// what is hashed.
	mustPipe(t, d, "wins", winKey, serdes.String, sgstream.Record[sgstream.Windowed[string], string]{Key: sgstream.Windowed[string]{Key: "d", Start: 60_000, End: 120_000}, Value: "x"})
	tasks := d.d.Tasks()
	if len(tasks) != 1 || tasks[0].ID().Partition != 1 {
		var ids []sgstream.TaskID
		for _, tk := range tasks {
			ids = append(ids, tk.ID())
		}
		t.Fatalf("tasks = %v, want one on partition 1", ids)
	}
}
