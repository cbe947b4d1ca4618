package sgkafka

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// globalJoinBuild is a stream-global table left join: each stream record
// "ref:payload" looks ref up in the global table read from global (store
// "g-store"), and the result "payload+name" goes to out under the stream's
// key. A left join makes misses visible ("payload+").
func globalJoinBuild(global string) func(in, out string) func(*sgstream.Builder) {
	return func(in, out string) func(*sgstream.Builder) {
		return func(b *sgstream.Builder) {
			str := sgstream.SourceConfig[string, string]{Key: serdes.String, Value: serdes.String}
			gcfg, scfg := str, str
			gcfg.Topic, scfg.Topic = global, in
			g := sgstream.GlobalTableSource(b, "g", gcfg, "g-store")
			s := sgstream.Source(b, "src", scfg)
			j := sgstream.JoinStreamGlobal(s, g, "j", sgstream.LeftJoin,
				func(_ string, v string) string { ref, _, _ := strings.Cut(v, ":"); return ref },
				sgstream.ValueJoiner(func(_ string, l, r string) string { _, p, _ := strings.Cut(l, ":"); return p + "+" + r }))
			sgstream.To(j, "sink", out, sgstream.SinkConfig[string, string]{Key: serdes.String, Value: serdes.String})
		}
	}
}

func decodeString(k, v []byte) (string, string) { return string(k), string(v) }

// globalRecords makes n global table records: ref<i%keys> → name<gen>-<i>,
// with a tombstone for every del-th record (del 0: none). Timestamps run
// from tsBase+ts0.
func globalRecords(topic string, n, keys, del int, gen string, ts0 int64) []sgstream.RawRecord {
	out := make([]sgstream.RawRecord, n)
	for i := range out {
		r := sgstream.RawRecord{Topic: topic, Partition: -1, Key: []byte(fmt.Sprintf("ref%d", i%keys)),
			Value: []byte(fmt.Sprintf("name%s-%d", gen, i)), Timestamp: tsBase + ts0 + int64(i)}
		if del > 0 && i%del == del-1 {
			r.Value = nil
		}
		out[i] = r
	}
	return out
}

// streamRecords makes n stream records key<i%7> → ref<i%refs>:p<gen>-<i>;
// refs above the global table's keys miss.
func streamRecords(topic string, n, refs int, gen string, ts0 int64) []sgstream.RawRecord {
	out := make([]sgstream.RawRecord, n)
	for i := range out {
		out[i] = sgstream.RawRecord{Topic: topic, Partition: -1, Key: []byte(fmt.Sprintf("key%d", i%7)),
			Value: []byte(fmt.Sprintf("ref%d:p%s-%d", i%refs, gen, i)), Timestamp: tsBase + ts0 + int64(i)}
	}
	return out
}

func concat(parts ...[]sgstream.RawRecord) []sgstream.RawRecord {
	var out []sgstream.RawRecord
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// globalTaskID is the task of the global sub-topology of tp.
func globalTaskID(t testing.TB, h *sgstream.Topology) engine.TaskID {
	tp := (*engine.Handle)(h).Topology()
	for _, s := range tp.SubTopologies() {
		if tp.IsGlobal(s) {
			return engine.TaskID{Sub: s.ID, Partition: engine.GlobalPartition}
		}
	}
	t.Fatal("no global sub-topology")
	return engine.TaskID{}
}

// globalJoinSetup creates the topics of globalJoinBuild's topology (the
// global topic gt with 3 partitions, deleted with the app's topics; input
// and output with 2) and builds it.
func globalJoinSetup(t *testing.T, ev testEnv) (gt string, tp *sgstream.Topology) {
	gt = ev.appID + "-globals"
	createTopic(t, ev.brokers, gt, 3)
	createTopic(t, ev.brokers, ev.in, 2)
	createTopic(t, ev.brokers, ev.out, 2)
	return gt, ev.topology(t, globalJoinBuild(gt))
}

// The global table is bootstrapped from all its partitions before the
// stream is processed: the output equals the test driver's over the global
// records followed by the stream records.
func TestGlobalTableJoinMatchesDriver(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		gt, tp := globalJoinSetup(t, ev)
		grecs := globalRecords(gt, 120, 40, 9, "a", 0)
		srecs := streamRecords(ev.in, 300, 50, "a", 1000)
		produce(t, ev.brokers, 3, grecs)
		produce(t, ev.brokers, 2, srecs)
		dir := t.TempDir()
		r := startEngine(t, tp, Config{Brokers: ev.brokers, StateDir: dir, Guarantee: ExactlyOnceV2,
			CommitInterval: 100 * time.Millisecond, IdleExit: 500 * time.Millisecond, Workers: 2})
		if err := r.wait(t, 90*time.Second); err != nil {
			t.Fatal(err)
		}
		expectDriverOutput(t, ev, tp, 2, concat(grecs, srecs), decodeString, "output")
		gid := globalTaskID(t, tp)
		if n := r.e.RestoredRecords(gid); n != int64(len(grecs)) {
			t.Errorf("global bootstrap restored %d records, want %d", n, len(grecs))
		}
		if _, err := os.Stat(engine.StoreDir(dir, gid, "g-store")); err != nil {
			t.Errorf("global store not under <state-dir>/global: %v", err)
		}
	})
}

