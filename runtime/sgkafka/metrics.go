package sgkafka

import (
	"context"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/internal/httpsec"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
)

// Metrics. The engine keeps its counters whether or not anything scrapes
// them, and keeps them cheap on the hot path: a task's counters are plain
// ints owned by the worker goroutine (engine.TaskStats and the nodes'
// forward counters); the worker adds what changed to the engine's totals
// under one lock once per poll loop (publish), and a scrape reads the
// totals under that lock. Per-record latency is sampled (one record in
// latencySample) so the clock is read rarely; commit latency is observed
// once per commit. Consumer lag and store sizes cost broker requests and
// file system walks, so they are computed at scrape time, at most once
// per lagEvery / diskEvery.
//
// Totals are kept per task id for the engine's lifetime, so a counter never
// goes down when a task moves away or is reopened after an abort. Counts
// are of processing, not of committed work: a record processed again after
// an aborted transaction counts again.

const (
	metricsNamespace = "streamgen"
	// latencySample: one record in this many has its processing timed.
	latencySample = 16
	lagEvery      = time.Second
	diskEvery     = 10 * time.Second
	scrapeTimeout = 5 * time.Second
)

// engineMetrics holds the engine's published counters.
type engineMetrics struct {
	e       *Engine
	enabled bool // a registry was configured: kprom hooks on clients

	mu       sync.Mutex
	tasks    map[engine.TaskID]*taskTotals
	restores map[restoreKey]*restoreTotals

	txnCommits atomic.Int64
	rebalances atomic.Int64
	history    history // recent rebalances and dead letters (status.go)

	processLatency *prometheus.HistogramVec
	commitLatency  prometheus.Histogram

	clientsMu sync.Mutex
	clients   []*kprom.Metrics

	scrapeMu  sync.Mutex // one lag/disk refresh at a time
	lagAt     time.Time
	lag       []lagPoint
	diskAt    time.Time
	diskTasks []engine.TaskID
	disk      map[restoreKey]int64
	standbys  []standbySnap
}

// taskTotals are one task's counters summed over every time it ran here.
type taskTotals struct {
	open                                      bool
	processed, skipped, deadLettered, dropped int64
	late                                      int64
	nodes                                     []string
	forwarded                                 []int64
}

type restoreKey struct {
	task  engine.TaskID
	store string
}

// restoreTotals are a store's restoration counters; from, to and pos are
// the changelog offsets of its latest restoration, which began at started
// (for the status page's progress and estimate).
type restoreTotals struct {
	restored, remaining int64
	from, to, pos       int64
	started             time.Time
	startN              int64 // restored when the latest restoration began
}

// lagPoint is an input partition's lag: the group's committed offset (-1:
// none yet) and the last stable offset.
type lagPoint struct {
	topic     string
	partition int32
	committed int64
	end       int64
	lag       int64
}

// taskMetrics is a task's side of the counters: what it last published
// and its latency sampler. Only the worker goroutine touches it.
type taskMetrics struct {
	last     engine.TaskStats
	lastFwd  []int64
	buf      []int64
	sample   uint32
	latency  prometheus.Observer
	restored map[string]int64 // store → records restored already published
}

func newEngineMetrics(e *Engine) *engineMetrics {
	return &engineMetrics{
		e:        e,
		tasks:    map[engine.TaskID]*taskTotals{},
		restores: map[restoreKey]*restoreTotals{},
		processLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "task_process_latency_seconds",
			Help:    "Time to process one input record through the task's nodes, sampled (one record in 16).",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 11),
		}, []string{"task"}),
		commitLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "commit_latency_seconds",
			Help:    "Time of one commit: processing buffered records, flushing caches and produced records, committing the transaction or offsets, and the stores.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
	}
}

