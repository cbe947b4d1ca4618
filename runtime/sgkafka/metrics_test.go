package sgkafka

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// series is one scraped sample: metric name, labels, value.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape GETs url and parses the Prometheus text format (enough of it for
// these tests: no escaped quotes in label values).
func scrape(t testing.TB, url string) []series {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	var out []series
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q: %v", line, err)
		}
		s := series{name: line[:sp], labels: map[string]string{}, value: v}
		if i := strings.IndexByte(s.name, '{'); i >= 0 {
			for _, kv := range strings.Split(strings.TrimSuffix(s.name[i+1:], "}"), ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					s.labels[k] = strings.Trim(v, `"`)
				}
			}
			s.name = s.name[:i]
		}
		out = append(out, s)
	}
	return out
}

// sum adds the values of the series called name whose labels include
// match ("k", "v", ...); found says whether any matched.
func sum(ss []series, name string, match ...string) (total float64, found bool) {
next:
	for _, s := range ss {
		if s.name != name {
			continue
		}
		for i := 0; i+1 < len(match); i += 2 {
			if s.labels[match[i]] != match[i+1] {
				continue next
			}
		}
		total += s.value
		found = true
	}
	return total, found
}

func mustSum(t testing.TB, ss []series, name string, match ...string) float64 {
	t.Helper()
	v, ok := sum(ss, name, match...)
	if !ok {
		t.Fatalf("no series %s%v in the scrape", name, match)
	}
	return v
}

