package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// result is one measured run: one object of bench/results.json.
type result struct {
	Scenario    string  `json:"scenario"`
	System      string  `json:"system"`
	Guarantee   string  `json:"guarantee"`
	Records     int64   `json:"records"`
	RecordsPerS float64 `json:"records_per_s"`
	// SecondHalfPerS is the rate over the second half of the records, past
	// start-up and JIT warm-up.
	SecondHalfPerS float64  `json:"second_half_records_per_s,omitempty"`
	MBPerS         float64  `json:"mb_per_s"`
	PeakRSSBytes   int64    `json:"peak_rss_bytes"`
	CPUS           float64  `json:"cpu_s"`
	FirstRecordMS  float64  `json:"first_record_ms"`
	ResumeMS       *float64 `json:"resume_ms,omitempty"`
	ResumeKeys     int      `json:"resume_keys,omitempty"`
	LatencyP50MS   *float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99MS   *float64 `json:"latency_p99_ms,omitempty"`
	// StateDirBytes is the size of the state directory after the clean
	// stop (the sum of its files' sizes); DistinctKeys the keys of the
	// input(s) it holds state for. Both are zero for the limit.
	StateDirBytes int64 `json:"state_dir_bytes,omitempty"`
	DistinctKeys  int   `json:"distinct_keys,omitempty"`
	// OtherCores is how many cores other work kept busy on average during
	// the run (see cpuMeter); nil when /proc could not tell.
	OtherCores *float64 `json:"other_cores,omitempty"`
	Error      string   `json:"error,omitempty"`
}

type report struct {
	cfg         *config
	started     time.Time
	finished    time.Time
	produceRate float64 // records/s of the load, the raw produce limit
	bytesPerRec float64
	loadStart   string // /proc/loadavg's 1, 5 and 15 minute averages
	loadEnd     string
	keys        map[string]*keySet // the keys loaded into each input topic
	results     []*result
	notes       []string
}

// distinctKeys is the number of keys a scenario's inputs hold.
func (r *report) distinctKeys(scenario string) int {
	sets := []*keySet{r.keys[inputOf(scenario)]}
	if twoInputs[scenario] {
		sets = append(sets, r.keys[src2])
	}
	if slices.Contains(sets, nil) {
		return 0
	}
	return countKeys(sets...)
}

// inputOf is the topic a scenario reads (the joins read src2 as well).
func inputOf(scenario string) string {
	if scenario == manyStores {
		return srcMany
	}
	return src1
}

func (r *report) find(scenario, system, guarantee string) *result {
	for _, x := range r.results {
		if x.Scenario == scenario && x.System == system && x.Guarantee == guarantee {
			return x
		}
	}
	return nil
}

type runner struct {
	cfg    *config
	cl     *kgo.Client
	adm    *kadm.Client
	rep    *report
	log    io.Writer
	runs   int
	total  int
	stamp  string
	logDir string
}

