package main

import (
	"fmt"
	"strings"

	"github.com/streamgen/streamgen/conformance/internal/replay"
	"github.com/streamgen/streamgen/conformance/internal/scenario"
)

// checkNonTrivial fails a scenario whose Kafka Streams side is (nearly) silent: a scenario that
// produces nothing tests nothing.
func (r *runner) checkNonTrivial(s *scenario.Scenario, out []replay.Sequence) {
	withOutput, records := 0, 0
	for _, seq := range out {
		if len(seq.Records) > 0 {
			withOutput++
		}
		records += len(seq.Records)
	}
	frac := float64(withOutput) / float64(max(len(out), 1))
	fmt.Printf("%-32s %4d/%d sequences with output, %6d records\n", s.Name, withOutput, len(out), records)
	if len(out) != r.opts.sequences {
		r.errorf("%s: the harness returned %d sequences, want %d", s.Name, len(out), r.opts.sequences)
	} else if frac < r.opts.minOutput {
		r.errorf("%s: only %d of %d sequences produced output (want at least %.0f%%)", s.Name, withOutput, len(out), 100*r.opts.minOutput)
	}
}

// compareScenario runs the Go side and returns how many sequences differ.
func (r *runner) compareScenario(s *scenario.Scenario, input []byte, want []replay.Sequence) int {
	out, err := r.runGo(s, input, "")
	if err != nil {
		r.errorf("%s: %v", s.Name, err)
		return 0
	}
	got, err := decode(out)
	if err != nil {
		r.errorf("%s: go side output: %v", s.Name, err)
		return 0
	}
	inputs, _ := decode(input)
	gotBySeq := map[int][]replay.Record{}
	seen := map[int]bool{}
	for _, g := range got {
		gotBySeq[g.N] = g.Records
		seen[g.N] = true
	}
	differing := 0
	for i, w := range want {
		var d string
		if !seen[w.N] {
			d = "sequence missing from the go side's output"
		} else {
			d = replay.Diff(w.Records, gotBySeq[w.N], s.Order == "multiset")
		}
		if d == "" {
			continue
		}
		differing++
		if differing > r.opts.show {
			continue
		}
		fmt.Printf("DIFF %s sequence %d: %s\n", s.Name, w.N, d)
		in := inputs[i].Records
		if differing == 1 && r.opts.shrink {
			if small, err := r.shrink(s, in); err != nil {
				fmt.Printf("    (shrinking failed: %v)\n", firstLine(err.Error()))
			} else {
				in = small
			}
		}
		what := "input"
		if len(in) < len(inputs[i].Records) {
			what = fmt.Sprintf("shrunk input (from %d records)", len(inputs[i].Records))
		}
		fmt.Printf("  %s (%d records; the full input is sequence %d of: go run ./conformance/gen -scenarios %s -seed %d -sequences %d):\n",
			what, len(in), w.N, s.Name, r.opts.seed, w.N)
		for _, rec := range in {
			fmt.Println("    " + replay.Canonical(rec))
		}
	}
	if differing > r.opts.show {
		fmt.Printf("DIFF %s: %d more differing sequences not shown\n", s.Name, differing-r.opts.show)
	}
	if r.opts.verbose {
		fmt.Printf("%s: %d/%d sequences differ\n", s.Name, differing, len(want))
	}
	return differing
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
