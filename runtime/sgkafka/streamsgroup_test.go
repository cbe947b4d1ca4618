package sgkafka

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// regroupBuild counts values per value: a group-by that repartitions, so
// the topology has two sub-topologies, a repartition topic between them
// and a changelog.
func regroupBuild(in, out string) func(b *sgstream.Builder) {
	return func(b *sgstream.Builder) {
		s := sgstream.Source(b, "src", sgstream.SourceConfig[string, string]{Topic: in, Key: serdes.String, Value: serdes.String})
		g := sgstream.GroupBy(s, "by-value", func(_, v string) string { return v }, serdes.String, serdes.String)
		c := sgstream.Count(g, "count", "counts")
		sgstream.To(sgstream.ToStream(c, "s"), "sink", out, sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
	}
}

// TestStreamsGroupMembership joins two members to a streams group on the
// real broker (Kafka 4.4 computes the assignment; kfake has no streams
// groups) with the engine's topology description: the broker accepts it,
// splits the tasks of both sub-topologies between the members without
// overlap, and Kafka's own kafka-streams-groups tool describes both.
func TestStreamsGroupMembership(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	ev := testEnv{brokers: brokers, appID: uniq("sgk-sg"), in: uniq("sgk-sg-in"), out: uniq("sgk-sg-out")}
	t.Cleanup(func() { deleteTopicsWithPrefix(t, brokers, ev.appID, ev.in, ev.out) })
	createTopic(t, brokers, ev.in, 4)
	createTopic(t, brokers, ev.out, 4)
	e, err := New(ev.topology(t, regroupBuild), Config{Brokers: brokers, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := e.setup(ctx); err != nil {
		t.Fatal(err)
	}
	topo := e.streamsTopology()
	if len(topo.Subtopologies) != 2 || len(topo.Subtopologies[1].RepartitionSourceTopics) != 1 || len(topo.Subtopologies[0].RepartitionSinkTopics) != 1 {
		t.Fatalf("topology description: want 2 subtopologies joined by a repartition topic, got %+v", topo.Subtopologies)
	}
	cl := newClient(t, brokers)
	var members []*streamsMember
	for _, p := range []string{"process-a", "process-b"} {
		m, err := newStreamsMember(cl, ev.appID, "", p, "", topo)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	all := []engine.TaskID{{Sub: 0, Partition: 0}, {Sub: 0, Partition: 1}, {Sub: 0, Partition: 2}, {Sub: 0, Partition: 3},
		{Sub: 1, Partition: 0}, {Sub: 1, Partition: 1}, {Sub: 1, Partition: 2}, {Sub: 1, Partition: 3}}
	settled := func() bool {
		var got []engine.TaskID
		for _, m := range members {
			if len(m.owned.Active) == 0 || !m.reported {
				return false
			}
			got = append(got, m.owned.Active...)
		}
		slices.SortFunc(got, func(a, b engine.TaskID) int { return (a.Sub*100 + int(a.Partition)) - (b.Sub*100 + int(b.Partition)) })
		return slices.Equal(got, all)
	}
	for !settled() {
		if ctx.Err() != nil {
			t.Fatalf("the members never split the 8 tasks: %+v / %+v", members[0].owned, members[1].owned)
		}
		for _, m := range members {
			if _, err := m.heartbeat(ctx); err != nil {
				t.Fatal(err)
			}
			if !sameAssignment(m.target, m.owned) {
				m.acknowledge(m.target)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("assignment: a %v, b %v (epochs %d, %d)", members[0].owned.Active, members[1].owned.Active, members[0].epoch, members[1].epoch)

	out := streamsGroupsTool(t, ctx, "--bootstrap-server", strings.Join(brokers, ","), "--describe", "--members", "--group", ev.appID)
	t.Logf("kafka-streams-groups --describe --members:\n%s", out)
	for _, want := range []string{members[0].memberID, members[1].memberID, "process-a", "process-b", "ACTIVE:"} {
		if !strings.Contains(out, want) {
			t.Errorf("kafka-streams-groups --describe --members lacks %q:\n%s", want, out)
		}
	}
	for _, m := range members {
		if err := m.leave(ctx); err != nil {
			t.Errorf("leave: %v", err)
		}
	}
}

// streamsGroupsTool runs Kafka's kafka-streams-groups tool through
// scripts/kafka.sh, from the jars it fetched.
func streamsGroupsTool(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "kafka.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{script, "tool", "kafka-streams-groups"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafka-streams-groups %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestStreamsGroupTwoInstancesExactlyOnce runs the engine with
// --group-protocol streams on the real broker: two instances under
// exactly-once share the tasks of a topology with a repartition topic as
// the broker assigns them (one standby each), kafka-streams-groups shows
// both members with their active and standby tasks, one instance stops
// and the other takes over its tasks, and the output is what the test
// driver computes from the input: nothing lost, nothing counted twice
// across the moves, with the offsets committed in the transactions under
// the members' epochs.
func TestStreamsGroupTwoInstancesExactlyOnce(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	ev := testEnv{brokers: brokers, appID: uniq("sgk-sgw"), in: uniq("sgk-sgw-in"), out: uniq("sgk-sgw-out")}
	t.Cleanup(func() { deleteTopicsWithPrefix(t, brokers, ev.appID, ev.in, ev.out) })
	createTopic(t, brokers, ev.in, 4)
	createTopic(t, brokers, ev.out, 4)
	tp := ev.topology(t, regroupBuild)
	recs := inputRecords(ev.in, 900, 13)
	cfg := func() Config {
		return Config{Brokers: brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2, CommitInterval: 100 * time.Millisecond,
			GroupProtocol: ProtocolStreams, StandbyReplicas: 1}
	}
	a := startEngine(t, tp, cfg())
	produce(t, brokers, 4, recs[:300])
	waitFor(t, 90*time.Second, "a processed the first part", func() bool { return a.e.Processed() >= 300 })
	b := startEngine(t, tp, cfg())
	waitFor(t, 120*time.Second, "b got tasks", func() bool { return b.e.State() == Running && countTasks(b.e) > 0 && a.e.State() == Running })
	produce(t, brokers, 4, recs[300:600])
	waitFor(t, 90*time.Second, "both processed the second part", func() bool { return a.e.Processed()+b.e.Processed() >= 600+300 })
	if countTasks(a.e) == 0 || countTasks(b.e) == 0 || countTasks(a.e)+countTasks(b.e) != 8 {
		t.Fatalf("tasks not shared: a has %d, b has %d of 8", countTasks(a.e), countTasks(b.e))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := streamsGroupsTool(t, ctx, "--bootstrap-server", strings.Join(brokers, ","), "--describe", "--members", "--group", ev.appID)
	t.Logf("kafka-streams-groups --describe --members:\n%s", out)
	if n := strings.Count(out, "ACTIVE:"); n != 2 || !strings.Contains(out, "STANDBY:") {
		t.Errorf("want two members with active and standby tasks:\n%s", out)
	}
	if err := a.stop(t); err != nil {
		t.Fatal(err)
	}
	produce(t, brokers, 4, recs[600:])
	waitFor(t, 120*time.Second, "b took over every task", func() bool { return countTasks(b.e) == 8 })
	awaitDriverOutput(t, ev, tp, 4, recs, decodeCount)
	if err := b.stop(t); err != nil {
		t.Fatal(err)
	}
	expectDriverOutput(t, ev, tp, 4, recs, decodeCount, "output")
}