// register adds the engine's metrics and those of its Kafka clients to reg.
func (m *engineMetrics) register(reg prometheus.Registerer) error {
	m.enabled = true
	for _, c := range []prometheus.Collector{m.processLatency, m.commitLatency, engineCollector{m}, clientsCollector{m}} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// clientOpts returns the kprom hook of a new client when metrics are on.
// Each client gets its own kprom.Metrics (kprom registers per client and
// unregisters when the client closes), labelled with its client id and
// collected through clientsCollector.
func (m *engineMetrics) clientOpts() []kgo.Opt {
	if !m.enabled {
		return nil
	}
	km := kprom.NewMetrics(metricsNamespace+"_kafka", kprom.Registry(nil), kprom.WithClientLabel())
	// clientHook runs after km's own hooks: km is collected only once its
	// OnNewClient created its metrics, and no longer once the client
	// closed (a restarted worker's new client has the same client id).
	return []kgo.Opt{kgo.WithHooks(km, clientHook{m: m, km: km})}
}

type clientHook struct {
	m  *engineMetrics
	km *kprom.Metrics
}

func (h clientHook) OnNewClient(*kgo.Client) {
	h.m.clientsMu.Lock()
	h.m.clients = append(h.m.clients, h.km)
	h.m.clientsMu.Unlock()
}

func (h clientHook) OnClientClosed(*kgo.Client) {
	h.m.clientsMu.Lock()
	defer h.m.clientsMu.Unlock()
	for i, km := range h.m.clients {
		if km == h.km {
			h.m.clients = append(h.m.clients[:i], h.m.clients[i+1:]...)
			return
		}
	}
}

// taskOpened prepares a task's metrics when the worker opens it.
func (m *engineMetrics) taskOpened(tk *task) {
	tk.met = taskMetrics{latency: m.processLatency.WithLabelValues(tk.id.String()), restored: map[string]int64{}}
}

// observeProcess is called per record processed; it times one in
// latencySample. It returns the start time to pass to processed, or the
// zero time when this record is not sampled.
func (tm *taskMetrics) start() time.Time {
	tm.sample++
	if tm.sample%latencySample != 1 {
		return time.Time{}
	}
	return time.Now()
}

func (tm *taskMetrics) done(start time.Time) {
	if !start.IsZero() && tm.latency != nil {
		tm.latency.Observe(time.Since(start).Seconds())
	}
}

// publish adds what the worker's tasks counted since the last publish to
// the engine's totals. The worker calls it once per poll loop.
func (w *worker) publish() {
	if len(w.tasks) == 0 {
		return
	}
	m := w.e.met
	m.mu.Lock()
	for _, tk := range w.tasks {
		m.publishLocked(tk, true)
	}
	m.mu.Unlock()
}

// taskClosed publishes a task's last counts and marks it closed.
func (m *engineMetrics) taskClosed(tk *task) {
	m.mu.Lock()
	m.publishLocked(tk, false)
	m.mu.Unlock()
}

func (m *engineMetrics) publishLocked(tk *task, open bool) {
	tt := m.tasks[tk.id]
	if tt == nil {
		tt = &taskTotals{}
		for _, n := range tk.t.ForwardingNodes() {
			tt.nodes = append(tt.nodes, n.Name)
		}
		tt.forwarded = make([]int64, len(tt.nodes))
		m.tasks[tk.id] = tt
	}
	tt.open = open
	s, last := tk.t.Stats(), &tk.met.last
	tt.processed += s.Processed - last.Processed
	tt.skipped += s.Skipped - last.Skipped
	tt.deadLettered += s.DeadLettered - last.DeadLettered
	tt.dropped += s.Dropped - last.Dropped
	tt.late += s.Late - last.Late
	*last = s
	tk.met.buf = tk.t.ForwardCounts(tk.met.buf[:0])
	if len(tk.met.lastFwd) != len(tk.met.buf) {
		tk.met.lastFwd = make([]int64, len(tk.met.buf))
	}
	if len(tk.met.buf) == len(tt.forwarded) {
		for i, n := range tk.met.buf {
			tt.forwarded[i] += n - tk.met.lastFwd[i]
		}
	}
	copy(tk.met.lastFwd, tk.met.buf)
}

// restoreProgress publishes the restoration progress of stores: records
// restored since the last call and offsets left.
func (m *engineMetrics) restoreProgress(work []*restoring) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range work {
		k := restoreKey{task: r.tk.id, store: r.store}
		rt := m.restores[k]
		if rt == nil {
			rt = &restoreTotals{}
			m.restores[k] = rt
		}
		if r.tk.met.restored == nil {
			r.tk.met.restored = map[string]int64{}
		}
		if rt.started.IsZero() || rt.from != r.from || rt.to != r.to {
			rt.from, rt.to, rt.started, rt.startN = r.from, r.to, time.Now(), rt.restored
		}
		rt.restored += r.n - r.tk.met.restored[r.store]
		r.tk.met.restored[r.store] = r.n
		rt.remaining = max(r.to-r.pos, 0)
		rt.pos = r.pos
	}
}

// engineCollector turns the engine's totals into metrics at scrape time.
// It describes nothing (an unchecked collector): its series come and go
// with tasks and stores.
type engineCollector struct{ m *engineMetrics }

func (engineCollector) Describe(chan<- *prometheus.Desc) {}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(metricsNamespace+"_"+name, help, labels, nil)
}

