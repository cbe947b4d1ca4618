package sgstream_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// In-process benchmarks of whole tasks (issue 6, part 2): no broker, but
// the engine's path through a task. Each input record is decoded by the
// task's source, runs through the operators, and every output, repartition
// and changelog record goes to a collector that copies key and value into a
// new record, as the Kafka engine's collector does before it hands the
// record to franz-go. Every commitEvery records the task commits the way
// the engine commits a transaction: FlushCaches (the record cache forwards
// its dirty keys), the produced records are dropped (the broker has them),
// then Commit applies the staged store writes with a checkpoint.
//
// One benchmark op is one input record, so ns/op and allocs/op are per
// input record. Each benchmark also reports:
//   - records/s: input records per second of wall time;
//   - records/cpu-s: input records per CPU second of the whole process
//     (garbage collection on the other core included), the per-core rate
//     the targets are about;
//   - out/record: records sent to the collector per input record.
//
// Run them with
//
//	go test -run '^$' -bench '^BenchmarkInproc' -benchmem ./runtime/sgstream/
//
// Results and targets are in docs/benchmarks-runtime.md.

const (
	// benchCommitEvery is the number of input records per commit. The
	// engine commits every 100 ms under exactly-once, which at these rates
	// is far more records; committing more often is the harder case.
	benchCommitEvery = 10_000
	// benchCacheBytes is the engine's default record cache (10 MiB; one
	// task gets all of it here).
	benchCacheBytes = 10 << 20
	// benchKeys is the number of distinct keys of the count and join
	// inputs; the windowed inputs use benchPages.
	benchKeys  = 10_000
	benchPages = 1_000
	// benchT0 is the event time of the first record; records are benchStep
	// ms apart, as in the e2e throughput measurement of the windows example.
	benchT0   = 1_700_000_000_000
	benchStep = 10
)

// benchCollector copies what it is sent, as the engine's collector does,
// and drops it at commit.
type benchCollector struct {
	out []*benchRecord
	n   int64
}

type benchRecord struct {
	topic      string
	partition  int32
	key, value []byte
	ts         int64
}

func (c *benchCollector) Send(topic string, partition int32, key, value []byte, ts int64, _ []sgstream.Header, _ []byte) error {
	c.out = append(c.out, &benchRecord{topic: topic, partition: partition, key: bytes.Clone(key), value: bytes.Clone(value), ts: ts})
	c.n++
	return nil
}

// benchStores opens built-in stores in memory or on Pebble under dir, as
// the engine's store provider does.
type benchStores struct {
	dir        string
	persistent bool
}

func (p *benchStores) OpenStore(t engine.Task, spec *sgstream.StoreSpec) (sgstate.Store, error) {
	s, err := engine.NewBuiltinStore(spec, p.persistent && !spec.InMemory, nil)
	if err != nil {
		return nil, err
	}
	ctx := t.StoreContext(spec, nil)
	ctx.Dir = engine.StoreDir(p.dir, t.ID(), spec.Name)
	if err := os.MkdirAll(ctx.Dir, 0o755); err != nil {
		return nil, err
	}
	return s, s.Init(ctx)
}

// benchInput makes the i-th input record of a benchmark; the same
// RawRecord is reused, as the engine reuses its own.
type benchInput func(i int, raw *sgstream.RawRecord)

