package replay

import (
	"fmt"
	"sort"
)

// Diff compares the outputs of one sequence. Records are compared per topic: Kafka Streams
// fixes the order within a topic, while the relative order of records on different topics is
// an artifact of how a driver drains them. With multiset, order within a topic is ignored
// too. It returns "" when the outputs agree, else a description of the first difference.
func Diff(want, got []Record, multiset bool) string {
	w, g := byTopic(want), byTopic(got)
	topics := map[string]bool{}
	for t := range w {
		topics[t] = true
	}
	for t := range g {
		topics[t] = true
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		var d string
		if multiset {
			d = diffMultiset(w[t], g[t])
		} else {
			d = diffSequence(w[t], g[t])
		}
		if d != "" {
			return fmt.Sprintf("topic %q: %s", t, d)
		}
	}
	return ""
}

func byTopic(recs []Record) map[string][]string {
	m := map[string][]string{}
	for _, r := range recs {
		m[r.Topic] = append(m[r.Topic], Canonical(r))
	}
	return m
}

func diffSequence(want, got []string) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("output #%d (of %d) missing\n    kafka streams: %s\n    streamgen:     (nothing; it produced %d records)", i+1, len(want), want[i], len(got))
		case i >= len(want):
			return fmt.Sprintf("extra output #%d (kafka streams produced %d records)\n    kafka streams: (nothing)\n    streamgen:     %s", i+1, len(want), got[i])
		case want[i] != got[i]:
			return fmt.Sprintf("output #%d differs\n    kafka streams: %s\n    streamgen:     %s", i+1, want[i], got[i])
		}
	}
	return ""
}

func diffMultiset(want, got []string) string {
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var missing, extra []string
	for r, c := range count {
		for ; c > 0; c-- {
			missing = append(missing, r)
		}
		for ; c < 0; c++ {
			extra = append(extra, r)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	s := fmt.Sprintf("outputs differ as multisets (%d missing, %d extra; order ignored)", len(missing), len(extra))
	for i, r := range missing {
		if i == 3 {
			s += fmt.Sprintf("\n    ... %d more missing", len(missing)-3)
			break
		}
		s += "\n    missing: " + r
	}
	for i, r := range extra {
		if i == 3 {
			s += fmt.Sprintf("\n    ... %d more extra", len(extra)-3)
			break
		}
		s += "\n    extra:   " + r
	}
	return s
}