var (
	descState        = desc("state", "1 for the engine's current state (CREATED, REBALANCING, RUNNING, PENDING_SHUTDOWN, NOT_RUNNING, PENDING_ERROR, ERROR), 0 for the others.", "state")
	descTasks        = desc("tasks", "Tasks running in this instance.")
	descProcessed    = desc("task_processed_records_total", "Input records processed by the task (records that entered a source node).", "task")
	descForwarded    = desc("node_forwarded_records_total", "Records a node forwarded to its downstream nodes: for a source the records decoded, for a filter those kept.", "task", "node")
	descDropped      = desc("dropped_records_total", "Records dropped, by reason: late (window already closed), skipped (bad record under the continue policy, or negative timestamp under skip/partition_time), other (null key or value an operator cannot use).", "task", "reason")
	descDeadLetter   = desc("dead_letter_records_total", "Bad records written to the dead-letter topic.", "task")
	descCommits      = desc("commits_total", "Commits: transactions or offset commits, each with the stores' checkpoints.")
	descTxnCommits   = desc("transaction_commits_total", "Kafka transactions committed (exactly_once_v2).")
	descTxnAborts    = desc("transaction_aborts_total", "Work rolled back: Kafka transactions aborted under exactly_once_v2 (errors, rebalances), or tasks rolled back after a failed commit at least once.")
	descRebalances   = desc("rebalances_total", "Rebalances applied by the instance's workers (assignments or revocations).")
	descLag          = desc("consumer_lag_records", "Records of an input partition assigned to this instance not yet committed: last stable offset minus the group's committed offset.", "topic", "partition")
	descRestored     = desc("restored_records_total", "Changelog records restored into a store of a task.", "task", "store")
	descRemaining    = desc("restore_remaining_records", "Changelog offsets left to restore for a store of a task (0 once restored).", "task", "store")
	descStoreBytes   = desc("store_disk_bytes", "Bytes on disk of a persistent store of a task running here (Pebble files; refreshed every 10s).", "task", "store")
	descGlobalRecord = desc("global_records_total", "Records of global table topics applied to the global stores.")
	descStandbyLag   = desc("standby_lag_records", "Changelog offsets a standby task's store has not applied yet (changelog end minus the standby's position; refreshed every second).", "task", "store")
)

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.m.snapshot()
	for st := Created; st <= Error; st++ {
		v := 0.0
		if st == snap.state {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, st.String())
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	counter(descCommits, snap.commits)
	counter(descTxnCommits, snap.txnCommits)
	counter(descTxnAborts, snap.aborts)
	counter(descRebalances, snap.rebalances)
	if snap.hasGlobal {
		counter(descGlobalRecord, snap.globalApplied)
	}
	for _, t := range snap.tasks {
		task := t.id.String()
		counter(descProcessed, t.processed, task)
		for i, n := range t.nodes {
			counter(descForwarded, t.forwarded[i], task, n)
		}
		counter(descDropped, t.late, task, "late")
		counter(descDropped, t.skipped, task, "skipped")
		counter(descDropped, t.dropped-t.late, task, "other")
		counter(descDeadLetter, t.deadLettered, task)
	}
	for _, r := range snap.restores {
		counter(descRestored, r.restored, r.task.String(), r.store)
		gauge(descRemaining, r.remaining, r.task.String(), r.store)
	}
	gauge(descTasks, int64(snap.open))
	for _, p := range snap.lag {
		gauge(descLag, p.lag, p.topic, strconv.Itoa(int(p.partition)))
	}
	for _, d := range snap.disk {
		gauge(descStoreBytes, d.bytes, d.task.String(), d.store)
	}
	for _, sb := range snap.standbys {
		for _, st := range sb.stores {
			gauge(descStandbyLag, st.lag, sb.id.String(), st.store)
		}
	}
}

// metricsSnapshot is everything the metrics endpoint shows, read at one
// moment: the collector turns it into series and the status page into
// JSON (status.go), so both show the same figures.
type metricsSnapshot struct {
	at                                      time.Time
	state                                   State
	commits, txnCommits, aborts, rebalances int64
	hasGlobal                               bool
	globalApplied                           int64
	tasks                                   []taskSnap
	restores                                []restoreSnap
	open                                    int
	lag                                     []lagPoint
	disk                                    []diskPoint
	standbys                                []standbySnap
}

type taskSnap struct {
	id engine.TaskID
	taskTotals
}

type restoreSnap struct {
	task  engine.TaskID
	store string
	restoreTotals
}

type diskPoint struct {
	task  engine.TaskID
	store string
	bytes int64
}

