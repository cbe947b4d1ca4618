package sgkafka

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// balMember is a group member as the assignor sees it.
type balMember struct {
	m     *kmsg.JoinGroupResponseMember
	owned map[string]map[int32]bool
	gen   int32
	user  memberUserData
	tasks []balTask
	// standbys are the standby tasks placed on the member, warmups those
	// of them that are warm-up replicas (warmup.go).
	standbys []balTask
	warmups  []balTask
	// held is user.Standby and user.State as a set (hasState).
	held map[string]bool
}

func (t balTask) id() string { return engine.TaskID{Sub: t.sub, Partition: t.part}.String() }

// hasState reports whether the member holds a copy of t's state: as a
// standby now, or left in its instance's state directory.
func (m *balMember) hasState(t balTask) bool {
	if m.held == nil {
		m.held = map[string]bool{}
		for _, id := range m.user.Standby {
			m.held[id] = true
		}
		for _, id := range m.user.State {
			m.held[id] = true
		}
	}
	return m.held[t.id()]
}

// instance is the member's process, its member id for members that do
// not say (they hold no standbys).
func (m *balMember) instance() string {
	if m.user.Instance != "" {
		return m.user.Instance
	}
	return m.m.MemberID
}

// stateHolder is a member with room holding a copy of t's state, a
// standby before a leftover state directory.
func stateHolder(members []*balMember, t balTask, sp *spread) *balMember {
	var left *balMember
	for _, m := range members {
		if !sp.fits(m) {
			continue
		}
		if slices.Contains(m.user.Standby, t.id()) {
			return m
		}
		if left == nil && slices.Contains(m.user.State, t.id()) {
			left = m
		}
	}
	return left
}

// leastLoaded is the member with the fewest tasks of sp's class (then the
// fewest in all).
func leastLoaded(members []*balMember, sp *spread) *balMember {
	var least *balMember
	for _, m := range members {
		if least == nil || sp.lighter(m, least) {
			least = m
		}
	}
	return least
}

// placeStandbys gives each active task up to replicas standbys (besides
// its warm-up replicas, which the members already have), each on an
// instance that runs neither the task nor another of its standbys
// (Kafka Streams' rule): first on a rack none of them is on, when members
// declare racks; then a member that holds a copy of the task's state;
// then the member with the fewest standbys. It returns member id → the
// standby task ids.
func placeStandbys(members []*balMember, replicas int) map[string][]string {
	warming := map[balTask][]*balMember{}
	for _, m := range members {
		m.standbys = append(m.standbys, m.warmups...)
		for _, t := range m.warmups {
			warming[t] = append(warming[t], m)
		}
	}
	for _, owner := range members {
		for _, t := range owner.tasks {
			used := map[string]bool{owner.instance(): true}
			racks := map[string]bool{owner.user.Rack: true}
			for _, m := range warming[t] {
				used[m.instance()] = true
			}
			for range replicas {
				m := pickStandby(members, t, used, racks)
				if m == nil {
					break
				}
				m.standbys = append(m.standbys, t)
				used[m.instance()], racks[m.user.Rack] = true, true
			}
		}
	}
	out := map[string][]string{}
	for _, m := range members {
		for _, t := range m.standbys {
			out[m.m.MemberID] = append(out[m.m.MemberID], t.id())
		}
	}
	return out
}

func pickStandby(members []*balMember, t balTask, used, racks map[string]bool) *balMember {
	var best *balMember
	newRack := func(m *balMember) bool { return m.user.Rack != "" && !racks[m.user.Rack] }
	for _, m := range members {
		if used[m.instance()] {
			continue
		}
		switch {
		case best == nil:
			best = m
		case newRack(m) != newRack(best):
			if newRack(m) {
				best = m
			}
		case m.hasState(t) != best.hasState(t):
			if m.hasState(t) {
				best = m
			}
		case len(m.standbys) < len(best.standbys):
			best = m
		}
	}
	return best
}

// standbyPlan is the active plan with each member's standby tasks in the
// user data of its assignment, and followUp when the plan withholds
// partitions that move (kgo's AdjustCooperative gives them to their new
// owner only in the next rebalance).
type standbyPlan struct {
	plan     *kgo.BalancePlan
	standbys map[string][]string
	followUp bool
}

// assignmentUserData is the user data of a member's assignment.
type assignmentUserData struct {
	Standby []string `json:"standby,omitempty"`
	// FollowUp asks every member for another rebalance soon: partitions
	// were withheld from this one while their owner revokes them. The
	// owner's own rejoin usually brings it; if the owner dies first (and
	// comes back as a static member, which gets its stored assignment
	// without a rebalance), nobody else would, and the withheld tasks
	// would run nowhere. Kafka Streams schedules the same follow-up.
	FollowUp bool `json:"follow_up,omitempty"`
}

func (p *standbyPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment {
	out := p.plan.IntoSyncAssignment()
	for i := range out {
		ids := p.standbys[out[i].MemberID]
		if len(ids) == 0 && !p.followUp {
			continue
		}
		var a kmsg.ConsumerMemberAssignment
		if a.ReadFrom(out[i].MemberAssignment) != nil {
			continue
		}
		a.UserData, _ = json.Marshal(assignmentUserData{Standby: ids, FollowUp: p.followUp})
		out[i].MemberAssignment = a.AppendTo(nil)
	}
	return out
}

// decodeAssignmentUserData reads the standby tasks of an assignment and
// whether it asks for a follow-up rebalance; user data it cannot read
// means none and no.
func decodeAssignmentUserData(b []byte) (ids []engine.TaskID, followUp bool) {
	var u assignmentUserData
	if len(b) == 0 || json.Unmarshal(b, &u) != nil {
		return nil, false
	}
	for _, s := range u.Standby {
		if id, ok := parseTaskID(s); ok {
			ids = append(ids, id)
		}
	}
	return ids, u.FollowUp
}

// parseTaskID reads a task id as TaskID.String writes it ("1_3").
func parseTaskID(s string) (engine.TaskID, bool) {
	a, b, ok := strings.Cut(s, "_")
	sub, err1 := strconv.Atoi(a)
	p, err2 := strconv.ParseInt(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || sub < 0 || p < 0 {
		return engine.TaskID{}, false
	}
	return engine.TaskID{Sub: sub, Partition: int32(p)}, true
}
