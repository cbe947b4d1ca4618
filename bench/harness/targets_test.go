package main

import (
	"strings"
	"testing"
	"time"
)

// TestTargets checks issue 17's targets table on made-up figures: a target
// is met or missed by the ratio it names, and one whose runs are missing is
// "not measured" rather than missed.
func TestTargets(t *testing.T) {
	res := func(s, sys, g string, rate float64, rssMiB int64) *result {
		return &result{Scenario: s, System: sys, Guarantee: g, RecordsPerS: rate, PeakRSSBytes: rssMiB << 20}
	}
	r := &report{cfg: &config{guarantees: []string{alos}, manyParts: 48, resumeKeys: 1000}, results: []*result{
		res("consumeproduce", sysLimit, alos, 1000, 80),
		res("streamprocesswithsink", sysOurs, alos, 900, 50),
		res("streamcountwindowed", sysOurs, alos, 400, 100),
		res("streamcountwindowed", sysKStream, alos, 100, 300), // RSS 0.33×: missed
		res("streamstreamjoin", sysOurs, alos, 250, 100),
		res("streamstreamjoin", sysKStream, alos, 100, 300),
	}}
	got := r.targets()
	for _, want := range []string{
		"| streamprocesswithsink ≥ 0.85× raw consume→produce (at_least_once) | 0.90× | yes |",
		"| streamcountwindowed ≥ 0.3× raw consume→produce at ≤ ¼ of Kafka Streams' peak RSS (at_least_once) | 0.40× at 0.33× the RSS | no |",
		"| streamstreamjoin ≥ 0.2× raw consume→produce at ≤ ½ of Kafka Streams' peak RSS (at_least_once) | 0.25× at 0.33× the RSS | yes |",
		"| streamprocesswithwindowstore ≥ 0.3× raw consume→produce at ≤ ¼ of Kafka Streams' peak RSS (at_least_once) | – | not measured |",
		"| streamcount over 10 M keys ≥ 3× Kafka Streams (second half) at ≤ ⅓ its peak RSS (at_least_once) | – | not measured |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("targets lack %q:\n%s", want, got)
		}
	}

	// The same figures from a run over 10 M sequential keys are measured,
	// over the second half's rates.
	r.cfg.sequential, r.cfg.keys, r.cfg.records = true, 10_000_000, 10_000_000
	r.results = append(r.results,
		&result{Scenario: "streamcount", System: sysOurs, Guarantee: alos, RecordsPerS: 100, SecondHalfPerS: 400, PeakRSSBytes: 100 << 20},
		&result{Scenario: "streamcount", System: sysKStream, Guarantee: alos, RecordsPerS: 100, SecondHalfPerS: 100, PeakRSSBytes: 400 << 20})
	if want := "| streamcount over 10 M keys ≥ 3× Kafka Streams (second half) at ≤ ⅓ its peak RSS (at_least_once) | 4.00× at 0.25× the RSS | yes |"; !strings.Contains(r.targets(), want) {
		t.Errorf("targets lack %q:\n%s", want, r.targets())
	}
}

// TestOtherCores checks the arithmetic and the parsing of /proc behind the
// report's loaded runs: what the machine spent, less the harness, the
// broker and the system under test, per second of the run.
func TestOtherCores(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := cpuReading{at: t0, machine: 100, self: 10, broker: 20}
	b := cpuReading{at: t0.Add(10 * time.Second), machine: 140, self: 12, broker: 30}
	// 40 s busy in 10 s: 2 the harness, 10 the broker, 20 the child, 8 others.
	if got := otherCores(a, b, 20); got != 0.8 {
		t.Errorf("otherCores = %v, want 0.8", got)
	}
	if got := otherCores(a, b, 35); got != 0 {
		t.Errorf("otherCores with more child CPU than the rest = %v, want 0", got)
	}
	b.machine = -1
	if got := otherCores(a, b, 20); got != -1 {
		t.Errorf("otherCores without /proc/stat = %v, want -1", got)
	}

	stat := "cpu  1000 50 300 8000 200 10 20 5 7 0\ncpu0 500 25 150 4000 100 5 10 2 3 0\n"
	if got, want := machineBusy(stat), float64(1000+50+300+10+20+5)/clockTicks; got != want {
		t.Errorf("machineBusy = %v, want %v", got, want)
	}
	if got := machineBusy("intr 1 2 3\n"); got != -1 {
		t.Errorf("machineBusy of no cpu line = %v, want -1", got)
	}
	pid := "4242 (java (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 40 0 100 0 0"
	if got, want := statCPU(pid), 4.0; got != want {
		t.Errorf("statCPU = %v, want %v (utime 250 + stime 150 ticks)", got, want)
	}
}

// TestLoadedRuns checks the report's line on loaded runs.
func TestLoadedRuns(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &report{results: []*result{
		{Scenario: "streamcount", System: sysOurs, Guarantee: alos, OtherCores: f(0.1)},
		{Scenario: "streamcount", System: sysKStream, Guarantee: alos, OtherCores: f(1.4)},
	}}
	got := r.loadedRuns()
	if !strings.Contains(got, "streamcount kafka-streams at_least_once (1.40)") || strings.Contains(got, "streamgen at_least_once") {
		t.Errorf("loadedRuns = %q", got)
	}
	r.results[1].OtherCores = f(0)
	if got := r.loadedRuns(); !strings.HasPrefix(got, "During every run") {
		t.Errorf("loadedRuns with none loaded = %q", got)
	}
}