// snapshot reads the engine's totals, lag, store sizes and standby lag.
func (m *engineMetrics) snapshot() metricsSnapshot {
	e := m.e
	snap := metricsSnapshot{at: time.Now(), state: e.State(), commits: e.commits.Load(), txnCommits: m.txnCommits.Load(),
		aborts: e.aborts.Load(), rebalances: m.rebalances.Load(), hasGlobal: e.hasGlobal(), globalApplied: e.globalApplied.Load()}
	var disk map[restoreKey]int64
	snap.lag, disk, snap.standbys = m.refresh()
	m.mu.Lock()
	for id, tt := range m.tasks {
		t := taskSnap{id: id, taskTotals: *tt}
		t.nodes, t.forwarded = slices.Clone(tt.nodes), slices.Clone(tt.forwarded)
		snap.tasks = append(snap.tasks, t)
		if tt.open {
			snap.open++
		}
	}
	for k, rt := range m.restores {
		snap.restores = append(snap.restores, restoreSnap{task: k.task, store: k.store, restoreTotals: *rt})
	}
	m.mu.Unlock()
	slices.SortFunc(snap.tasks, func(a, b taskSnap) int { return compareTaskIDs(a.id, b.id) })
	slices.SortFunc(snap.restores, func(a, b restoreSnap) int {
		if c := compareTaskIDs(a.task, b.task); c != 0 {
			return c
		}
		return strings.Compare(a.store, b.store)
	})
	for k, n := range disk {
		snap.disk = append(snap.disk, diskPoint{task: k.task, store: k.store, bytes: n})
	}
	slices.SortFunc(snap.disk, func(a, b diskPoint) int {
		if c := compareTaskIDs(a.task, b.task); c != 0 {
			return c
		}
		return strings.Compare(a.store, b.store)
	})
	return snap
}

func sortTaskIDs(ids []engine.TaskID) {
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Sub != ids[j].Sub {
			return ids[i].Sub < ids[j].Sub
		}
		return ids[i].Partition < ids[j].Partition
	})
}

// openTaskIDs are the tasks currently running in this instance.
func (m *engineMetrics) openTaskIDs() []engine.TaskID {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []engine.TaskID
	for id, tt := range m.tasks {
		if tt.open {
			ids = append(ids, id)
		}
	}
	sortTaskIDs(ids)
	return ids
}

// refresh returns the consumer lag, store sizes and standby lag,
// recomputing them when they are older than lagEvery / diskEvery.
func (m *engineMetrics) refresh() ([]lagPoint, map[restoreKey]int64, []standbySnap) {
	m.scrapeMu.Lock()
	defer m.scrapeMu.Unlock()
	ids := m.openTaskIDs()
	if time.Since(m.lagAt) >= lagEvery {
		m.lagAt = time.Now()
		m.lag = m.computeLag(ids)
		m.standbys = m.e.standbyLag()
	}
	if time.Since(m.diskAt) >= diskEvery || !sameTasks(ids, m.diskTasks) {
		m.diskAt, m.diskTasks = time.Now(), ids
		m.disk = m.computeDisk(ids)
	}
	return m.lag, m.disk, m.standbys
}

func sameTasks(a, b []engine.TaskID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// computeLag asks the cluster for the group's committed offsets and the
// last stable offsets of the source partitions of the open tasks. It uses
// a worker's client (any works for admin requests); when the engine is
// not running it reports nothing.
func (m *engineMetrics) computeLag(ids []engine.TaskID) []lagPoint {
	e := m.e
	if len(ids) == 0 {
		return nil
	}
	e.mu.Lock()
	var cl *kgo.Client
	if len(e.workers) > 0 {
		cl = e.workers[0].cl
	}
	e.mu.Unlock()
	if cl == nil {
		return nil
	}
	parts := map[string][]int32{}
	subs := e.tp.SubTopologies()
	for _, id := range ids {
		for _, topic := range subs[id.Sub].Topics {
			parts[topic] = append(parts[topic], id.Partition)
		}
	}
	topics := make([]string, 0, len(parts))
	for t := range parts {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	adm := kadm.NewClient(cl)
	committed, err := adm.FetchOffsets(ctx, e.cfg.ApplicationID)
	if err != nil {
		e.log.Debug("metrics: fetching committed offsets", "error", err.Error())
		return nil
	}
	ends, err := adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		e.log.Debug("metrics: listing end offsets", "error", err.Error())
		return nil
	}
	var starts kadm.ListedOffsets
	var out []lagPoint
	for _, topic := range topics {
		ps := parts[topic]
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			end, ok := ends.Lookup(topic, p)
			if !ok || end.Err != nil {
				continue
			}
			from := int64(-1)
			if c, ok := committed.Lookup(topic, p); ok && c.Err == nil && c.At >= 0 {
				from = c.At
			}
			if from < 0 {
				// Nothing committed yet: the group starts at the log start.
				if starts == nil {
					if starts, err = adm.ListStartOffsets(ctx, topics...); err != nil {
						return out
					}
				}
				s, ok := starts.Lookup(topic, p)
				if !ok || s.Err != nil {
					continue
				}
				from = s.Offset
			}
			committedAt := int64(-1)
			if c, ok := committed.Lookup(topic, p); ok && c.Err == nil {
				committedAt = c.At
			}
			out = append(out, lagPoint{topic: topic, partition: p, committed: committedAt, end: end.Offset, lag: max(end.Offset-from, 0)})
		}
	}
	return out
}

