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
}

// simulate runs one rebalance of members over one topic of tasks
// partitions with replicas standbys, as the group leader would, and
// returns each member's new actives and standbys, the time the plan took
// and the largest subscription metadata.
func simulate(t testing.TB, members []*scaleMember, tasks int32, replicas int) (map[string][]int32, map[string][]string, time.Duration, int) {
	subs := []*engine.SubTopology{{ID: 0, Topics: []string{"in"}}}
	var jg []kmsg.JoinGroupResponseMember
	maxMeta := 0
	for _, m := range members {
		mb := &taskBalancer{subs: subs, global: map[int]bool{}}
		mb.withStandbys(replicas, "instance-"+m.id, func() ([]string, []string) {
			state := append([]string(nil), m.standbys...)
			for _, p := range m.owned {
				state = append(state, engine.TaskID{Partition: p}.String())
			}
			return m.standbys, state
		})
		meta := mb.JoinGroupMetadata([]string{"in"}, map[string][]int32{"in": m.owned}, 1)
		maxMeta = max(maxMeta, len(meta))
		jg = append(jg, kmsg.JoinGroupResponseMember{MemberID: m.id, ProtocolMetadata: meta})
	}
	leader := &taskBalancer{subs: subs, global: map[int]bool{}, replicas: replicas}
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
		m.owned, m.standbys = actives[m.id], standbys[m.id]
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
	for _, ps := range actives {
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
	a, s, took, meta := simulate(t, members, tasks, 1)
	settle(members, a, s)
	checkStandbys(t, "first", a, s, tasks)
	t.Logf("first plan: %v, largest subscription %d bytes", took.Round(time.Microsecond), meta)

	a, s, took, meta = simulate(t, members, tasks, 1)
	n, spread := moved(members, a)
	t.Logf("settled group again: %v, %d tasks moved, spread %d, largest subscription %d bytes", took.Round(time.Microsecond), n, spread, meta)
	if n != 0 || spread > 1 {
		t.Errorf("a settled group rebalancing moved %d tasks (spread %d), want 0 (spread ≤ 1)", n, spread)
	}
	settle(members, a, s)

	gone := members[17]
	survivors := append(slices.Clone(members[:17]), members[18:]...)
	a, s, took, _ = simulate(t, survivors, tasks, 1)
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
	a, s, took, _ = simulate(t, joined, tasks, 1)
	n, spread = moved(joined, a)
	t.Logf("two instances joined: %v, %d tasks moved to them, spread %d", took.Round(time.Microsecond), n, spread)
	if want := 2 * tasks / (instances + 1); n > want+2 || spread > 1 {
		t.Errorf("join: %d tasks moved (want about %d, the newcomers' share), spread %d", n, want, spread)
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
	a, s, _, _ := simulate(b, members, 3000, 1)
	settle(members, a, s)
	for b.Loop() {
		simulate(b, members, 3000, 1)
	}
}
