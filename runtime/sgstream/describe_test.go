package sgstream

import (
	"fmt"
	"testing"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// TestDescribedSubTopologiesAreTasks checks, on a topology with a
// repartition, a table join and a global table, that sub-topology i of the
// description is the runtime's sub-topology i, whose tasks the engine
// names i_<partition>, and that it lists the nodes the runtime runs there.
// golden/TestDescribeIsRuntime compares this description with `streamgen
// describe` for every spec in the repository.
func TestDescribedSubTopologiesAreTasks(t *testing.T) {
	h, err := NewTopology("app", func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		g := GlobalTableSource(b, "gsrc", strSrc("g"), "gstore")
		tb := TableSource(b, "tsrc", strSrc("t"), "tstore")
		j := JoinStreamGlobal(s, g, "enrich", InnerJoin, func(k, _ string) string { return k },
			ValueJoiner(func(_, v1, v2 string) string { return v1 + v2 }))
		rekeyed := Repartition(SelectKey(j, "rekey", func(_, v string) string { return v }), "rekeyed", 0, serdes.String, serdes.String)
		joined := JoinStreamTable(rekeyed, tb, "join", LeftJoin,
			ValueJoiner(func(_, v1, v2 string) string { return v1 + v2 }))
		To(joined, "sink", "out", strSink())
		Count(GroupBy(joined, "regroup", func(_, v string) string { return v }, serdes.String, serdes.String), "count", "counts")
	})
	if err != nil {
		t.Fatal(err)
	}
	tp := (*engine.Handle)(h).Topology()
	g := h.Describe()
	subs := tp.SubTopologies()
	if len(subs) < 3 || len(g.Subs) != len(subs) {
		t.Fatalf("description has %d sub-topologies, the runtime %d (want at least 3)", len(g.Subs), len(subs))
	}
	for i, s := range subs {
		if s.ID != i {
			t.Errorf("runtime sub-topology %d has id %d", i, s.ID)
		}
		if id := (TaskID{Sub: s.ID, Partition: 3}).String(); id != fmt.Sprintf("%d_3", i) {
			t.Errorf("partition 3 of sub-topology %d runs as task %s", i, id)
		}
		names := map[string]bool{}
		for _, n := range g.Subs[i] {
			names[n.Name] = true
		}
		for _, n := range s.Nodes {
			if name := tp.Nodes()[n].Name; !names[name] {
				t.Errorf("node %q of runtime sub-topology %d is not in described sub-topology %d", name, i, i)
			}
		}
	}
}

// TestWrites checks which topics a topology writes the format of: fixed
// and per-record sinks' topics and tables' topics (their stores hold the
// topic's format), not the ones it only reads as a stream.
func TestWrites(t *testing.T) {
	h, err := NewTopology("app", func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		TableSource(b, "tsrc", strSrc("t"), "tstore")
		GlobalTableSource(b, "gsrc", strSrc("g"), "gstore")
		To(s, "sink", "out", strSink())
		ToDynamic(s, "route", func(k, _ string) string { return k }, []string{"a", "b"}, strSink())
	})
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]bool{"out": true, "a": true, "b": true, "t": true, "g": true, "in": false, "other": false} {
		if got := h.Writes(topic); got != want {
			t.Errorf("Writes(%q) = %v, want %v", topic, got, want)
		}
	}
}