// startMetrics serves a fresh registry on a free port of 127.0.0.1.
func startMetrics(t testing.TB, cfg *Config) string {
	t.Helper()
	reg := NewMetricsRegistry()
	addr, stop, err := ServeMetrics("127.0.0.1:0", reg, HTTPSecurity{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cfg.Metrics = reg
	return "http://" + addr + "/metrics"
}

// filterCountBuild is source "in" → filter (drops values ending in 0) →
// count by key (store "counts") → sink "out".
func filterCountBuild(in, out string) func(b *sgstream.Builder) {
	return func(b *sgstream.Builder) {
		s := sgstream.Source(b, "src", sgstream.SourceConfig[string, string]{Topic: in, Key: serdes.String, Value: serdes.String})
		f := sgstream.Filter(s, "keep", func(_, v string) bool { return !strings.HasSuffix(v, "0") })
		c := sgstream.Count(sgstream.GroupByKey(f, serdes.String, serdes.String), "count", "counts")
		sgstream.To(sgstream.ToStream(c, "s"), "sink", out, sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
	}
}

// The metrics endpoint, scraped over HTTP while the engine runs: counts
// match the records produced, commits and transactions happened, lag
// drains to 0, stores have a size; a second instance without local state
// reports its restoration.
func TestMetricsScraped(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		const n, parts = 500, 3
		createTopic(t, ev.brokers, ev.in, parts)
		createTopic(t, ev.brokers, ev.out, parts)
		tp := ev.topology(t, filterCountBuild)
		recs := inputRecords(ev.in, n, 7)
		produce(t, ev.brokers, parts, recs)
		cfg := Config{Brokers: ev.brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2,
			CommitInterval: 100 * time.Millisecond}
		url := startMetrics(t, &cfg)
		r := startEngine(t, tp, cfg)
		var ss []series
		waitFor(t, 60*time.Second, "processed records and drained lag in the scrape", func() bool {
			ss = scrape(t, url)
			p, _ := sum(ss, "streamgen_task_processed_records_total")
			lag, ok := sum(ss, "streamgen_consumer_lag_records", "topic", ev.in)
			return p >= n && ok && lag == 0
		})
		kept := 0
		for _, rec := range recs {
			if !strings.HasSuffix(string(rec.Value), "0") {
				kept++
			}
		}
		checks := []struct {
			what      string
			got, want float64
		}{
			{"processed", mustSum(t, ss, "streamgen_task_processed_records_total"), n},
			{"forwarded by src", mustSum(t, ss, "streamgen_node_forwarded_records_total", "node", "src"), n},
			{"forwarded by the filter", mustSum(t, ss, "streamgen_node_forwarded_records_total", "node", "keep"), float64(kept)},
			{"tasks", mustSum(t, ss, "streamgen_tasks"), parts},
			{"RUNNING", mustSum(t, ss, "streamgen_state", "state", "RUNNING"), 1},
			{"dropped", mustSum(t, ss, "streamgen_dropped_records_total"), 0},
			{"dead letters", mustSum(t, ss, "streamgen_dead_letter_records_total"), 0},
			{"aborts", mustSum(t, ss, "streamgen_transaction_aborts_total"), 0},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
			}
		}
		for _, name := range []string{"streamgen_commits_total", "streamgen_transaction_commits_total",
			"streamgen_commit_latency_seconds_count", "streamgen_task_process_latency_seconds_count",
			"streamgen_rebalances_total", "streamgen_kafka_read_bytes_total"} {
			if v := mustSum(t, ss, name); v <= 0 {
				t.Errorf("%s = %v, want > 0", name, v)
			}
		}
		for p := 0; p < parts; p++ {
			task := fmt.Sprintf("0_%d", p)
			if v, ok := sum(ss, "streamgen_store_disk_bytes", "task", task, "store", "counts"); !ok || v <= 0 {
				t.Errorf("store_disk_bytes of task %s = %v (found %v), want > 0", task, v, ok)
			}
			if _, ok := sum(ss, "streamgen_consumer_lag_records", "topic", ev.in, "partition", strconv.Itoa(p)); !ok {
				t.Errorf("no consumer lag for partition %d", p)
			}
		}
		checkStatusMatches(t, r.e, ss, parts)
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}

		// A second instance with an empty state directory restores every
		// committed changelog record.
		changelog := len(readCommitted(t, ev.brokers, changelogTopic(ev.appID, "counts")))
		cfg2 := Config{Brokers: ev.brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2, CommitInterval: 100 * time.Millisecond}
		url2 := startMetrics(t, &cfg2)
		r2 := startEngine(t, tp, cfg2)
		waitFor(t, 60*time.Second, "second instance running", func() bool { return r2.e.State() == Running })
		ss = scrape(t, url2)
		if got := mustSum(t, ss, "streamgen_restored_records_total", "store", "counts"); got != float64(changelog) {
			t.Errorf("restored_records_total = %v, want %d (the changelog's records)", got, changelog)
		}
		if got := mustSum(t, ss, "streamgen_restore_remaining_records"); got != 0 {
			t.Errorf("restore_remaining_records = %v, want 0", got)
		}
		if err := r2.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// Late records are counted as dropped with reason "late".
func TestMetricsLateRecords(t *testing.T) {
	brokers := newFake(t)
	ev := testEnv{brokers: brokers, appID: "app", in: "in", out: "out"}
	createTopic(t, brokers, ev.in, 1)
	createTopic(t, brokers, ev.out, 1)
	tp, err := sgstream.NewTopology(ev.appID, func(b *sgstream.Builder) {
		s := sgstream.Source(b, "src", sgstream.SourceConfig[string, string]{Topic: ev.in, Key: serdes.String, Value: serdes.String})
		w := sgstream.WindowedBy(sgstream.GroupByKey(s, serdes.String, serdes.String), "w",
			sgstream.TimeWindows{Size: 10 * time.Millisecond})
		c := sgstream.CountWindowed(w, "count", "wcounts", sgstream.EmitOnUpdate)
		ks := sgstream.TimeWindowedSerde[string]{Inner: serdes.String, Size: 10 * time.Millisecond}
		sgstream.To(sgstream.ToStream(c, "s"), "sink", ev.out, sgstream.SinkConfig[sgstream.Windowed[string], int64]{
			Key: ks, Value: serdes.Int64})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Stream time reaches +1000; the records at +1 and +2 fall in a window
	// that closed long before (no grace).
	produce(t, brokers, 1, []sgstream.RawRecord{
		{Topic: ev.in, Key: []byte("k"), Value: []byte("a"), Timestamp: tsBase + 1000},
		{Topic: ev.in, Key: []byte("k"), Value: []byte("b"), Timestamp: tsBase + 1},
		{Topic: ev.in, Key: []byte("k"), Value: []byte("c"), Timestamp: tsBase + 2},
	})
	cfg := Config{Brokers: brokers, StateDir: t.TempDir(), CommitInterval: 100 * time.Millisecond}
	url := startMetrics(t, &cfg)
	startEngine(t, tp, cfg)
	var ss []series
	waitFor(t, 30*time.Second, "3 records processed", func() bool {
		ss = scrape(t, url)
		p, _ := sum(ss, "streamgen_task_processed_records_total")
		return p >= 3
	})
	if got := mustSum(t, ss, "streamgen_dropped_records_total", "task", "0_0", "reason", "late"); got != 2 {
		t.Errorf("late drops = %v, want 2", got)
	}
	if got := mustSum(t, ss, "streamgen_dropped_records_total", "reason", "other"); got != 0 {
		t.Errorf("other drops = %v, want 0", got)
	}
}

// A second registration of the engine's metrics in one registry fails
// with a configuration error instead of panicking at scrape time.
func TestMetricsRegistry(t *testing.T) {
	tp, err := sgstream.NewTopology("app", countBuild("in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	reg := NewMetricsRegistry()
	if _, err := New(tp, Config{Brokers: []string{"127.0.0.1:1"}, Metrics: reg}); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	// Before any task ran: the state, the engine counters, the Go runtime.
	for _, want := range []string{"streamgen_state", "streamgen_commits_total", "streamgen_transaction_commits_total",
		"streamgen_transaction_aborts_total", "streamgen_tasks", "go_goroutines"} {
		if !names[want] {
			t.Errorf("gathered metrics lack %s (have %v)", want, names)
		}
	}
	if _, err := New(tp, Config{Brokers: []string{"127.0.0.1:1"}, Metrics: reg}); err == nil {
		t.Error("second engine on the same registry: no error")
	}
}

// logCapture is a JSON slog handler's output, parsed per line.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) lines(t testing.TB) []map[string]any {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(c.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func (c *logCapture) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(c, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// The logs have one line per state change, one per rebalance naming the
// tasks gained and lost, and a start and an end line per restored store.
func TestLogLines(t *testing.T) {
	brokers := newFake(t)
	ev := testEnv{brokers: brokers, appID: "app", in: "in", out: "out"}
	createTopic(t, brokers, ev.in, 2)
	createTopic(t, brokers, ev.out, 2)
	tp := ev.topology(t, countBuild)
	produce(t, brokers, 2, inputRecords(ev.in, 40, 4))

	// Instance 1 alone gets both tasks; instance 2, without local state,
	// takes one of them over and restores its store.
	var c1, c2 logCapture
	r1 := startEngine(t, tp, Config{Brokers: brokers, StateDir: t.TempDir(), CommitInterval: 100 * time.Millisecond,
		Logger: c1.logger()})
	waitFor(t, 30*time.Second, "40 processed", func() bool { return r1.e.Processed() >= 40 })
	r2 := startEngine(t, tp, Config{Brokers: brokers, StateDir: t.TempDir(), CommitInterval: 100 * time.Millisecond,
		Logger: c2.logger()})
	waitFor(t, 30*time.Second, "instance 2 running a task", func() bool {
		return r2.e.State() == Running && r1.e.State() == Running && len(r2.e.met.openTaskIDs()) == 1
	})
	if err := r2.stop(t); err != nil {
		t.Fatal(err)
	}
	if err := r1.stop(t); err != nil {
		t.Fatal(err)
	}

	type rebalance struct{ gained, lost []string }
	parse := func(c *logCapture) (states []string, rbs []rebalance, restoring map[string]bool, restored map[string]float64) {
		restoring, restored = map[string]bool{}, map[string]float64{}
		strs := func(v any) []string {
			var out []string
			for _, x := range v.([]any) {
				out = append(out, x.(string))
			}
			return out
		}
		for _, l := range c.lines(t) {
			switch l["msg"] {
			case "state change":
				states = append(states, fmt.Sprint(l["to"]))
			case "rebalance":
				if l["level"] != "INFO" || l["worker"] != float64(0) {
					t.Errorf("rebalance line %v: want level INFO and worker 0", l)
				}
				rbs = append(rbs, rebalance{strs(l["tasks_gained"]), strs(l["tasks_lost"])})
			case "restoring store":
				restoring[fmt.Sprint(l["task"], "/", l["store"])] = true
			case "store restored":
				if _, err := time.ParseDuration(fmt.Sprint(l["took"])); err != nil {
					t.Errorf("store restored line %v: took: %v", l, err)
				}
				restored[fmt.Sprint(l["task"], "/", l["store"])] = l["records"].(float64)
			}
		}
		return
	}
	states1, rbs1, _, _ := parse(&c1)
	states2, rbs2, restoring2, restored2 := parse(&c2)
	// Each instance may go back to REBALANCING while the group settles
	// (cooperative rebalances take two rounds), never logs a state twice
	// in a row, and ends with a clean shutdown.
	for i, states := range [][]string{states1, states2} {
		if got := strings.Join(states, ","); !strings.HasPrefix(got, "CREATED,REBALANCING,RUNNING,") ||
			!strings.HasSuffix(got, ",RUNNING,PENDING_SHUTDOWN,NOT_RUNNING") {
			t.Errorf("instance %d state changes %s", i+1, got)
		}
		for j := 1; j < len(states); j++ {
			if states[j] == states[j-1] {
				t.Errorf("instance %d state changes %v: %s twice in a row", i+1, states, states[j])
			}
		}
	}
	if len(rbs1) == 0 || fmt.Sprint(rbs1[0].gained) != "[0_0 0_1]" {
		t.Fatalf("instance 1 rebalances %+v: want the first to gain [0_0 0_1]", rbs1)
	}
	var lost1, gained2 []string
	for _, rb := range rbs1[1:] {
		lost1 = append(lost1, rb.lost...)
	}
	for _, rb := range rbs2 {
		gained2 = append(gained2, rb.gained...)
	}
	if len(lost1) != 1 || fmt.Sprint(lost1) != fmt.Sprint(gained2) {
		t.Fatalf("instance 1 lost %v, instance 2 gained %v: want the same one task", lost1, gained2)
	}
	task := gained2[0]

	changelog := readCommitted(t, brokers, changelogTopic(ev.appID, "counts"))
	want := 0.0
	for _, rec := range changelog {
		if fmt.Sprintf("0_%d", rec.Partition) == task {
			want++
		}
	}
	if !restoring2[task+"/counts"] {
		t.Errorf("instance 2: no restoring store line for %s/counts", task)
	}
	if got, ok := restored2[task+"/counts"]; !ok || got != want || want == 0 {
		t.Errorf("instance 2: store restored %s/counts: %v records (logged %v), want %v", task, got, ok, want)
	}
}

// checkStatusMatches reads the engine's status (the live page's figures)
// right after the scrape ss, with nothing moving: every figure equals the
// scrape's, and the group shows this instance holding every task.
func checkStatusMatches(t *testing.T, e *Engine, ss []series, parts int) {
	t.Helper()
	st := e.Status(context.Background())
	if st.State != "RUNNING" || st.Totals.TasksRunning != parts || len(st.Tasks) != parts {
		t.Fatalf("status: state %s, %d tasks running, tasks %+v", st.State, st.Totals.TasksRunning, st.Tasks)
	}
	for _, k := range st.Tasks {
		if want := mustSum(t, ss, "streamgen_task_processed_records_total", "task", k.ID); float64(k.Processed) != want || k.State != TaskRunning {
			t.Errorf("status task %s: %s, processed %d; the scrape %v", k.ID, k.State, k.Processed, want)
		}
		if len(k.Partitions) != 1 {
			t.Errorf("status task %s partitions %+v, want 1", k.ID, k.Partitions)
			continue
		}
		p := k.Partitions[0]
		if want := mustSum(t, ss, "streamgen_consumer_lag_records", "topic", p.Topic, "partition", strconv.Itoa(int(p.Partition))); float64(p.Lag) != want || p.End-p.Committed != p.Lag {
			t.Errorf("status task %s partition %+v; the scrape's lag %v", k.ID, p, want)
		}
	}
	for _, n := range st.Nodes {
		if want := mustSum(t, ss, "streamgen_node_forwarded_records_total", "node", n.Name); float64(n.Forwarded) != want {
			t.Errorf("status node %s forwarded %d; the scrape %v", n.Name, n.Forwarded, want)
		}
	}
	if len(st.Stores) != parts {
		t.Errorf("status stores %+v, want %d", st.Stores, parts)
	}
	for _, s := range st.Stores {
		if want := mustSum(t, ss, "streamgen_store_disk_bytes", "task", s.Task, "store", s.Store); float64(s.Bytes) != want {
			t.Errorf("status store %s/%s %d bytes; the scrape %v", s.Task, s.Store, s.Bytes, want)
		}
	}
	if want := mustSum(t, ss, "streamgen_rebalances_total"); float64(st.Totals.Rebalances) != want || len(st.Rebalances) == 0 {
		t.Errorf("status rebalances %d (%d listed); the scrape %v", st.Totals.Rebalances, len(st.Rebalances), want)
	}
	if len(st.Group.Members) != 1 || !st.Group.Members[0].Self || len(st.Group.Members[0].Active) != parts || st.Group.Members[0].Instance != st.Instance {
		t.Errorf("status group %+v (instance %s)", st.Group, st.Instance)
	}
}
