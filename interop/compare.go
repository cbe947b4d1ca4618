package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
)

// Result is a run's tally: Records counts the streamgen side's output records, Differences
// the positions where the two sides' records of one key differ (a record only one side has
// counts as one).
type Result struct {
	Scenarios, Records, Differences int
	Formats                         string
}

// Summary is the line a run ends with.
func (r *Result) Summary() string {
	return fmt.Sprintf("interop: %d scenarios, %d records, %d differences", r.Scenarios, r.Records, r.Differences)
}

// line is one record as the Java consumer prints it.
type line struct {
	Scenario  string          `json:"scenario"`
	Side      string          `json:"side"`
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
	Key       *string         `json:"key"`
	Value     json.RawMessage `json:"value"`
}

// sides holds one output topic's records per side, each key's in the order written. Kafka
// orders records only per partition and a key stays in one, so per key is the order both
// Kafka Streams and streamgen promise; across keys the interleaving is not compared.
type sides map[string]map[string][]string // side -> key -> canonical values

// showDiffs is how many differing records a scenario prints.
const showDiffs = 5

// compare tallies the consumer's lines per scenario and writes a line per scenario and the
// first differences of each.
func compare(w io.Writer, ss []*Scenario, out []byte) (*Result, error) {
	byTopic := map[string]sides{}
	for _, b := range lines(out) {
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("interop: consumer line %q: %v", b, err)
		}
		id := l.Scenario + "/" + l.Topic
		if byTopic[id] == nil {
			byTopic[id] = sides{"streamgen": {}, "kstreams": {}}
		}
		k := "<null>"
		if l.Key != nil {
			k = *l.Key
		}
		byTopic[id][l.Side][k] = append(byTopic[id][l.Side][k], string(l.Value))
	}
	res := &Result{Scenarios: len(ss), Formats: FormatsOf(ss)}
	for _, s := range ss {
		recs, diffs := 0, 0
		for _, o := range s.Outputs {
			sd := byTopic[s.Name+"/"+o]
			if sd == nil || len(sd["streamgen"]) == 0 || len(sd["kstreams"]) == 0 {
				return nil, fmt.Errorf("interop: %s: no records on %s from one side or both: a scenario that outputs nothing tests nothing", s.Name, o)
			}
			if slices.Contains(s.Tombstones, o) {
				if err := tombstones(w, s.Name, o, sd); err != nil {
					return nil, err
				}
			}
			r, d := diffTopic(w, s.Name, o, sd, diffs)
			recs, diffs = recs+r, diffs+d
		}
		fmt.Fprintf(w, "interop: %-28s %-14s %5d records, %d differences\n", s.Name, fmt.Sprint(s.Formats), recs, diffs)
		res.Records += recs
		res.Differences += diffs
	}
	return res, nil
}

// diffTopic compares one output topic key by key; shown is how many differences of the
// scenario were printed already.
func diffTopic(w io.Writer, scenario, topic string, sd sides, shown int) (records, diffs int) {
	keys := map[string]bool{}
	for _, side := range sd {
		for k := range side {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		g, j := sd["streamgen"][k], sd["kstreams"][k]
		records += len(g)
		for i := range max(len(g), len(j)) {
			gv, jv := at(g, i), at(j, i)
			if gv == jv {
				continue
			}
			diffs++
			if shown+diffs <= showDiffs {
				fmt.Fprintf(w, "DIFF %s %s key %q record %d:\n  streamgen:     %s\n  kafka streams: %s\n", scenario, topic, k, i, gv, jv)
			}
		}
	}
	return records, diffs
}

func at(vs []string, i int) string {
	if i < len(vs) {
		return vs[i]
	}
	return "(none)"
}

// tombstones counts the null values of one output topic per side and fails when a side has
// none; the counts are printed, for the record.
func tombstones(w io.Writer, scenario, topic string, sd sides) error {
	n := map[string]int{}
	for side, keys := range sd {
		for _, vs := range keys {
			for _, v := range vs {
				if v == "null" {
					n[side]++
				}
			}
		}
	}
	fmt.Fprintf(w, "interop: %s: %s: tombstones: streamgen %d, kafka streams %d\n", scenario, topic, n["streamgen"], n["kstreams"])
	if n["streamgen"] == 0 || n["kstreams"] == 0 {
		return fmt.Errorf("interop: %s: %s must carry tombstones on both sides", scenario, topic)
	}
	return nil
}
