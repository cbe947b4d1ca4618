package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
)

// limitFor is the raw-client figure a scenario is held against: reading for
// streamprocess (which writes nothing), reading and writing (in
// transactions under exactly_once_v2) for the rest, which all write: a sink,
// changelogs or both.
func (r *report) limitFor(scenario, g string) *result {
	switch scenario {
	case manyStores:
		// The limit copies src1, not manystores' input of more partitions:
		// no ratio rather than one against another topic.
		return nil
	case "streamprocess":
		return r.find("consume", sysLimit, g)
	}
	return r.find("consumeproduce", sysLimit, g)
}

func ok(x *result) bool { return x != nil && x.Error == "" && x.RecordsPerS > 0 }

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func num(v float64) string {
	if v <= 0 {
		return "–"
	}
	s := fmt.Sprintf("%.0f", v)
	// Thousands separated by a thin space, as the other docs write them.
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(" ")
		}
		b.WriteRune(c)
	}
	return b.String()
}

func mb(v int64) string {
	if v <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(v)/(1<<20))
}

func rate(x *result) float64 {
	if ok(x) {
		return x.RecordsPerS
	}
	return 0
}

// table is the main comparison as a markdown table (printed by the command
// and written into docs/benchmarks.md).
func (r *report) table() string {
	var b strings.Builder
	b.WriteString("| scenario | guarantee | streamgen rec/s | Kafka Streams rec/s | ours/KS | ours/KS 2nd half | limit rec/s | ours/limit | peak RSS MiB ours / KS | RSS ours/KS | CPU s ours / KS | first record ms ours / KS | first ours/KS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.cfg.scenarios {
		for _, g := range r.cfg.guarantees {
			o, k, l := r.find(s, sysOurs, g), r.find(s, sysKStream, g), r.limitFor(s, g)
			var oRSS, kRSS int64
			var oCPU, kCPU, oFirst, kFirst float64
			if o != nil {
				oRSS, oCPU, oFirst = o.PeakRSSBytes, o.CPUS, o.FirstRecordMS
			}
			if k != nil {
				kRSS, kCPU, kFirst = k.PeakRSSBytes, k.CPUS, k.FirstRecordMS
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s / %s | %s / %s | %s |\n",
				s, g, num(rate(o)), num(rate(k)), ratio(rate(o), rate(k)), ratio(half(o), half(k)), num(rate(l)), ratio(rate(o), rate(l)),
				mb(oRSS), mb(kRSS), ratio(float64(oRSS), float64(kRSS)),
				cpu(oCPU), cpu(kCPU), num(oFirst), num(kFirst), ratio(oFirst, kFirst))
		}
	}
	if l := r.loadedRuns(); l != "" {
		b.WriteString("\n" + l)
	}
	if st := r.stateRows(); st != "" {
		b.WriteString("\n" + st)
	}
	if v := r.variantRows(); v != "" {
		b.WriteString("\n" + v)
	}
	if others := r.otherRows(); others != "" {
		b.WriteString("\n" + others)
	}
	if lat := r.latencyRows(); lat != "" {
		b.WriteString("\n" + lat)
	}
	if res := r.resumeRows(); res != "" {
		b.WriteString("\n" + res)
	}
	if errs := r.errorRows(); errs != "" {
		b.WriteString("\n" + errs)
	}
	for _, n := range r.notes {
		b.WriteString("\n" + n + "\n")
	}
	return b.String()
}

// stateRows lists what the stateful scenarios left on disk per key, and
// their steady rates (the second half of the records).
func (r *report) stateRows() string {
	var b strings.Builder
	for _, s := range r.cfg.scenarios {
		if stateless[s] {
			continue
		}
		for _, g := range r.cfg.guarantees {
			o, k := r.find(s, sysOurs, g), r.find(s, sysKStream, g)
			if o == nil && k == nil {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("| state and steady rate | guarantee | distinct keys | disk bytes/key ours / KS | disk ours/KS | 2nd-half rec/s ours / KS |\n|---|---|---|---|---|---|\n")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s / %s | %s | %s / %s |\n", s, g, num(float64(r.distinctKeys(s))),
				num(perKey(o)), num(perKey(k)), ratio(perKey(o), perKey(k)), num(half(o)), num(half(k)))
		}
	}
	return b.String()
}

