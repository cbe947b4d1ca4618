package sgstream

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// Each node of a task counts the records it forwards; nodes of other
// sub-topologies are not listed, and a node with two chained outputs (a
// repartition source feeding a grouped table) counts each record once.
func TestForwardCounts(t *testing.T) {
	tp, err := newTopology("app", func(b *Builder) {
		s := Source(b, "src", SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
		f := Filter(s, "keep", func(_, v string) bool { return v != "drop" })
		fm := FlatMapValues(f, "twice", func(_, v string) []string { return []string{v, v} })
		To(fm, "sink", "out", SinkConfig[string, string]{Key: serdes.String, Value: serdes.String})
		tb := ToTable(Source(b, "tsrc", SourceConfig[string, string]{Topic: "t", Key: serdes.String, Value: serdes.String}),
			"table", "tstore", serdes.String, serdes.String)
		GroupByTable(tb, "regroup", func(k, v string) (string, string) { return v, k }, serdes.String, serdes.String)
	})
	if err != nil {
		t.Fatal(err)
	}
	sub0 := tp.SubTopologyOf("in").ID
	task, err := tp.newTask(engine.TaskID{Sub: sub0}, engine.TaskConfig{Collector: nopCollector{}, Stores: builtinProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	for i, v := range []string{"a", "drop", "b"} {
		if err := task.Process(&RawRecord{Topic: "in", Offset: int64(i), Key: []byte("k"), Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	counts := task.ForwardCounts(nil)
	for i, n := range task.ForwardingNodes() {
		got = append(got, fmt.Sprintf("%s=%d", n.Name, counts[i]))
	}
	if want := "src=3 keep=2 twice=4"; strings.Join(got, " ") != want {
		t.Errorf("forward counts %s, want %s", strings.Join(got, " "), want)
	}

	// The regrouping sub-topology reads the repartition topic: its source
	// node feeds a grouped table, and counts once.
	sub := tp.SubTopologyOf(tp.appID + "-regroup-repartition")
	if sub == nil {
		t.Fatal("no sub-topology reads the regroup repartition topic")
	}
	task2, err := tp.newTask(engine.TaskID{Sub: sub.ID}, engine.TaskConfig{Collector: nopCollector{}, Stores: builtinProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	defer task2.Close()
	seen := map[string]int{}
	for _, n := range task2.ForwardingNodes() {
		seen[n.Name]++
		if tp.nodes[n.ID].Sub != sub.ID {
			t.Errorf("node %q of sub-topology %d listed for a task of sub-topology %d", n.Name, tp.nodes[n.ID].Sub, sub.ID)
		}
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("node %q listed %d times", name, n)
		}
	}
}