// Updates of the global table while the stream runs are seen by the
// lookups that follow them (two workers read the store while the global
// goroutine writes it).
func TestGlobalTableUpdatesWhileRunning(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		gt, tp := globalJoinSetup(t, ev)
		g1 := globalRecords(gt, 60, 30, 0, "a", 0)
		s1 := streamRecords(ev.in, 200, 40, "a", 1000)
		// g2 renames every key, deletes a third and adds ref30..ref39.
		g2 := globalRecords(gt, 40, 40, 3, "b", 2000)
		s2 := streamRecords(ev.in, 200, 40, "b", 3000)
		produce(t, ev.brokers, 3, g1)
		r := startEngine(t, tp, Config{Brokers: ev.brokers, StateDir: t.TempDir(), Guarantee: AtLeastOnce,
			CommitInterval: 100 * time.Millisecond, Workers: 2})
		produce(t, ev.brokers, 2, s1)
		waitFor(t, 60*time.Second, "first stream batch processed", func() bool { return r.e.Processed() >= int64(len(s1)) })
		produce(t, ev.brokers, 3, g2)
		waitFor(t, 60*time.Second, "global updates applied", func() bool {
			return r.e.globalApplied.Load() >= int64(len(g1)+len(g2))
		})
		produce(t, ev.brokers, 2, s2)
		waitFor(t, 60*time.Second, "second stream batch processed", func() bool {
			return r.e.Processed() >= int64(len(s1)+len(s2))
		})
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		expectDriverOutput(t, ev, tp, 2, concat(g1, s1, g2, s2), decodeString, "output")
	})
}

// A restart resumes the global store from its committed checkpoint: only
// the records produced since are restored, and the output is still the
// driver's.
func TestGlobalTableRestartRestoresTail(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		gt, tp := globalJoinSetup(t, ev)
		g1 := globalRecords(gt, 200, 50, 7, "a", 0)
		s1 := streamRecords(ev.in, 150, 60, "a", 1000)
		g2 := globalRecords(gt, 20, 60, 4, "b", 2000)
		s2 := streamRecords(ev.in, 150, 60, "b", 3000)
		produce(t, ev.brokers, 3, g1)
		produce(t, ev.brokers, 2, s1)
		dir := t.TempDir()
		cfg := Config{Brokers: ev.brokers, StateDir: dir, Guarantee: ExactlyOnceV2,
			CommitInterval: 100 * time.Millisecond, IdleExit: 500 * time.Millisecond}
		gid := globalTaskID(t, tp)
		r1 := startEngine(t, tp, cfg)
		if err := r1.wait(t, 90*time.Second); err != nil {
			t.Fatal(err)
		}
		if n := r1.e.RestoredRecords(gid); n != int64(len(g1)) {
			t.Fatalf("first run restored %d global records, want %d", n, len(g1))
		}
		produce(t, ev.brokers, 3, g2)
		produce(t, ev.brokers, 2, s2)
		r2 := startEngine(t, tp, cfg)
		if err := r2.wait(t, 90*time.Second); err != nil {
			t.Fatal(err)
		}
		n := r2.e.RestoredRecords(gid)
		if total := int64(len(g1) + len(g2)); n != int64(len(g2)) || n >= total {
			t.Fatalf("restart restored %d global records, want only the %d past the checkpoint (of %d)", n, len(g2), total)
		}
		expectDriverOutput(t, ev, tp, 2, concat(g1, s1, g2, s2), decodeString, "output")
	})
}

// A global store's readers and its writer may run at once (run with
// -race): every lookup sees a whole value, and readers cannot write.
func TestGlobalStoreConcurrentAccess(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		t.Run(fmt.Sprintf("persistent=%v", persistent), func(t *testing.T) {
			var kv sgstate.KeyValueStore = sgstate.NewMemoryKeyValue("s")
			if persistent {
				kv = sgstate.NewPebbleKeyValue("s", nil)
			}
			if err := kv.Init(&sgstate.StoreContext{Dir: t.TempDir()}); err != nil {
				t.Fatal(err)
			}
			c := &globalCore{kv: kv}
			w := globalKV{globalView{c}}
			defer w.Close()
			view := globalView{c}
			if err := view.Put([]byte("k"), []byte("v")); err != errGlobalReadOnly {
				t.Fatalf("Put through the read-only view: %v", err)
			}
			const keys, rounds = 8, 400
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < rounds; i++ {
					k := fmt.Sprintf("k%d", i%keys)
					if err := w.Put([]byte(k), []byte(strings.Repeat(k, 1+i%5))); err != nil {
						t.Error(err)
						return
					}
					if i%50 == 49 {
						if err := w.Commit(map[string]int64{"t-0": int64(i)}); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
			for r := 0; r < 4; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < rounds; i++ {
						k := fmt.Sprintf("k%d", i%keys)
						v, ok, err := view.Get([]byte(k))
						if err != nil {
							t.Error(err)
							return
						}
						if ok && (len(v)%len(k) != 0 || strings.ReplaceAll(string(v), k, "") != "") {
							t.Errorf("torn value for %s: %q", k, v)
							return
						}
						if i%100 == 0 {
							if err := view.All(func(k, v []byte) error { _, _, err := view.Get(k); return err }); err != nil {
								t.Error(err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
