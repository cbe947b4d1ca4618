package sgkafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/runtime/sgtest"
	"github.com/streamgen/streamgen/serdes"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// countBuild is source "in" → count by key (store "counts") → sink "out".
func countBuild(in, out string) func(b *sgstream.Builder) {
	return func(b *sgstream.Builder) {
		s := sgstream.Source(b, "src", sgstream.SourceConfig[string, string]{Topic: in, Key: serdes.String, Value: serdes.String})
		c := sgstream.Count(sgstream.GroupByKey(s, serdes.String, serdes.String), "count", "counts")
		sgstream.To(sgstream.ToStream(c, "s"), "sink", out, sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
	}
}

// windowedBuild counts per key in 10 ms tumbling windows (store "wcounts").
func windowedBuild(in, out string) func(b *sgstream.Builder) {
	return windowedBuildWith(sgstream.TimeWindows{Size: 10 * time.Millisecond, Grace: time.Hour}, sgstream.EmitOnUpdate)(in, out)
}

// windowedBuildWith counts per key in windows w of 10 ms (store
// "wcounts"), emitting as emit says.
func windowedBuildWith(w sgstream.TimeWindows, emit sgstream.EmitStrategy) func(in, out string) func(b *sgstream.Builder) {
	return func(in, out string) func(b *sgstream.Builder) {
		return func(b *sgstream.Builder) {
			s := sgstream.Source(b, "src", sgstream.SourceConfig[string, string]{Topic: in, Key: serdes.String, Value: serdes.String})
			c := sgstream.CountWindowed(sgstream.WindowedBy(sgstream.GroupByKey(s, serdes.String, serdes.String), "w", w), "count", "wcounts", emit)
			ks := sgstream.TimeWindowedSerde[string]{Inner: serdes.String, Size: w.Size}
			sgstream.To(sgstream.ToStream(c, "s"), "sink", out, sgstream.SinkConfig[sgstream.Windowed[string], int64]{
				Key: ks, Value: serdes.Int64})
		}
	}
}

// countTopology creates topics in and out (whose names start with ev's,
// deleted after the test) and the counting topology between them.
func countTopology(t testing.TB, ev testEnv, appID, in, out string, partitions int) *sgstream.Topology {
	t.Helper()
	t.Cleanup(func() {
		deleteTopicsWithPrefix(t, ev.brokers, ev.in)
		deleteTopicsWithPrefix(t, ev.brokers, ev.out)
	})
	createTopic(t, ev.brokers, in, partitions)
	createTopic(t, ev.brokers, out, partitions)
	tp, err := sgstream.NewTopology(appID, countBuild(in, out))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func uniq(prefix string) string {
	var b [4]byte
	rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// newFake starts an in-process kfake cluster.
func newFake(t testing.TB) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "250"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func newClient(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopic(t testing.TB, brokers []string, name string, partitions int) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, brokers, kgo.MetadataMinAge(100*time.Millisecond)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(partitions), -1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %q: %v", name, err)
	}
	if err := waitTopics(ctx, adm, []string{name}); err != nil {
		t.Fatal(err)
	}
}

// tsBase is a recent timestamp: the real broker deletes records older
// than its retention (7 days), so timestamps near 0 would vanish under a
// test's feet when the retention check runs.
var tsBase = time.Now().Truncate(time.Hour).UnixMilli()

// inputRecords makes n records over keys key0..key(k-1), timestamps
// tsBase+1..tsBase+n.
func inputRecords(topic string, n, keys int) []sgstream.RawRecord {
	out := make([]sgstream.RawRecord, n)
	for i := range out {
		out[i] = sgstream.RawRecord{Topic: topic, Partition: -1, Key: []byte(fmt.Sprintf("key%d", i%keys)),
			Value: []byte(fmt.Sprintf("v%d", i)), Timestamp: tsBase + int64(i+1)}
	}
	return out
}

// produce writes records partitioned by Kafka's default partitioner.
func produce(t testing.TB, brokers []string, partitions int, recs []sgstream.RawRecord) {
	t.Helper()
	cl := newClient(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var krs []*kgo.Record
	for _, r := range recs {
		krs = append(krs, &kgo.Record{Topic: r.Topic, Partition: sgpartition.Partition(r.Key, int32(partitions)),
			Key: r.Key, Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readCommitted reads every committed record of topic (up to its last
// stable offset now).
func readCommitted(t testing.TB, brokers []string, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, brokers))
	ends := stableOffsets(ctx, t, adm, topic)
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	if len(want) == 0 {
		return nil
	}
	cl := newClient(t, brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxWait(100*time.Millisecond))
	var out []*kgo.Record
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %q: %v (still waiting for %v)", topic, ctx.Err(), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
		})
	}
	return out
}

// stableOffsets returns the topic's last stable offsets. A transaction's
// commit markers are written after EndTxn returns, so right after an
// application stops the last stable offset can still lag the log end
// although no transaction is open: it waits up to 10 s for the two to meet
// and then takes the stable offsets as they are (a transaction a killed
// process left open holds them back until it times out).
func stableOffsets(ctx context.Context, t testing.TB, adm *kadm.Client, topic string) kadm.ListedOffsets {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		end, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		met := true
		end.Each(func(o kadm.ListedOffset) {
			if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset < o.Offset {
				met = false
			}
		})
		if met || time.Now().After(deadline) {
			return stable
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// byKey renders records as key → values in offset order per partition,
// which is the order per key because a key lives on one partition.
func byKey(recs []*kgo.Record, decode func(k, v []byte) (string, string)) map[string][]string {
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	out := map[string][]string{}
	for _, r := range recs {
		k, v := decode(r.Key, r.Value)
		out[k] = append(out[k], fmt.Sprintf("%s@%d", v, r.Timestamp.UnixMilli()))
	}
	return out
}

func decodeCount(k, v []byte) (string, string) {
	n, err := serdes.Int64.Decode(v)
	if err != nil {
		return string(k), "bad:" + err.Error()
	}
	return string(k), fmt.Sprint(n)
}

func decodeWindowedCount(k, v []byte) (string, string) {
	ks := sgstream.TimeWindowedSerde[string]{Inner: serdes.String, Size: 10 * time.Millisecond}
	w, err := ks.Decode(k)
	if err != nil {
		return "bad", err.Error()
	}
	n, _ := serdes.Int64.Decode(v)
	return fmt.Sprintf("%s[%d,%d)", w.Key, w.Start, w.End), fmt.Sprint(n)
}

// driverOutput runs recs through sgtest's Driver (the replay
// reference) and renders the output like byKey.
func driverOutput(t testing.TB, tp *sgstream.Topology, partitions int, out string, recs []sgstream.RawRecord, decode func(k, v []byte) (string, string)) map[string][]string {
	t.Helper()
	d, err := sgtest.New(tp, sgtest.DefaultPartitions(partitions))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var krs []*kgo.Record
	for _, r := range recs {
		if err := d.Pipe(r); err != nil {
			t.Fatal(err)
		}
		for _, o := range d.Output(out) {
			krs = append(krs, &kgo.Record{Key: o.Key, Value: o.Value, Partition: o.Partition, Offset: int64(len(krs)), Timestamp: time.UnixMilli(o.Timestamp)})
		}
	}
	return byKey(krs, decode)
}

// expectDriverOutput fails t unless the committed records of ev.out, by
// key, are what the test driver computes from recs over partitions
// partitions: the check every engine test ends with. what names the run
// in the failure ("output", "output after restart").
func expectDriverOutput(t testing.TB, ev testEnv, tp *sgstream.Topology, partitions int, recs []sgstream.RawRecord, decode func(k, v []byte) (string, string), what string) {
	t.Helper()
	got := byKey(readCommitted(t, ev.brokers, ev.out), decode)
	want := driverOutput(t, tp, partitions, ev.out, recs, decode)
	if d := diffOutputs(want, got); d != "" {
		t.Fatalf("%s differs from the test driver:\n%s", what, d)
	}
}

// awaitDriverOutput waits (up to a minute) until the committed records of
// ev.out are what the test driver computes from recs. A test that restarts
// an engine after a crash cannot know how many input records the crash left
// to reprocess, so it cannot wait for a processed count; it waits for the
// output instead, then stops the engine and checks with expectDriverOutput,
// whose diff names what is missing if the wait ran out.
func awaitDriverOutput(t testing.TB, ev testEnv, tp *sgstream.Topology, partitions int, recs []sgstream.RawRecord, decode func(k, v []byte) (string, string)) {
	t.Helper()
	want := driverOutput(t, tp, partitions, ev.out, recs, decode)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if diffOutputs(want, byKey(readCommitted(t, ev.brokers, ev.out), decode)) == "" {
			return
		}
	}
}

func diffOutputs(want, got map[string][]string) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		w, g := strings.Join(want[k], " "), strings.Join(got[k], " ")
		if w != g {
			fmt.Fprintf(&b, "key %s:\n  want %s\n  got  %s\n", k, w, g)
		}
	}
	return b.String()
}

// testLogger logs to the test when -v, else discards.
func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() || os.Getenv("SGKAFKA_LOG") != "" {
		lv := slog.LevelInfo
		if os.Getenv("SGKAFKA_LOG") == "debug" {
			lv = slog.LevelDebug
		}
		return slog.New(slog.NewTextHandler(&tlogWriter{t: t}, &slog.HandlerOptions{Level: lv}))
	}
	return slog.New(slog.DiscardHandler)
}

type tlogWriter struct {
	mu sync.Mutex
	t  testing.TB
}

func (w *tlogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// running is an engine running in a goroutine.
type running struct {
	e      *Engine
	cancel context.CancelFunc
	done   chan error
}

func startEngine(t testing.TB, tp *sgstream.Topology, cfg Config) *running {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	e, err := New(tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{e: e, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(60 * time.Second):
			t.Error("engine did not stop")
		}
	})
	return r
}

// stop stops the engine cleanly and returns its error.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("engine did not stop")
		return nil
	}
}

// wait waits for the engine to end on its own (idle exit, crash hook).
func (r *running) wait(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("engine still running after %v (state %s, processed %d)", d, r.e.State(), r.e.Processed())
		return nil
	}
}

// waitProcessed waits until the engine processed at least n records and
// committed after that.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
