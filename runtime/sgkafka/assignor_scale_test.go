package sgkafka

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// scaleMember is one instance of the simulated group: what it owns and
// holds going into a rebalance.
type scaleMember struct {
	id       string
	owned    []int32
	standbys []string
	// left are the tasks whose state the member's state directory still
	// holds from standbys and actives it no longer has.
	left []string
}

// scaleChangelogEnd is every task's changelog end offset sum in the
// simulation: a million records of state per task.
const scaleChangelogEnd = 1_000_000

// simulate runs one rebalance of members over one topic of tasks
// partitions with replicas standbys, as the group leader would, and
// returns each member's new actives and standbys, the time the plan took
// and the largest subscription metadata.
func simulate(t testing.TB, members []*scaleMember, tasks int32, replicas, maxWarmups int) (map[string][]int32, map[string][]string, time.Duration, int) {
	subs := []*engine.SubTopology{{ID: 0, Topics: []string{"in"}}}
	var jg []kmsg.JoinGroupResponseMember
	maxMeta := 0
	for _, m := range members {
		mb := &taskBalancer{subs: subs, global: map[int]bool{}}
		mb.withStandbys(replicas, "instance-"+m.id, func() ([]string, []string, map[string]int64) {
			state := append(slices.Clone(m.standbys), m.left...)
			offsets := map[string]int64{}
			for _, id := range state {
				offsets[id] = scaleChangelogEnd - 100 // caught up
			}
			for _, p := range m.owned {
				state = append(state, engine.TaskID{Partition: p}.String())
			}
			return m.standbys, state, offsets
		})
		meta := mb.JoinGroupMetadata([]string{"in"}, map[string][]int32{"in": m.owned}, 1)
		maxMeta = max(maxMeta, len(meta))
		jg = append(jg, kmsg.JoinGroupResponseMember{MemberID: m.id, ProtocolMetadata: meta})
	}
	leader := &taskBalancer{subs: subs, global: map[int]bool{}, replicas: replicas}
	leader.withWarmups(&warmups{max: maxWarmups, lag: DefaultAcceptableRecoveryLag, interval: time.Minute,
		ends: func(ts []balTask) map[string]int64 {
			out := make(map[string]int64, len(ts))
			for _, t := range ts {
				out[t.id()] = scaleChangelogEnd
			}
			return out
		}})
	start := time.Now()
	cb, err := kgo.NewConsumerBalancer(leader, jg)
	if err != nil {
		t.Fatal(err)
	}
	sync := leader.Balance(cb, map[string]int32{"in": tasks}).IntoSyncAssignment()
	took := time.Since(start)
	actives, standbys := map[string][]int32{}, map[string][]string{}
	for _, a := range sync {
		var ma kmsg.ConsumerMemberAssignment
		if err := ma.ReadFrom(a.MemberAssignment); err != nil {
			t.Fatal(err)
		}
		for _, tp := range ma.Topics {
			actives[a.MemberID] = append(actives[a.MemberID], tp.Partitions...)
		}
		var u assignmentUserData
		if len(ma.UserData) > 0 {
			json.Unmarshal(ma.UserData, &u)
		}
		standbys[a.MemberID] = u.Standby
	}
	return actives, standbys, took, maxMeta
}

// settle applies a plan to the members (what they own and hold next).
func settle(members []*scaleMember, actives map[string][]int32, standbys map[string][]string) {
	for _, m := range members {
		for _, p := range m.owned {
			m.left = append(m.left, engine.TaskID{Partition: p}.String())
		}
		m.left = append(m.left, m.standbys...)
		m.owned, m.standbys = actives[m.id], standbys[m.id]
		m.left = slices.DeleteFunc(m.left, func(id string) bool {
			return slices.Contains(m.standbys, id) || slices.ContainsFunc(m.owned, func(p int32) bool { return engine.TaskID{Partition: p}.String() == id })
		})
		slices.Sort(m.left)
		m.left = slices.Compact(m.left)
	}
}