// run does the whole benchmark: load, limit, every scenario × guarantee ×
// system, the limit again, then the kill -9 resume.
func run(ctx context.Context, cfg *config, log io.Writer) (*report, error) {
	if cfg.workDir == "" {
		d, err := os.MkdirTemp("", "streamgen-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		cfg.workDir = d
	}
	cl, adm, err := newAdmin(cfg.brokers)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	r := &runner{cfg: cfg, cl: cl, adm: adm, log: log, rep: &report{cfg: cfg, started: time.Now(), loadStart: loadavg()},
		stamp: strconv.FormatInt(time.Now().Unix()%1000000, 10), logDir: filepath.Join(cfg.workDir, "logs")}
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		return nil, err
	}
	if cfg.has(sysFaust) && cfg.faustPython == "" {
		msg := "Faust: not measured"
		if cfg.faustMissing != "" {
			msg += ": " + cfg.faustMissing
		}
		r.rep.notes = append(r.rep.notes, msg)
	}
	r.total = r.countRuns()
	if err := r.loadInputs(ctx); err != nil {
		return nil, err
	}
	if cfg.has(sysLimit) {
		for _, g := range cfg.guarantees {
			r.limit(ctx, "consume", g)
			r.limit(ctx, "consumeproduce", g)
		}
	}
	for _, s := range cfg.scenarios {
		for _, g := range cfg.guarantees {
			for _, sys := range r.scenarioSystems() {
				if r.runnable(s, sys) {
					r.scenario(ctx, s, sys, g)
				}
			}
		}
	}
	if cfg.has(sysLimit) {
		// Again, on a broker every scenario has warmed up: measured only
		// first, on a broker whose JIT had not compiled its fetch and
		// produce paths yet, the limit came out slower than applications
		// that do more work per record. The faster of the two stands.
		for _, g := range cfg.guarantees {
			r.limitAgain(ctx, "consume", g)
			r.limitAgain(ctx, "consumeproduce", g)
		}
	}
	if cfg.latency && containsStr(cfg.scenarios, "streamprocesswithsink") {
		for _, g := range cfg.guarantees {
			for _, sys := range []string{sysLimit, sysOurs, sysKStream} {
				scen := "streamprocesswithsink"
				if sys == sysLimit {
					scen = "consumeproduce"
				}
				if res := r.rep.find(scen, sys, g); res != nil && (sys == sysLimit || r.runnable(scen, sys)) {
					r.latency(ctx, sys, g, res)
				}
			}
		}
	}
	if cfg.resumeKeys > 0 && containsStr(cfg.scenarios, "streamcount") && containsStr(cfg.guarantees, eos) {
		for _, sys := range []string{sysOurs, sysKStream} {
			if r.runnable("streamcount", sys) {
				r.resume(ctx, sys, eos)
			}
		}
	}
	r.rep.finished = time.Now()
	r.rep.loadEnd = loadavg()
	return r.rep, nil
}

// loadavg is the machine's load: how busy the shared cores were.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// scenarioSystems are the systems that run scenarios, in the order they
// run: the variant right after our side, so the two see the broker alike.
func (r *runner) scenarioSystems() []string {
	if r.cfg.variant.name != "" {
		return []string{sysOurs, r.cfg.variant.system(), sysKStream, sysFaust}
	}
	return []string{sysOurs, sysKStream, sysFaust}
}

func (r *runner) runnable(scenario, sys string) bool {
	switch sys {
	case sysOurs:
		return r.cfg.has(sysOurs)
	case r.cfg.variant.system():
		return r.cfg.has(sysOurs) && r.cfg.variant.name != ""
	case sysKStream:
		return r.cfg.has(sysKStream) && r.cfg.javaCP != ""
	case sysFaust:
		return r.cfg.has(sysFaust) && r.cfg.faustPython != "" && scenario == "streamcount"
	}
	return false
}

