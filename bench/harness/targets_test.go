package main

import (
	"strings"
	"testing"
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