// moved counts tasks a surviving member owned before and does not own
// now; spread is the most minus the fewest tasks of a member.
func moved(before []*scaleMember, actives map[string][]int32) (n, spread int) {
	lo, hi := -1, 0
	for _, m := range before {
		got, ok := actives[m.id]
		if !ok {
			continue
		}
		for _, p := range m.owned {
			if !slices.Contains(got, p) {
				n++
			}
		}
	}
	for _, m := range before {
		ps := actives[m.id]
		hi = max(hi, len(ps))
		if lo < 0 || len(ps) < lo {
			lo = len(ps)
		}
	}
	return n, hi - lo
}

// The assignor alone at the scale of a large deployment (issue #16's
// figures): 100 instances, 3,000 tasks, one standby each. A settled group
// rebalancing again moves nothing; an instance leaving moves only its own
// tasks, each to the instance holding its standby; an instance joining
// takes its share and nothing else moves; every task keeps a standby on
// another instance.
func TestAssignorAtScale(t *testing.T) {
	const instances, tasks = 100, 3000
	var members []*scaleMember
	for i := range instances {
		members = append(members, &scaleMember{id: fmt.Sprintf("m%03d", i)})
	}
	a, s, took, meta := simulate(t, members, tasks, 1, DefaultMaxWarmupReplicas)
	settle(members, a, s)
	checkStandbys(t, "first", a, s, tasks)
	t.Logf("first plan: %v, largest subscription %d bytes", took.Round(time.Microsecond), meta)

	a, s, took, meta = simulate(t, members, tasks, 1, DefaultMaxWarmupReplicas)
	n, spread := moved(members, a)
	t.Logf("settled group again: %v, %d tasks moved, spread %d, largest subscription %d bytes", took.Round(time.Microsecond), n, spread, meta)
	if n != 0 || spread > 1 {
		t.Errorf("a settled group rebalancing moved %d tasks (spread %d), want 0 (spread ≤ 1)", n, spread)
	}
	settle(members, a, s)

	gone := members[17]
	survivors := append(slices.Clone(members[:17]), members[18:]...)
	a, s, took, _ = simulate(t, survivors, tasks, 1, DefaultMaxWarmupReplicas)
	n, spread = moved(survivors, a)
	toStandby := 0
	for _, p := range gone.owned {
		id := engine.TaskID{Partition: p}.String()
		for _, m := range survivors {
			if slices.Contains(m.standbys, id) && slices.Contains(a[m.id], p) {
				toStandby++
			}
		}
	}
	t.Logf("one instance left: %v, %d of its %d tasks went to their standby, %d other tasks moved, spread %d",
		took.Round(time.Microsecond), toStandby, len(gone.owned), n, spread)
	if n != 0 || spread > 1 || toStandby < len(gone.owned)*9/10 {
		t.Errorf("leave: %d survivors' tasks moved (want 0), spread %d, %d of %d orphans to their standby", n, spread, toStandby, len(gone.owned))
	}
	checkStandbys(t, "leave", a, s, tasks)
	settle(survivors, a, s)

	joined := append(slices.Clone(survivors), &scaleMember{id: "m999"}, gone)
	gone.owned, gone.standbys = nil, nil
	joinWith(t, joined, tasks, instances)
}