func (r *runner) countRuns() int {
	n := 0
	if r.cfg.has(sysLimit) {
		n += 4 * len(r.cfg.guarantees) // measured twice (run)
	}
	for _, s := range r.cfg.scenarios {
		for _, sys := range r.scenarioSystems() {
			if r.runnable(s, sys) {
				n += len(r.cfg.guarantees)
			}
		}
	}
	return n
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "%s bench: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// input is a topic the harness loads.
type input struct {
	topic      string
	partitions int
	seed       uint64
}

// inputs are the topics the selected scenarios read: src1 always (the
// limit and the resume read it too).
func (c *config) inputs() []input {
	in := []input{{src1, c.partitions, 1}}
	if slices.ContainsFunc(c.scenarios, func(s string) bool { return twoInputs[s] }) {
		in = append(in, input{src2, c.partitions, 3}) // the seed it always had
	}
	if slices.Contains(c.scenarios, manyStores) {
		in = append(in, input{srcMany, c.manyParts, 1})
	}
	return in
}

// loadInputs recreates the topics and loads the inputs once for every run.
// manystores' input gets the records of src1 (the same seed) in its own
// number of partitions.
func (r *runner) loadInputs(ctx context.Context) error {
	cfg := r.cfg
	inputs := cfg.inputs()
	if err := recreateTopic(ctx, r.adm, sink, int32(cfg.partitions)); err != nil {
		return err
	}
	// Created before the clock starts: the load's rate is the produce limit.
	for _, in := range inputs {
		if err := recreateTopic(ctx, r.adm, in.topic, int32(in.partitions)); err != nil {
			return err
		}
	}
	base := time.Now().Add(-time.Duration(cfg.records)*time.Millisecond - time.Minute).Truncate(time.Second)
	r.rep.keys = map[string]*keySet{}
	var bytes int64
	var n int
	began := time.Now()
	for _, in := range inputs {
		r.logf("loading %d records of %d-byte values over %d keys into %s (%d partitions)", cfg.records, cfg.valueSize, cfg.keys, in.topic, in.partitions)
		seen := newKeySet(cfg.keys)
		b, err := load(ctx, cfg.brokers, dataset{topic: in.topic, n: cfg.records, keys: cfg.keys, keyPrefix: "k",
			sequence: cfg.sequential, valueSize: cfg.valueSize, seed: in.seed, base: base, seen: seen})
		if err != nil {
			return fmt.Errorf("load %s: %w", in.topic, err)
		}
		r.rep.keys[in.topic] = seen
		bytes += b
		n += cfg.records
	}
	r.rep.produceRate = float64(n) / time.Since(began).Seconds()
	r.rep.bytesPerRec = float64(bytes) / float64(n)
	r.logf("loaded %d records in %.1fs (%.0f records/s), %d distinct keys in %s", n, time.Since(began).Seconds(),
		r.rep.produceRate, countKeys(r.rep.keys[src1]), src1)
	return nil
}

func shortG(g string) string {
	if g == eos {
		return "eos"
	}
	return "alos"
}

// limit runs one raw-client measurement.
func (r *runner) limit(ctx context.Context, scenario, g string) {
	self, err := os.Executable()
	if err != nil {
		r.rep.results = append(r.rep.results, &result{Scenario: scenario, System: sysLimit, Guarantee: g, Error: err.Error()})
		return
	}
	group := fmt.Sprintf("bench-limit-%s-%s-%s", scenario, shortG(g), r.stamp)
	args := []string{self, "limit", "-brokers", strings.Join(r.cfg.brokers, ","), "-group", group,
		"-commit-interval", r.cfg.eosCommit.String()}
	switch {
	case scenario == "consume":
		args = append(args, "-mode", "consume", fmt.Sprintf("-read-committed=%v", g == eos))
	case g == eos:
		args = append(args, "-mode", "txcopy")
	default:
		args = append(args, "-mode", "copy")
	}
	r.measure(ctx, scenario, sysLimit, g, group, args, int64(r.cfg.records))
}

// limitAgain measures a limit a second time and keeps the faster of the
// two measurements in the report.
func (r *runner) limitAgain(ctx context.Context, scenario, g string) {
	first := r.rep.find(scenario, sysLimit, g)
	r.limit(ctx, scenario, g)
	second := r.rep.results[len(r.rep.results)-1]
	r.rep.results = r.rep.results[:len(r.rep.results)-1]
	if first == nil {
		r.rep.results = append(r.rep.results, second)
		return
	}
	if second.Error == "" && (first.Error != "" || second.RecordsPerS > first.RecordsPerS) {
		r.logf("%s %s %s: the second measurement is the faster (%.0f records/s against %.0f): it stands",
			scenario, sysLimit, g, second.RecordsPerS, first.RecordsPerS)
		*first = *second
	}
}

// scenario runs one system on one scenario under one guarantee.
func (r *runner) scenario(ctx context.Context, scenario, sys, g string) {
	// "+" of a variant's system is not allowed in topic names.
	appID := fmt.Sprintf("bench-%s-%s-%s-%s", strings.ReplaceAll(sys, "+", "-"), scenario, shortG(g), r.stamp)
	expect := int64(r.cfg.records)
	if twoInputs[scenario] {
		expect *= 2
	}
	if sys == sysFaust && r.cfg.faustRecords > 0 && int64(r.cfg.faustRecords) < expect {
		expect = int64(r.cfg.faustRecords)
	}
	res := r.measure(ctx, scenario, sys, g, appID, r.argv(scenario, sys, g, appID, r.cfg.stateDir(appID), ""), expect)
	res.DistinctKeys = r.rep.distinctKeys(scenario)
}

// argv is the command line of one system; instanceID, when set, makes it a
// static group member (--group-instance-id, group.instance.id).
func (r *runner) argv(scenario, sys, g, appID, stateDir, instanceID string) []string {
	a := r.argv0(scenario, sys, g, appID, stateDir)
	if instanceID != "" {
		switch sys {
		case sysOurs, sysKStream:
			a = append(a, "--group-instance-id", instanceID)
		}
	}
	return a
}

func (r *runner) argv0(scenario, sys, g, appID, stateDir string) []string {
	cfg := r.cfg
	brokers := strings.Join(cfg.brokers, ",")
	ci := cfg.commitInterval(g)
	switch sys {
	case sysOurs, cfg.variant.system():
		a := []string{filepath.Join(cfg.binDir, scenario), "run", "--brokers", brokers, "--application-id", appID,
			"--guarantee", g, "--commit-interval", ci.String(), "--cache-bytes", strconv.FormatInt(cfg.cacheBytes, 10),
			"--state-dir", stateDir, "--log-level", "warn"}
		if sys != sysOurs {
			a = append(a, cfg.variant.args...)
		}
		return a
	case sysKStream:
		a := append([]string{"java"}, cfg.javaOpts...)
		return append(a, "-cp", cfg.javaCP, "io.streamgen.bench.Bench", "--scenario", scenario,
			"--brokers", brokers, "--application-id", appID, "--guarantee", g,
			"--commit-interval-ms", strconv.FormatInt(ci.Milliseconds(), 10),
			"--cache-bytes", strconv.FormatInt(cfg.cacheBytes, 10), "--state-dir", stateDir)
	case sysFaust:
		return []string{cfg.faustPython, cfg.faustScript, "--brokers", brokers, "--app-id", appID, "--guarantee", g,
			"--commit-interval-ms", strconv.FormatInt(ci.Milliseconds(), 10), "--partitions", strconv.Itoa(cfg.partitions),
			"--state-dir", stateDir}
	}
	panic("unknown system " + sys)
}

// measure runs argv until it has processed expect records, then stops it
// cleanly and records the figures.
func (r *runner) measure(ctx context.Context, scenario, sys, g, appID string, argv []string, expect int64) *result {
	r.runs++
	res := &result{Scenario: scenario, System: sys, Guarantee: g, Records: expect}
	r.rep.results = append(r.rep.results, res)
	meter := startMeter(r.cfg.brokerPID)
	label := fmt.Sprintf("[%d/%d] %s %s %s", r.runs, r.total, scenario, sys, g)
	r.logf("%s: %d records", label, expect)
	defer r.cleanup(ctx, appID)
	c, err := startChild(label, argv, r.env(sys, expect), "", filepath.Join(r.logDir, appID+".log"))
	if err != nil {
		res.Error = err.Error()
		r.logf("%s: %v", label, err)
		return res
	}
	o := c.waitDone(r.cfg.timeout, expect, func(n int64) { r.logf("%s: %d/%d", label, n, expect) })
	res.PeakRSSBytes = c.peakRSS()
	res.CPUS = c.stop(time.Minute)
	if o := meter.otherCores(res.CPUS); o >= 0 {
		res.OtherCores = &o
	}
	res.StateDirBytes = dirBytes(r.cfg.stateDir(appID))
	if !o.first.IsZero() {
		res.FirstRecordMS = ms(o.first.Sub(c.started))
	}
	if o.err != nil {
		res.Error = o.err.Error()
		r.logf("%s: %v", label, o.err)
		return res
	}
	busy := o.done.Sub(o.first).Seconds()
	if busy <= 0 {
		busy = 1e-3
	}
	res.RecordsPerS = float64(expect) / busy
	res.MBPerS = res.RecordsPerS * r.rep.bytesPerRec / 1e6
	if h := o.done.Sub(o.half.at).Seconds(); o.half.n > 0 && h > 0 {
		res.SecondHalfPerS = float64(expect-o.half.n) / h
	}
	r.logf("%s: %.0f records/s, %.1f MB/s, peak RSS %.0f MB, %.1f CPU s, first record after %.0f ms",
		label, res.RecordsPerS, res.MBPerS, float64(res.PeakRSSBytes)/1e6, res.CPUS, res.FirstRecordMS)
	return res
}

// env is what a child gets on top of the harness's environment: the count
// to expect, and the variant's own settings.
func (r *runner) env(sys string, expect int64) []string {
	env := []string{fmt.Sprintf("STREAMGEN_BENCH_EXPECT=%d", expect)}
	if sys == r.cfg.variant.system() {
		env = append(env, r.cfg.variant.env...)
	}
	return env
}

// dirBytes is the sum of the sizes of the files under dir, 0 if it does
// not exist: the state a system left on disk. Sizes, not allocated blocks,
// so that a file system's block rounding is not counted.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *runner) cleanup(ctx context.Context, appID string) {
	deleteAppTopics(ctx, r.adm, appID)
	os.RemoveAll(r.cfg.stateDir(appID))
}