// perKey is the state directory's bytes per distinct key of the input.
func perKey(x *result) float64 {
	if !ok(x) || x.DistinctKeys == 0 {
		return 0
	}
	return float64(x.StateDirBytes) / float64(x.DistinctKeys)
}

// variantRows sets the variant of our side (-variant) next to our side as
// it runs by default, and next to Kafka Streams' peak RSS.
func (r *report) variantRows() string {
	v := r.cfg.variant
	if v.name == "" {
		return ""
	}
	vs := v.system()
	var b strings.Builder
	fmt.Fprintf(&b, "| %s: our side with `%s` | guarantee | streamgen rec/s | variant rec/s | variant/ours | variant/ours 2nd half | peak RSS MiB ours / variant / KS | RSS variant/ours | RSS variant/KS | disk bytes/key ours / variant |\n|---|---|---|---|---|---|---|---|---|---|\n",
		vs, strings.Join(append(slices.Clone([]string(v.env)), v.args...), " "))
	for _, s := range r.cfg.scenarios {
		for _, g := range r.cfg.guarantees {
			o, x, k := r.find(s, sysOurs, g), r.find(s, vs, g), r.find(s, sysKStream, g)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s / %s / %s | %s | %s | %s / %s |\n", s, g,
				num(rate(o)), num(rate(x)), ratio(rate(x), rate(o)), ratio(half(x), half(o)),
				mb(rss(o)), mb(rss(x)), mb(rss(k)), ratio(float64(rss(x)), float64(rss(o))), ratio(float64(rss(x)), float64(rss(k))),
				num(perKey(o)), num(perKey(x)))
		}
	}
	return b.String()
}

func rss(x *result) int64 {
	if x == nil {
		return 0
	}
	return x.PeakRSSBytes
}

func half(x *result) float64 {
	if ok(x) {
		return x.SecondHalfPerS
	}
	return 0
}

func cpu(v float64) string {
	if v <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}