// runTask benchmarks the task of the sub-topology reading topics[0] on
// partition 0 of the topology build.
func runTask(b *testing.B, build func(*sgstream.Builder), persistent bool, input benchInput) {
	b.Helper()
	h, err := sgstream.NewTopology("bench", build)
	if err != nil {
		b.Fatal(err)
	}
	tp := (*engine.Handle)(h).Topology()
	var in sgstream.RawRecord
	input(0, &in)
	sub := tp.SubTopologyOf(in.Topic)
	coll := &benchCollector{}
	t, err := tp.NewTask(engine.TaskID{Sub: sub.ID}, engine.TaskConfig{
		Collector:     coll,
		Stores:        &benchStores{dir: b.TempDir(), persistent: persistent},
		CacheMaxBytes: benchCacheBytes,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := t.Init(); err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	var offset int64
	commit := func() {
		if err := t.FlushCaches(); err != nil {
			b.Fatal(err)
		}
		clear(coll.out)
		coll.out = coll.out[:0]
		if err := t.Commit(map[string]int64{"bench": offset}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		input(i, &in)
		in.Offset = offset
		offset++
		if err := t.Process(&in); err != nil {
			b.Fatal(err)
		}
		if i%benchCommitEvery == benchCommitEvery-1 {
			commit()
		}
	}
	commit()
	b.StopTimer()
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "records/cpu-s")
	}
	b.ReportMetric(float64(coll.n)/float64(b.N), "out/record")
}

// keyTable pre-encodes n string keys prefix-0 … prefix-(n-1).
func keyTable(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(prefix + strconv.Itoa(i))
	}
	return out
}

// scatter spreads i over [0, n) without a visible pattern (a fixed
// multiplicative hash), so keys are not visited in order.
func scatter(i, n int) int { return int(uint64(i) * 0x9E3779B97F4A7C15 >> 11 % uint64(n)) }

var (
	benchKeyBytes  = keyTable("user-", benchKeys)
	benchPageBytes = keyTable("page-", benchPages)
	benchValue     = []byte(strings.Repeat("v", 100))
)

func stringSink[V any](v serdes.Serde[V]) sgstream.SinkConfig[string, V] {
	return sgstream.SinkConfig[string, V]{Key: serdes.String, Value: v}
}

func windowedSink(size time.Duration) sgstream.SinkConfig[sgstream.Windowed[string], int64] {
	ks := sgstream.TimeWindowedSerde[string]{Inner: serdes.String, Size: size}
	return sgstream.SinkConfig[sgstream.Windowed[string], int64]{Key: ks, Value: serdes.Int64}
}

func source(b *sgstream.Builder, topic string) sgstream.Stream[string, string] {
	return sgstream.Source(b, topic, sgstream.SourceConfig[string, string]{Topic: topic, Key: serdes.String, Value: serdes.String})
}

// buildStateless is Kafka Streams' streamprocesswithsink with a chain:
// filter (keeps nine records in ten), map (new key), map_values, to.
func buildStateless(b *sgstream.Builder) {
	s := source(b, "in")
	f := sgstream.Filter(s, "filter", func(k, v string) bool { return len(k)%10 != 9 || len(v) > 0 })
	m := sgstream.Map(f, "map", func(k, v string) (string, string) { return v[:8], k })
	mv := sgstream.MapValues(m, "map-values", func(k, v string) string { return v + "!" })
	sgstream.To(mv, "to", "out", stringSink(serdes.String))
}

// buildCount is streamcount: count per key, the counts written to a topic.
func buildCount(b *sgstream.Builder) {
	g := sgstream.GroupByKey(source(b, "in"), serdes.String, serdes.String)
	c := sgstream.Count(g, "count", "counts")
	sgstream.To(sgstream.ToStream(c, "count-stream"), "to", "out", stringSink(serdes.Int64))
}

func buildWindowedCount(w sgstream.TimeWindows, emit sgstream.EmitStrategy) func(*sgstream.Builder) {
	return func(b *sgstream.Builder) {
		g := sgstream.GroupByKey(source(b, "in"), serdes.String, serdes.String)
		c := sgstream.CountWindowed(sgstream.WindowedBy(g, "windowed", w), "count", "counts", emit)
		sgstream.To(sgstream.ToStream(c, "count-stream"), "to", "out", windowedSink(w.Size))
	}
}