// resume measures how long a count application with resumeKeys keys of
// state takes to process again after kill -9: it counts resumeKeys
// distinct keys, is killed with SIGKILL, 1000 more records arrive, and it is
// started again on the same state directory, as the same static group member
// (or, with -static=false, after its dynamic member is evicted, so that
// neither system waits out a session timeout). resume_ms is the time
// from that start to the first record processed.
func (r *runner) resume(ctx context.Context, sys, g string) {
	cfg := r.cfg
	n := cfg.resumeKeys
	target := r.rep.find("streamcount", sys, g)
	if target == nil {
		target = &result{Scenario: "streamcount", System: sys, Guarantee: g}
		r.rep.results = append(r.rep.results, target)
	}
	target.ResumeKeys = n
	fail := func(err error) {
		r.logf("resume %s %s: %v", sys, g, err)
		target.Error = joinErr(target.Error, "resume: "+err.Error())
	}
	if err := recreateTopic(ctx, r.adm, src1, int32(cfg.partitions)); err != nil {
		fail(err)
		return
	}
	base := time.Now().Add(-time.Duration(n)*time.Millisecond - time.Minute).Truncate(time.Second)
	r.logf("resume %s %s: loading %d records of %d distinct keys", sys, g, n, n)
	if _, err := load(ctx, cfg.brokers, dataset{topic: src1, n: n, keys: n, keyPrefix: "r", sequence: true,
		valueSize: cfg.valueSize, seed: 7, base: base}); err != nil {
		fail(err)
		return
	}
	appID := fmt.Sprintf("bench-%s-resume-%s-%s", sys, shortG(g), r.stamp)
	dir := cfg.stateDir(appID)
	defer r.cleanup(ctx, appID)
	label := fmt.Sprintf("resume %s %s", sys, g)
	instance := ""
	if cfg.static {
		instance = appID + "-instance"
	}
	first, err := startChild(label+" (first)", r.argv("streamcount", sys, g, appID, dir, instance),
		[]string{fmt.Sprintf("STREAMGEN_BENCH_EXPECT=%d", n)}, "", filepath.Join(r.logDir, appID+"-first.log"))
	if err != nil {
		fail(err)
		return
	}
	o := first.waitDone(cfg.timeout, int64(n), func(k int64) { r.logf("%s: counted %d/%d keys", label, k, n) })
	if o.err != nil {
		first.kill9()
		fail(o.err)
		return
	}
	// Let one more commit interval pass so both systems have committed
	// about as much as they will; then crash.
	time.Sleep(cfg.commitInterval(g) + 500*time.Millisecond)
	first.kill9()
	// A static member is simply replaced by its successor; a dynamic one
	// would hold its partitions until its session times out.
	if !cfg.static {
		if err := evict(ctx, r.cl, r.adm, appID); err != nil {
			fail(fmt.Errorf("evict: %w", err))
			return
		}
	}
	if _, err := load(ctx, cfg.brokers, dataset{topic: src1, n: 1000, keys: n, keyPrefix: "r", sequence: true,
		valueSize: cfg.valueSize, seed: 8, base: base.Add(time.Duration(n) * time.Millisecond)}); err != nil {
		fail(err)
		return
	}
	second, err := startChild(label+" (restart)", r.argv("streamcount", sys, g, appID, dir, instance),
		[]string{"STREAMGEN_BENCH_EXPECT=1000"}, "", filepath.Join(r.logDir, appID+"-restart.log"))
	if err != nil {
		fail(err)
		return
	}
	at, err := second.waitFirst(cfg.timeout)
	second.stop(time.Minute)
	if err != nil {
		fail(err)
		return
	}
	v := ms(at.Sub(second.started))
	target.ResumeMS = &v
	r.logf("%s: first record %.0f ms after the restart (%d keys of state)", label, v, n)
}
