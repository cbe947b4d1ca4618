package sgstream

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

func countTopology(b *Builder) {
	s := Source(b, "src", strSrc("in"))
	c := Count(GroupByKey(s, serdes.String, serdes.String), "count", "counts")
	To(ToStream(c, "s"), "sink", "out", i64Sink())
}

func TestPebbleStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	d := newTDrv(t, countTopology, StateDir(dir), DefaultPartitions(2))
	ka, kb := keyOnPartition(t, "a", 0, 2), keyOnPartition(t, "b", 1, 2)
	d.pipeS("in", ka, "x", 1)
	d.pipeS("in", ka, "x", 2)
	d.pipeS("in", kb, "x", 3)
	wantOut(t, d.outS("out", decI64), ka+"=1@1", ka+"=2@2", kb+"=1@3")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"0_0", "0_1"} {
		if _, err := os.Stat(filepath.Join(dir, p, "counts")); err != nil {
			t.Fatalf("store dir of task %s: %v", p, err)
		}
	}

	d2 := newTDrv(t, countTopology, StateDir(dir), DefaultPartitions(2))
	d2.pipeS("in", ka, "x", 4)
	d2.pipeS("in", kb, "x", 5)
	wantOut(t, d2.outS("out", decI64), ka+"=3@4", kb+"=2@5")
}

func TestInMemoryStateIsLostOnRestart(t *testing.T) {
	d := newTDrv(t, countTopology)
	d.pipeS("in", "a", "x", 1)
	d.Close()
	d2 := newTDrv(t, countTopology)
	d2.pipeS("in", "a", "x", 2)
	wantOut(t, d2.outS("out", decI64), "a=1@2")
}

// TestLoggedStoreWritesKafkaTimestampedChangelog: the store holds
// ValueAndTimestamp, but its changelog holds what Kafka Streams' timestamped
// stores log, the raw value with the timestamp as the record's, so either
// application can restore the other's changelog.
func TestLoggedStoreWritesKafkaTimestampedChangelog(t *testing.T) {
	d := newTDrv(t, countTopology, DefaultPartitions(2))
	kb := keyOnPartition(t, "b", 1, 2)
	d.pipeS("in", kb, "x", 7)
	cl := d.Output("app-counts-changelog")
	if len(cl) != 1 {
		t.Fatalf("changelog records: %+v", cl)
	}
	r := cl[0]
	if string(r.Key) != kb || r.Partition != 1 || r.Timestamp != 7 {
		t.Fatalf("changelog record %q partition %d ts %d", r.Key, r.Partition, r.Timestamp)
	}
	// The raw value: the count 1, as Kafka's LongSerializer writes it.
	if len(r.Value) != 8 || binary.BigEndian.Uint64(r.Value) != 1 {
		t.Fatalf("changelog value %x", r.Value)
	}
}

func TestKVStoreTombstoneAndTimestamp(t *testing.T) {
	s := sgstate.NewMemoryKeyValue("s")
	if err := s.Init(nil); err != nil {
		t.Fatal(err)
	}
	kv, err := NewKVStore(s, serdes.String, serdes.String)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Put("a", "v", 42); err != nil {
		t.Fatal(err)
	}
	if v, ts, ok, err := kv.Get("a"); err != nil || !ok || v != "v" || ts != 42 {
		t.Fatalf("get: %q %d %v %v", v, ts, ok, err)
	}
	raw, _, _ := s.Get([]byte("a"))
	if string(raw) != "\x00\x00\x00\x00\x00\x00\x00\x2av" {
		t.Fatalf("stored bytes %x", raw)
	}
	if err := kv.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := kv.Get("a"); ok {
		t.Fatal("deleted key found")
	}
	if _, err := NewKVStore(sgstate.Store(notKV{}), serdes.String, serdes.String); err == nil {
		t.Fatal("non key-value store accepted")
	}
}

type notKV struct{}

func (notKV) Name() string                     { return "x" }
func (notKV) Init(*sgstate.StoreContext) error { return nil }
func (notKV) Flush() error                     { return nil }
func (notKV) Close() error                     { return nil }