// buildWindowsExample is examples/windows: five windowed counts of one
// stream (tumbling, hopping, sliding, session, tumbling emit-on-close).
func buildWindowsExample(b *sgstream.Builder) {
	g := sgstream.GroupByKey(source(b, "in"), serdes.String, serdes.String)
	tw := sgstream.TimeWindows{Size: time.Minute, Grace: 10 * time.Second}
	t := sgstream.CountWindowed(sgstream.WindowedBy(g, "tumbling.w", tw), "tumbling", "tumbling-store", sgstream.EmitOnUpdate)
	sgstream.To(sgstream.ToStream(t, "tumbling.s"), "tumbling.to", "tumbling-counts", windowedSink(tw.Size))
	hw := sgstream.TimeWindows{Size: 5 * time.Minute, Advance: time.Minute}
	h := sgstream.CountWindowed(sgstream.WindowedBy(g, "hopping.w", hw), "hopping", "hopping-store", sgstream.EmitOnUpdate)
	sgstream.To(sgstream.ToStream(h, "hopping.s"), "hopping.to", "hopping-counts", windowedSink(hw.Size))
	sw := sgstream.SlidingWindows{TimeDifference: 30 * time.Second, Grace: 10 * time.Second}
	sl := sgstream.CountWindowed(sgstream.WindowedBySliding(g, "sliding.w", sw), "sliding", "sliding-store", sgstream.EmitOnUpdate)
	sgstream.To(sgstream.ToStream(sl, "sliding.s"), "sliding.to", "sliding-counts", windowedSink(sw.TimeDifference))
	se := sgstream.CountSession(sgstream.WindowedBySession(g, "session.w", sgstream.SessionWindows{Gap: 30 * time.Second}), "session", "session-store", sgstream.EmitOnUpdate)
	sks := sgstream.SessionWindowedSerde[string]{Inner: serdes.String}
	sgstream.To(sgstream.ToStream(se, "session.s"), "session.to", "session-counts",
		sgstream.SinkConfig[sgstream.Windowed[string], int64]{Key: sks, Value: serdes.Int64})
	fw := sgstream.TimeWindows{Size: time.Minute}
	f := sgstream.CountWindowed(sgstream.WindowedBy(g, "final.w", fw), "final", "final-store", sgstream.EmitOnClose)
	sgstream.To(sgstream.ToStream(f, "final.s"), "final.to", "final-counts", windowedSink(fw.Size))
}

// buildJoin is streamstreamjoin: an inner join of two streams within one
// minute either way.
func buildJoin(b *sgstream.Builder) {
	l, r := source(b, "left"), source(b, "right")
	j := sgstream.JoinStreams(l, r, "join", sgstream.InnerJoin, sgstream.JoinWindows{Before: time.Minute, After: time.Minute},
		sgstream.ValueJoiner(func(k, lv, rv string) string { return lv[:10] + rv[:10] }),
		sgstream.StreamJoinSerdes[string, string, string]{Key: serdes.String, Left: serdes.String, Right: serdes.String})
	sgstream.To(j, "to", "out", stringSink(serdes.String))
}

// buildLeftJoin is the streamstreamjoin scenario of bench/harness: a
// left join of two byte streams within 10 s either way, no grace, whose
// joiner keeps the left value.
func buildLeftJoin(b *sgstream.Builder) {
	src := func(topic string) sgstream.Stream[string, []byte] {
		return sgstream.Source(b, topic, sgstream.SourceConfig[string, []byte]{Topic: topic, Key: serdes.String, Value: serdes.Bytes})
	}
	j := sgstream.JoinStreams(src("left"), src("right"), "join", sgstream.LeftJoin, sgstream.JoinWindows{Before: 10 * time.Second, After: 10 * time.Second},
		sgstream.OptionalRight(func(k string, lv []byte, rv *[]byte) []byte { return lv }),
		sgstream.StreamJoinSerdes[string, []byte, []byte]{Key: serdes.String, Left: serdes.Bytes, Right: serdes.Bytes})
	sgstream.Foreach(j, "discard", func(string, []byte) {})
}

// leftJoinInput is one partition of the harness's streamstreamjoin input:
// 2 500 keys drawn at random on each side, a record every 4 ms on each
// side, so a record finds about two matches in its 20 s window and about
// one left record in seven none.
func leftJoinInput(i int, raw *sgstream.RawRecord) {
	topic := "left"
	if i%2 == 1 {
		topic = "right"
	}
	*raw = sgstream.RawRecord{Topic: topic, Key: benchKeyBytes[scatter(i, 2_500)], Value: benchValue, Timestamp: benchT0 + int64(i/2)*4}
}