// joinWith rebalances members, the last two of which just joined without
// state. Without warm-ups they take their share at once, nothing else
// moving, and restore it from scratch; with them (Kafka Streams' default
// of 2) no task moves to a member that is not caught up: the joiners get
// warm-up replicas, and each probing rebalance moves the caught-up ones.
func joinWith(t *testing.T, joined []*scaleMember, tasks int32, instances int) {
	t.Helper()
	a, _, took, _ := simulate(t, joined, tasks, 1, -1)
	n, spread := moved(joined, a)
	t.Logf("two instances joined, no warm-ups: %v, %d tasks to move to them, spread %d", took.Round(time.Microsecond), n, spread)
	if want := 2 * int(tasks) / (instances + 1); n > want+2 || n < want-2 {
		t.Errorf("join without warm-ups: %d tasks moved, want about %d, the newcomers' share", n, want)
	}
	a, s, took, _ := simulate(t, joined, tasks, 1, DefaultMaxWarmupReplicas)
	n, _ = moved(joined, a)
	warm := 0
	for _, m := range joined[len(joined)-2:] {
		warm += len(s[m.id]) - len(m.standbys)
		if len(a[m.id]) != 0 {
			t.Errorf("joiner %s got active tasks %v before any copy of their state", m.id, a[m.id])
		}
	}
	t.Logf("two instances joined, warm-ups: %v, %d tasks moved, %d warm-up replicas", took.Round(time.Microsecond), n, warm)
	if n != 0 || warm != DefaultMaxWarmupReplicas {
		t.Errorf("join with warm-ups: %d tasks moved (want 0), %d warm-ups (want %d)", n, warm, DefaultMaxWarmupReplicas)
	}
	settle(joined, a, s)
	// The probing rebalance: the warm-ups are caught up now.
	a, s, _, _ = simulate(t, joined, tasks, 1, DefaultMaxWarmupReplicas)
	n, _ = moved(joined, a)
	t.Logf("probing rebalance: %d caught-up tasks released to the joiners", n)
	if n != DefaultMaxWarmupReplicas {
		t.Errorf("probing rebalance released %d tasks, want the %d warmed up", n, DefaultMaxWarmupReplicas)
	}
	// Cooperative: the released tasks are assigned in the next rebalance,
	// which also releases the next warmed-up ones (here every standby is
	// caught up by the next rebalance).
	settle(joined, a, s)
	a, _, _, _ = simulate(t, joined, tasks, 1, DefaultMaxWarmupReplicas)
	got, assigned := 0, 0
	for _, m := range joined {
		assigned += len(a[m.id])
	}
	for _, m := range joined[len(joined)-2:] {
		got += len(a[m.id])
	}
	t.Logf("next rebalance: the joiners run %d tasks, %d more released to them", got, int(tasks)-assigned)
	if got != DefaultMaxWarmupReplicas || int(tasks)-assigned != DefaultMaxWarmupReplicas {
		t.Errorf("after the probing rebalance the joiners run %d tasks (want %d), %d in flight (want %d)",
			got, DefaultMaxWarmupReplicas, int(tasks)-assigned, DefaultMaxWarmupReplicas)
	}
}

// checkStandbys fails unless every task has exactly one standby, on
// another member (each member is its own instance here) than its active.
func checkStandbys(t *testing.T, what string, actives map[string][]int32, standbys map[string][]string, tasks int) {
	t.Helper()
	owner := map[string]string{}
	for m, ps := range actives {
		for _, p := range ps {
			owner[engine.TaskID{Partition: p}.String()] = m
		}
	}
	count := map[string]int{}
	for m, ids := range standbys {
		for _, id := range ids {
			if owner[id] == m {
				t.Errorf("%s: task %s and its standby are both on %s", what, id, m)
			}
			count[id]++
		}
	}
	if len(owner) != tasks || len(count) != tasks {
		t.Errorf("%s: %d tasks assigned, %d with a standby, want %d each", what, len(owner), len(count), tasks)
	}
}

func BenchmarkAssignor100Instances3000Tasks(b *testing.B) {
	var members []*scaleMember
	for i := range 100 {
		members = append(members, &scaleMember{id: fmt.Sprintf("m%03d", i)})
	}
	a, s, _, _ := simulate(b, members, 3000, 1, DefaultMaxWarmupReplicas)
	settle(members, a, s)
	for b.Loop() {
		simulate(b, members, 3000, 1, DefaultMaxWarmupReplicas)
	}
}