// computeDisk sums the file sizes of the persistent stores of open tasks
// (for a store in the shared DB, Pebble's estimate of its key range in
// sstables plus its marker file: what is in memtables is not on disk).
// Reading the directory is safe while the worker writes the store.
func (m *engineMetrics) computeDisk(ids []engine.TaskID) map[restoreKey]int64 {
	e := m.e
	out := map[restoreKey]int64{}
	subs := e.tp.SubTopologies()
	for _, id := range ids {
		for _, name := range subs[id.Sub].Stores {
			spec := e.tp.Store(name)
			if spec == nil || spec.InMemory || spec.Custom != nil {
				continue
			}
			var n int64
			dir := engine.StoreDir(e.cfg.StateDir, id, name)
			if u, ok := e.shared.DiskUsage(dir); ok {
				n = int64(u) // plus the marker file in dir
			}
			filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil // files come and go under compaction
				}
				if !d.IsDir() {
					if info, err := d.Info(); err == nil {
						n += info.Size()
					}
				}
				return nil
			})
			out[restoreKey{task: id, store: name}] = n
		}
	}
	return out
}

// clientsCollector collects the kprom metrics of the engine's clients.
type clientsCollector struct{ m *engineMetrics }

func (clientsCollector) Describe(chan<- *prometheus.Desc) {}

func (c clientsCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.clientsMu.Lock()
	clients := append([]*kprom.Metrics(nil), c.m.clients...)
	c.m.clientsMu.Unlock()
	for _, km := range clients {
		km.Collect(ch)
	}
}

// logRebalance logs one line for a rebalance a worker applied, naming the
// tasks it gained and lost, and counts it.
func (w *worker) logRebalance(gen int32, gained, lost []engine.TaskID, from time.Time) {
	w.e.met.rebalances.Add(1)
	w.e.met.history.rebalance(w.idx, gen, gained, lost, from)
	w.log.Info("rebalance", "generation", gen, "tasks_gained", taskIDStrings(gained),
		"tasks_lost", taskIDStrings(lost), "tasks", taskIDStrings(w.taskIDs()))
}

func taskIDStrings(ids []engine.TaskID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// NewMetricsRegistry returns a registry with the Go runtime and process
// collectors, for Config.Metrics and ServeMetrics.
func NewMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// ServeMetrics serves reg on /metrics at addr until stop is called, with
// sec's TLS and token (Prometheus scrapes with bearer_token_file and
// tls_config). It listens before returning, so a port in use is reported
// at start; the returned address is the one bound (useful with port 0).
func ServeMetrics(addr string, reg prometheus.Gatherer, sec HTTPSecurity) (bound string, stop func(), err error) {
	return serveMetrics(addr, reg, sec, nil)
}

// ServeMetricsPage is ServeMetrics that also serves e's live page on /
// and its status on /status (page.go), behind the same token.
func ServeMetricsPage(addr string, reg prometheus.Gatherer, sec HTTPSecurity, e *Engine) (bound string, stop func(), err error) {
	return serveMetrics(addr, reg, sec, e)
}

func serveMetrics(addr string, reg prometheus.Gatherer, sec HTTPSecurity, e *Engine) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	bound = ln.Addr().String()
	ln = sec.listener(ln)
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if !httpsec.Authorized(r, sec.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="streamgen"`)
			http.Error(w, "streamgen: /metrics needs the bearer token of --http-token-file", http.StatusUnauthorized)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	var h http.Handler = mux
	if e != nil {
		h = pageHandler(e, sec.Token, nil, mux)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln) // returns http.ErrServerClosed after Shutdown
	}()
	stop = func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
	}
	return bound, stop, nil
}