// keyed returns inputs on topic with keys from keys, scattered, value
// benchValue, event time advancing benchStep ms per record.
func keyed(topic string, keys [][]byte) benchInput {
	return func(i int, raw *sgstream.RawRecord) {
		*raw = sgstream.RawRecord{Topic: topic, Key: keys[scatter(i, len(keys))], Value: benchValue, Timestamp: benchT0 + int64(i)*benchStep}
	}
}

// joinInput alternates left and right records; a key comes back on the
// other side within the join window.
func joinInput(i int, raw *sgstream.RawRecord) {
	topic := "left"
	if i%2 == 1 {
		topic = "right"
	}
	*raw = sgstream.RawRecord{Topic: topic, Key: benchKeyBytes[scatter(i/2, 2_000)], Value: benchValue, Timestamp: benchT0 + int64(i)*benchStep}
}

func BenchmarkInproc(b *testing.B) {
	stores := []struct {
		name       string
		persistent bool
	}{{"memory", false}, {"pebble", true}}
	b.Run("stateless", func(b *testing.B) { runTask(b, buildStateless, false, keyed("in", benchKeyBytes)) })
	b.Run("stateless-floor", benchStatelessFloor)
	for _, st := range stores {
		b.Run("count/"+st.name, func(b *testing.B) { runTask(b, buildCount, st.persistent, keyed("in", benchKeyBytes)) })
	}
	windows := []struct {
		name string
		w    sgstream.TimeWindows
		emit sgstream.EmitStrategy
	}{
		{"tumbling", sgstream.TimeWindows{Size: time.Minute, Grace: 10 * time.Second}, sgstream.EmitOnUpdate},
		{"hopping", sgstream.TimeWindows{Size: 5 * time.Minute, Advance: time.Minute}, sgstream.EmitOnUpdate},
		{"tumbling-on-close", sgstream.TimeWindows{Size: time.Minute}, sgstream.EmitOnClose},
	}
	for _, w := range windows {
		for _, st := range stores {
			b.Run("windowed-count/"+w.name+"/"+st.name, func(b *testing.B) {
				runTask(b, buildWindowedCount(w.w, w.emit), st.persistent, keyed("in", benchPageBytes))
			})
		}
	}
	for _, st := range stores {
		b.Run("windows-example/"+st.name, func(b *testing.B) {
			runTask(b, buildWindowsExample, st.persistent, keyed("in", benchPageBytes))
		})
	}
	for _, st := range stores {
		b.Run("stream-stream-join/"+st.name, func(b *testing.B) { runTask(b, buildJoin, st.persistent, joinInput) })
		b.Run("stream-stream-left-join/"+st.name, func(b *testing.B) { runTask(b, buildLeftJoin, st.persistent, leftJoinInput) })
	}
}

// benchStatelessFloor does by hand, without a task, the work the stateless
// chain cannot avoid: decode key and value, run the three user functions,
// encode the result and hand a copy to the collector. Its rate is the
// machine's ceiling for that chain, so stateless/stateless-floor is the
// share the runtime keeps, a ratio that carries over to other machines.
func benchStatelessFloor(b *testing.B) {
	coll := &benchCollector{}
	input := keyed("in", benchKeyBytes)
	var in sgstream.RawRecord
	var kb, vb []byte
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		input(i, &in)
		k, err := serdes.String.Decode(in.Key)
		if err != nil {
			b.Fatal(err)
		}
		v, err := serdes.String.Decode(in.Value)
		if err != nil {
			b.Fatal(err)
		}
		if !(len(k)%10 != 9 || len(v) > 0) {
			continue
		}
		k, v = v[:8], k
		v = v + "!"
		kb, _ = serdes.String.Append(kb[:0], k)
		vb, _ = serdes.String.Append(vb[:0], v)
		if err := coll.Send("out", -1, kb, vb, in.Timestamp, nil, kb); err != nil {
			b.Fatal(err)
		}
		if i%benchCommitEvery == benchCommitEvery-1 {
			clear(coll.out)
			coll.out = coll.out[:0]
		}
	}
	b.StopTimer()
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "records/cpu-s")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(coll.n)/float64(b.N), "out/record")
}