// otherRows lists the limit and Faust runs.
func (r *report) otherRows() string {
	var b strings.Builder
	for _, x := range r.results {
		if x.System != sysLimit && x.System != sysFaust {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| system | scenario | guarantee | rec/s | MB/s | peak RSS MiB | CPU s | first record ms |\n|---|---|---|---|---|---|---|---|\n")
		}
		what := x.Scenario
		if x.System == sysLimit {
			what = map[string]string{"consume": "consume (franz-go)", "consumeproduce": "consume→produce (franz-go)"}[x.Scenario]
			if x.Scenario == "consumeproduce" && x.Guarantee == eos {
				what = "consume→produce in transactions (franz-go)"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %s | %s | %s |\n", x.System, what, x.Guarantee,
			num(rate(x)), x.MBPerS, mb(x.PeakRSSBytes), cpu(x.CPUS), num(x.FirstRecordMS))
	}
	if r.produceRate > 0 {
		if b.Len() == 0 {
			b.WriteString("| system | scenario | guarantee | rec/s |\n|---|---|---|---|\n")
			fmt.Fprintf(&b, "| limit | produce (loading the inputs, franz-go) | – | %s |\n", num(r.produceRate))
		} else {
			fmt.Fprintf(&b, "| limit | produce (loading the inputs, franz-go, in the harness) | – | %s | %.1f | – | – | – |\n",
				num(r.produceRate), r.produceRate*r.bytesPerRec/1e6)
		}
	}
	return b.String()
}

func (r *report) latencyRows() string {
	var b strings.Builder
	for _, x := range r.results {
		if x.LatencyP50MS == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| end-to-end latency at 2 000 records/s (input timestamp → read committed from the sink) | guarantee | p50 ms | p99 ms |\n|---|---|---|---|\n")
		}
		name := x.System
		if x.System == sysLimit {
			name = "limit (franz-go copy)"
		} else {
			name += " streamprocesswithsink"
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f |\n", name, x.Guarantee, *x.LatencyP50MS, *x.LatencyP99MS)
	}
	return b.String()
}

func (r *report) resumeRows() string {
	o, k := r.find("streamcount", sysOurs, eos), r.find("streamcount", sysKStream, eos)
	if (o == nil || o.ResumeMS == nil) && (k == nil || k.ResumeMS == nil) {
		return ""
	}
	v := func(x *result) float64 {
		if x == nil || x.ResumeMS == nil {
			return 0
		}
		return *x.ResumeMS
	}
	return fmt.Sprintf("| resume after kill -9 (streamcount, %s, %d keys of state) | streamgen ms | Kafka Streams ms | KS/ours |\n|---|---|---|---|\n| time from restart to the first record processed | %s | %s | %s |\n",
		eos, r.cfg.resumeKeys, num(v(o)), num(v(k)), ratio(v(k), v(o)))
}

func (r *report) errorRows() string {
	var b strings.Builder
	for _, x := range r.results {
		if x.Error != "" {
			fmt.Fprintf(&b, "- %s %s %s: %s\n", x.Scenario, x.System, x.Guarantee, x.Error)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "Failed or incomplete runs:\n\n" + b.String()
}

// targetRows collects the rows of the targets table: each target, what this
// run measured, and whether it is met ("not measured" when a run it needs
// is missing or failed).
type targetRows struct{ b strings.Builder }

func (t *targetRows) row(target, got string, met, known bool) {
	m := "no"
	if met {
		m = "yes"
	}
	if !known {
		m, got = "not measured", "–"
	}
	fmt.Fprintf(&t.b, "| %s | %s | %s |\n", target, got, m)
}

// rssRatio is ours' peak RSS over Kafka Streams', 0 when either is missing.
func rssRatio(o, k *result) float64 {
	if !ok(o) || !ok(k) {
		return 0
	}
	return float64(o.PeakRSSBytes) / float64(max(k.PeakRSSBytes, 1))
}

// secondHalf is the rate over the second half of the records, past the
// JVM's warm-up, or the whole run's rate where the harness has no halves.
func secondHalf(x *result) float64 {
	if ok(x) && x.SecondHalfPerS > 0 {
		return x.SecondHalfPerS
	}
	return rate(x)
}

// targets checks issue #17's targets against this run (the earlier issue
// #6 targets they tighten are left out): every ratio is between figures of
// this one run.
func (r *report) targets() string {
	var t targetRows
	t.b.WriteString("| target | this run | met |\n|---|---|---|\n")
	r.limitTargets(&t)
	r.bigStateTargets(&t)
	for _, g := range r.cfg.guarantees {
		o, k := r.find(manyStores, sysOurs, g), r.find(manyStores, sysKStream, g)
		m := rssRatio(o, k)
		t.row(fmt.Sprintf("manystores (%d partitions × 3 stores on one instance, both at their defaults) peak RSS ≤ ¼ of Kafka Streams' (%s)", r.cfg.manyParts, g),
			fmt.Sprintf("%.2f× the RSS", m), m <= 0.25, m > 0)
	}
	o, k := r.find("streamcount", sysOurs, eos), r.find("streamcount", sysKStream, eos)
	known := o != nil && k != nil && o.ResumeMS != nil && k.ResumeMS != nil && *o.ResumeMS > 0
	q := 0.0
	if known {
		q = *k.ResumeMS / *o.ResumeMS
	}
	t.row(fmt.Sprintf("resume after kill -9 with %d keys ≥ 10× faster", r.cfg.resumeKeys), fmt.Sprintf("%.1f× faster", q), q >= 10, known)
	return t.b.String()
}

// limitTargets are the targets against the raw franz-go copy: the sink path
// near the wire, windows and joins near it at a fraction of Kafka Streams'
// memory.
func (r *report) limitTargets(t *targetRows) {
	targets := []struct {
		scenario string
		limit    float64 // least fraction of the raw copy's rate
		rss      float64 // most of Kafka Streams' peak RSS (0: no RSS target)
		rssText  string
	}{
		{"streamprocesswithsink", 0.85, 0, ""},
		{"streamcountwindowed", 0.3, 0.25, "¼"},
		{"streamprocesswithwindowstore", 0.3, 0.25, "¼"},
		{"streamstreamjoin", 0.2, 0.5, "½"},
	}
	for _, x := range targets {
		for _, g := range r.cfg.guarantees {
			o, l, k := r.find(x.scenario, sysOurs, g), r.limitFor(x.scenario, g), r.find(x.scenario, sysKStream, g)
			q := rate(o) / max(rate(l), 1e-9)
			if x.rss == 0 {
				t.row(fmt.Sprintf("%s ≥ %.2f× raw consume→produce (%s)", x.scenario, x.limit, g),
					fmt.Sprintf("%.2f×", q), q >= x.limit, ok(o) && ok(l))
				continue
			}
			m := rssRatio(o, k)
			t.row(fmt.Sprintf("%s ≥ %.1f× raw consume→produce at ≤ %s of Kafka Streams' peak RSS (%s)", x.scenario, x.limit, x.rssText, g),
				fmt.Sprintf("%.2f× at %.2f× the RSS", q, m), q >= x.limit && m <= x.rss, ok(o) && ok(l) && m > 0)
		}
	}
}

// bigStateTargets are the counts over 10 M distinct keys, compared over the
// second half of the records; they are measured only by a run with
// -keys 10000000 -sequential-keys (and at least as many records).
func (r *report) bigStateTargets(t *targetRows) {
	big := r.cfg.sequential && r.cfg.keys >= 10_000_000 && r.cfg.records >= r.cfg.keys
	for _, s := range []string{"streamcount", "streamcountwindowed"} {
		for _, g := range r.cfg.guarantees {
			o, k := r.find(s, sysOurs, g), r.find(s, sysKStream, g)
			q := secondHalf(o) / max(secondHalf(k), 1e-9)
			m := rssRatio(o, k)
			t.row(fmt.Sprintf("%s over 10 M keys ≥ 3× Kafka Streams (second half) at ≤ ⅓ its peak RSS (%s)", s, g),
				fmt.Sprintf("%.2f× at %.2f× the RSS", q, m), q >= 3 && m <= 1.0/3, big && m > 0)
		}
	}
}

// machine describes the host from /proc/cpuinfo and free.
func machine() string {
	var model string
	cpus := 0
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, found := strings.Cut(sc.Text(), ":")
			if !found {
				continue
			}
			switch strings.TrimSpace(k) {
			case "model name":
				model = strings.TrimSpace(v)
			case "processor":
				cpus++
			}
		}
		f.Close()
	}
	mem := ""
	if out, err := exec.Command("free", "-m").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "Mem:") {
				f := strings.Fields(line)
				if len(f) >= 7 {
					mem = fmt.Sprintf("%s MiB memory, %s MiB available at the start", f[1], f[6])
				}
			}
		}
	}
	java := ""
	if out, err := exec.Command("java", "-version").CombinedOutput(); err == nil {
		java = strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
	}
	return fmt.Sprintf("%d × %s; %s; Linux, %s, %s", cpus, model, mem, runtime.Version(), java)
}

func (r *report) write(cfg *config) error {
	if cfg.jsonOut != "" {
		b, err := json.MarshalIndent(r.results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if cfg.mdOut != "" {
		if err := os.WriteFile(cfg.mdOut, []byte(r.markdown()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
