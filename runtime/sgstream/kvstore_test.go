package sgstream

import (
	"fmt"
	"testing"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// captured is a engine.Collector that keeps what a task sends.
type captured struct{ recs []RawRecord }

func (c *captured) Send(topic string, partition int32, key, value []byte, ts int64, headers []Header, _ []byte) error {
	c.recs = append(c.recs, copyRaw(RawRecord{Topic: topic, Partition: partition, Key: key, Value: value, Timestamp: ts, Headers: headers}))
	return nil
}

func (c *captured) take(topic string, dec func([]byte) string) []string {
	if dec == nil {
		dec = func(b []byte) string { return string(b) }
	}
	var out []string
	var rest []RawRecord
	for _, r := range c.recs {
		if r.Topic != topic {
			rest = append(rest, r)
			continue
		}
		v := "null"
		if r.Value != nil {
			v = dec(r.Value)
		}
		out = append(out, fmt.Sprintf("%s=%s@%d", r.Key, v, r.Timestamp))
	}
	c.recs = rest
	return out
}

// cachedTask runs build's sub-topology 0 as one task with a record cache,
// committing only when the test says so (as the Kafka engine does).
func cachedTask(t *testing.T, build func(*Builder), cacheBytes int64) (*task, *captured) {
	t.Helper()
	return bareTask(t, build, engine.TaskConfig{CacheMaxBytes: cacheBytes})
}

// bareTask runs build's sub-topology 0 as one task outside the testDriver,
// with cfg's settings and a captured collector; it commits only when the
// test says so. Without cfg.Stores, a testDriver of the topology provides
// the stores.
func bareTask(t *testing.T, build func(*Builder), cfg engine.TaskConfig) (*task, *captured) {
	t.Helper()
	tp, err := newTopology("app", build)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Stores == nil {
		if cfg.Stores, err = newTestDriver(tp, engine.DriverConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	c := &captured{}
	cfg.Collector = c
	task, err := tp.newTask(engine.TaskID{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Close() })
	return task, c
}

func procS(t *testing.T, task *task, topic, key, value string, ts int64) {
	t.Helper()
	if err := task.Process(&RawRecord{Topic: topic, Key: strBytes(key), Value: strBytes(value), Timestamp: ts}); err != nil {
		t.Fatal(err)
	}
}

func TestCacheCoalescesUpdatesUntilCommit(t *testing.T) {
	task, c := cachedTask(t, countTopology, 1<<20)
	procS(t, task, "in", "a", "x", 1)
	procS(t, task, "in", "a", "x", 2)
	procS(t, task, "in", "b", "x", 3)
	procS(t, task, "in", "a", "x", 4)
	if got := c.take("out", decI64); len(got) != 0 {
		t.Fatalf("forwarded before the flush: %q", got)
	}
	if got := c.take("app-counts-changelog", decI64); len(got) != 0 {
		t.Fatalf("logged before the flush: %q", got)
	}
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	// Latest value per key, keys in the order of their last update.
	wantOut(t, c.take("out", decI64), "b=1@3", "a=3@4")
	if got := c.take("app-counts-changelog", func(b []byte) string { return "" }); len(got) != 2 {
		t.Fatalf("changelog after flush: %q", got)
	}
	procS(t, task, "in", "a", "x", 5)
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantOut(t, c.take("out", decI64), "a=4@5")
}

func TestCacheDropsKeyCreatedAndDeletedBetweenFlushes(t *testing.T) {
	task, c := cachedTask(t, func(b *Builder) {
		tb := TableSource(b, "t", strSrc("in"), "t-store")
		To(ToStream(tb, "s"), "sink", "out", strSink())
	}, 1<<20)
	procS(t, task, "in", "a", "1", 1)
	procS(t, task, "in", "a", nullStr, 2)
	procS(t, task, "in", "b", "1", 3)
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantOut(t, c.take("out", nil), "b=1@3")
	procS(t, task, "in", "b", "2", 4)
	procS(t, task, "in", "b", nullStr, 5) // existed before: the delete is forwarded
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantOut(t, c.take("out", nil), "b=null@5")
}

func TestCacheEvictionFlushesEarly(t *testing.T) {
	task, c := cachedTask(t, countTopology, 1) // every entry is over budget
	procS(t, task, "in", "a", "x", 1)
	procS(t, task, "in", "a", "x", 2)
	wantOut(t, c.take("out", decI64), "a=1@1", "a=2@2")
}

func TestCacheAbortDropsDirtyEntries(t *testing.T) {
	task, c := cachedTask(t, countTopology, 1<<20)
	procS(t, task, "in", "a", "x", 1)
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	procS(t, task, "in", "a", "x", 2)
	if err := task.Abort(); err != nil {
		t.Fatal(err)
	}
	procS(t, task, "in", "a", "x", 3)
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantOut(t, c.take("out", decI64), "a=1@1", "a=2@3")
}

func TestDriverWithCacheMatchesUncachedOutput(t *testing.T) {
	d := newTDrv(t, countTopology, CacheMaxBytes(1<<20))
	d.pipeS("in", "a", "x", 1)
	d.pipeS("in", "a", "x", 2)
	wantOut(t, d.outS("out", decI64), "a=1@1", "a=2@2")
}

func TestCacheRangeReadFlushesAndSeesCachedWrites(t *testing.T) {
	task, c := cachedTask(t, countTopology, 1<<20)
	procS(t, task, "in", "a", "x", 1)
	procS(t, task, "in", "b", "x", 2)
	kv, err := openKVStore(task, "counts", serdes.String, serdes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := kv.All(func(k string, v int64, ts int64) error {
		got = append(got, fmt.Sprintf("%s=%d@%d", k, v, ts))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, "a=1@1", "b=1@2")
	// The range read flushed the store's namespace, forwarding its updates.
	wantOut(t, c.take("out", decI64), "a=1@1", "b=1@2")
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantOut(t, c.take("out", decI64))
}

func TestCacheStartsAfreshWhenTaskReopens(t *testing.T) {
	task, c := cachedTask(t, countTopology, 1<<20)
	procS(t, task, "in", "a", "x", 1)
	// Closed without commit: the dirty entry is dropped with the staged
	// writes, never forwarded.
	if err := task.Close(); err != nil {
		t.Fatal(err)
	}
	if err := task.Init(); err != nil {
		t.Fatal(err)
	}
	procS(t, task, "in", "b", "x", 2)
	if err := task.Commit(nil); err != nil {
		t.Fatal(err)
	}
	wantOut(t, c.take("out", decI64), "b=1@2")
}

// A cached aggregation reads the value it replaces at flush only when its
// table sends old values downstream: then the change carries it, otherwise
// (Kafka's CachingKeyValueStore without sendOldValues) it does not.
func TestCacheOldValuesOnlyWhenSent(t *testing.T) {
	for _, send := range []bool{false, true} {
		t.Run(fmt.Sprint("send=", send), func(t *testing.T) {
			var changes []string
			build := func(b *Builder) {
				s := Source(b, "in", SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
				tbl := Count(GroupByKey(s, serdes.String, serdes.String), "count", "counts")
				if send {
					sendOldValues(tbl)
				}
				tbl.to(nodeFunc[string, tableChange[int64]](func(r Record[string, tableChange[int64]]) error {
					old := "null"
					if !r.Value.OldNull {
						old = fmt.Sprint(r.Value.Old)
					}
					changes = append(changes, fmt.Sprintf("%s=%d<-%s", r.Key, r.Value.New, old))
					return nil
				}))
			}
			task, _ := cachedTask(t, build, 1<<20)
			procS(t, task, "in", "a", "x", 1)
			procS(t, task, "in", "a", "x", 2)
			if err := task.Commit(nil); err != nil {
				t.Fatal(err)
			}
			procS(t, task, "in", "a", "x", 3)
			if err := task.Commit(nil); err != nil {
				t.Fatal(err)
			}
			want := "[a=2<-null a=3<-null]"
			if send {
				want = "[a=2<-null a=3<-2]"
			}
			if got := fmt.Sprint(changes); got != want {
				t.Fatalf("changes = %s, want %s", got, want)
			}
		})
	}
}
