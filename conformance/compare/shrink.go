package main

import (
	"fmt"

	"github.com/streamgen/streamgen/conformance/internal/replay"
	"github.com/streamgen/streamgen/conformance/internal/scenario"
)

// maxShrinkRounds bounds shrinking: every round costs one JVM start and one Go run.
const maxShrinkRounds = 8

// shrink looks for a smaller input on which the two sides still differ. Each round tries,
// in one batch, every way of deleting a chunk of records (halves, quarters, ... single
// records) and keeps the smallest candidate that still differs.
func (r *runner) shrink(s *scenario.Scenario, in []replay.Record) ([]replay.Record, error) {
	cur := in
	for round := 0; round < maxShrinkRounds && len(cur) > 1; round++ {
		cands := candidates(cur)
		fails, err := r.differs(s, cands, round)
		if err != nil {
			return cur, err
		}
		best := -1
		for i, f := range fails {
			if f && (best < 0 || len(cands[i]) < len(cands[best])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		cur = cands[best]
	}
	return cur, nil
}

func candidates(recs []replay.Record) [][]replay.Record {
	var out [][]replay.Record
	for size := len(recs) / 2; ; size /= 2 {
		size = max(size, 1)
		for start := 0; start < len(recs); start += size {
			c := make([]replay.Record, 0, len(recs)-size)
			c = append(c, recs[:start]...)
			c = append(c, recs[min(start+size, len(recs)):]...)
			if len(c) > 0 {
				out = append(out, c)
			}
		}
		if size == 1 {
			return out
		}
	}
}

// differs runs candidate inputs through both sides in one batch each.
func (r *runner) differs(s *scenario.Scenario, cands [][]replay.Record, round int) ([]bool, error) {
	seqs := make([]replay.Sequence, len(cands))
	for i, c := range cands {
		seqs[i] = replay.Sequence{N: i + 1, Records: c}
	}
	input := encode(seqs)
	tag := fmt.Sprintf(".shrink%d", round)
	javaOut, err := r.runJava([]*scenario.Scenario{s}, map[string][]byte{s.Name: input}, tag)
	if err != nil {
		return nil, err
	}
	goOut, err := r.runGo(s, input, tag)
	if err != nil {
		return nil, err
	}
	want, err := decode(javaOut[s.Name])
	if err != nil {
		return nil, err
	}
	got, err := decode(goOut)
	if err != nil {
		return nil, err
	}
	gotBySeq := map[int][]replay.Record{}
	seen := map[int]bool{}
	for _, g := range got {
		gotBySeq[g.N] = g.Records
		seen[g.N] = true
	}
	fails := make([]bool, len(cands))
	for _, w := range want {
		fails[w.N-1] = !seen[w.N] || replay.Diff(w.Records, gotBySeq[w.N], s.Order == "multiset") != ""
	}
	return fails, nil
}
