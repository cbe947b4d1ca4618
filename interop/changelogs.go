package interop

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A takeover is only as good as the layouts the two sides share, and the output alone shows
// a layout difference only when it changes a result. So after a run, every changelog of a
// takeover scenario's application (one side's records, then the other's) is compared with the
// twin's changelog of the same store, which Kafka Streams alone wrote over all of the input:
// per partition and changelog key, the records must be the same bytes (value and headers) in
// the same order, with the same timestamps. Keys are compared as bytes too, since a record
// whose key has another layout is a key only one side has. Across keys the order is not
// compared (as for the outputs, see sides). Where a repartition topic feeds the store, only
// a key's last timestamp is: the repartition topic interleaves the input partitions as the
// schedulers ran, so the third update of a word count may come from either side's line, and
// an aggregate's timestamp is the largest it has seen so far; its value is 3 on both sides,
// and its last timestamp is the largest of all.

// keyed is one changelog partition's records grouped by key in offset order.
type keyed map[string][]logged

// logged is what is compared of a changelog record besides its key.
type logged struct {
	data string // the value (hex, or null) and the headers
	ts   int64
}

// compareChangelogs compares the changelogs of the takeover scenarios with their twins'
// and writes a line per scenario, and the first differences; it returns the differences.
func compareChangelogs(ctx context.Context, w io.Writer, cfg Config, adm *kadm.Client, tk []*Scenario, run string) (int, error) {
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, s := range tk {
		app, twin := s.AppID+"-"+run+"-", "interop-"+s.Name+"-kstreams-"+run+"-"
		stores, records, diffs := 0, 0, 0
		for _, t := range topics.Names() {
			store, ok := strings.CutPrefix(t, app)
			if !ok || !strings.HasSuffix(store, "-changelog") {
				continue
			}
			r, d, err := diffChangelog(ctx, w, cfg.Brokers, s.Name, t, twin+store, len(s.Repartitions) == 0, diffs)
			if err != nil {
				return 0, err
			}
			stores, records, diffs = stores+1, records+r, diffs+d
		}
		if stores == 0 {
			return 0, fmt.Errorf("interop: %s: no changelog of %s*: a takeover without state tests only offsets", s.Name, app)
		}
		fmt.Fprintf(w, "interop: %-28s %d changelogs    %5d records, %d differences\n", s.Name, stores, records, diffs)
		total += diffs
	}
	return total, nil
}

// diffChangelog compares the takeover's changelog topic with the twin's, every timestamp or
// (allTimes false) each key's last; shown is how many differences of the scenario were
// printed already.
func diffChangelog(ctx context.Context, w io.Writer, brokers []string, scenario, topic, twinTopic string, allTimes bool, shown int) (records, diffs int, err error) {
	got, err := readChangelog(ctx, brokers, topic)
	if err != nil {
		return 0, 0, err
	}
	want, err := readChangelog(ctx, brokers, twinTopic)
	if err != nil {
		return 0, 0, err
	}
	for _, p := range unionKeys(got, want) {
		for _, k := range unionKeys(got[p], want[p]) {
			g, j := renderAll(got[p][k], allTimes), renderAll(want[p][k], allTimes)
			records += len(g)
			for i := range max(len(g), len(j)) {
				if at(g, i) == at(j, i) {
					continue
				}
				diffs++
				if shown+diffs <= showDiffs {
					fmt.Fprintf(w, "DIFF %s changelog %s partition %d key %x record %d:\n  takeover: %s\n  twin:     %s\n",
						scenario, topic, p, k, i, at(g, i), at(j, i))
				}
			}
		}
	}
	return records, diffs, nil
}

// unionKeys is the keys of both maps, sorted.
func unionKeys[K string | int32, V any](a, b map[K]V) []K {
	var ks []K
	for _, m := range []map[K]V{a, b} {
		for k := range m {
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
	}
	slices.Sort(ks)
	return ks
}

// readChangelog reads topic from its start to its last stable offset as a restoring store
// does (read_committed), keeping control records only to see where each partition ends.
func readChangelog(ctx context.Context, brokers []string, topic string) (map[int32]keyed, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	left, from := map[int32]int64{}, map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
			from[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("interop: changelog %s: %v", topic, err)
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: from})
	out := map[int32]keyed{}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("interop: changelog %s not read to its end: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			if out[r.Partition] == nil {
				out[r.Partition] = keyed{}
			}
			out[r.Partition][string(r.Key)] = append(out[r.Partition][string(r.Key)], logRecord(r))
		})
	}
	return out, nil
}

// renderAll renders one key's records for comparison, a line each: its value and headers,
// and its timestamp if allTimes or it is the last.
func renderAll(ls []logged, allTimes bool) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.data
		if allTimes || i == len(ls)-1 {
			out[i] += fmt.Sprintf(" timestamp %d", l.ts)
		}
	}
	return out
}

// logRecord is what is compared of a changelog record besides its key.
func logRecord(r *kgo.Record) logged {
	v := "null"
	if r.Value != nil {
		v = fmt.Sprintf("%x", r.Value)
	}
	var h []string
	for _, x := range r.Headers {
		h = append(h, fmt.Sprintf("%s=%x", x.Key, x.Value))
	}
	return logged{data: fmt.Sprintf("value %s headers [%s]", v, strings.Join(h, " ")), ts: r.Timestamp.UnixMilli()}
}
