package sgkafka

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// taskBalancer assigns tasks, not partitions: every topic-partition of one
// task (a sub-topology's co-partitioned source topics on one partition)
// goes to the same member, which a partition-level balancer such as
// cooperative-sticky does not guarantee (a join would see half its input).
// It is sticky — a member keeps the tasks it owns while the spread stays
// even — and cooperative: a task that moves is first revoked from its owner
// in one rebalance and assigned in the next (kgo's AdjustCooperative).
type taskBalancer struct {
	subs []*engine.SubTopology
	// global sub-topologies have no tasks in the group: every instance
	// reads their topics itself.
	global map[int]bool
	// member is what rides in every subscription (query.go's
	// memberUserData): the instance's query address, as Kafka Streams'
	// SubscriptionInfo carries application.server, and for standby
	// placement the instance and the tasks it holds state of.
	member memberUserData
	// replicas is the number of standby replicas of each task the group
	// leader places (Config.StandbyReplicas).
	replicas int
	// held reports the member's tasks with local state at join time (the
	// worker's standbys and the state directory's task directories).
	held func() (standby, state []string, offsets map[string]int64)
	// warm is the warm-up policy when this member leads (warmup.go), and
	// probeAt when the probing rebalance its last assignment asked for is
	// due (zero: none).
	warm    *warmups
	probeAt atomic.Int64
	// followUpAt is when the follow-up rebalance the last assignment asked
	// for is due (zero: none; a later assignment replaces it).
	followUpAt atomic.Int64
	// assigned is this member's standby tasks in the last assignment,
	// with a counter the worker compares to notice a new one.
	mu          sync.Mutex
	assigned    []engine.TaskID
	assignments atomic.Uint64
}

// advertising sets the query address the member advertises.
func (b *taskBalancer) advertising(queryAddr string) *taskBalancer {
	b.member.QueryAddr = queryAddr
	return b
}

// withStandbys makes the balancer place replicas standbys per task when
// this member leads, instance naming this member's process.
func (b *taskBalancer) withStandbys(replicas int, instance string, held func() (standby, state []string, offsets map[string]int64)) *taskBalancer {
	b.replicas, b.member.Instance, b.held = replicas, instance, held
	return b
}

// withWarmups makes the balancer keep tasks where their state is caught
// up and place warm-up replicas when this member leads (warmup.go).
func (b *taskBalancer) withWarmups(w *warmups) *taskBalancer {
	b.warm = w
	return b
}

// scheduleProbe records whether the assignment just computed waits for
// warm-ups, so that probeDue asks for the next rebalance in time.
func (b *taskBalancer) scheduleProbe(probe bool) {
	if !probe {
		b.probeAt.Store(0)
		return
	}
	b.probeAt.Store(time.Now().Add(b.warm.interval).UnixNano())
}

// followUpDelay is how long a member waits for the rebalance a withheld
// move's owner starts by rejoining before it starts one itself.
const followUpDelay = 3 * time.Second

// probeDue reports, once, that a probing or follow-up rebalance is due.
func (b *taskBalancer) probeDue() bool {
	return due(&b.probeAt) || due(&b.followUpAt)
}

// due reports, once, that the time in at has come.
func due(at *atomic.Int64) bool {
	t := at.Load()
	return t != 0 && time.Now().UnixNano() >= t && at.CompareAndSwap(t, 0)
}

// standbys are this member's standby tasks in the last assignment and
// that assignment's number.
func (b *taskBalancer) standbys() ([]engine.TaskID, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.assigned), b.assignments.Load()
}

func newTaskBalancer(tp engine.Topology) *taskBalancer {
	b := &taskBalancer{subs: tp.SubTopologies(), global: map[int]bool{}}
	for _, s := range b.subs {
		if tp.IsGlobal(s) {
			b.global[s.ID] = true
		}
	}
	return b
}

const taskBalancerProtocol = "streamgen-cooperative-task"

var _ kgo.GroupBalancer = (*taskBalancer)(nil)

func (b *taskBalancer) ProtocolName() string { return taskBalancerProtocol }
func (b *taskBalancer) IsCooperative() bool  { return true }

func (b *taskBalancer) JoinGroupMetadata(interests []string, current map[string][]int32, generation int32) []byte {
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version = 3
	meta.Topics = interests
	meta.Generation = generation
	u := b.member
	if b.held != nil {
		u.Standby, u.State, u.Offsets = b.held()
	}
	meta.UserData = u.encode()
	for topic, partitions := range current {
		op := kmsg.NewConsumerMemberMetadataOwnedPartition()
		op.Topic = topic
		op.Partitions = partitions
		meta.OwnedPartitions = append(meta.OwnedPartitions, op)
	}
	sort.Slice(meta.OwnedPartitions, func(i, j int) bool { return meta.OwnedPartitions[i].Topic < meta.OwnedPartitions[j].Topic })
	return meta.AppendTo(nil)
}

func (b *taskBalancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	tps, err := kgo.ParseConsumerSyncAssignment(assignment)
	if err != nil {
		return nil, err
	}
	var a kmsg.ConsumerMemberAssignment
	var ids []engine.TaskID
	followUp := false
	if a.ReadFrom(assignment) == nil {
		ids, followUp = decodeAssignmentUserData(a.UserData)
	}
	if followUp {
		b.followUpAt.Store(time.Now().Add(followUpDelay).UnixNano())
	} else {
		b.followUpAt.Store(0)
	}
	b.mu.Lock()
	b.assigned = ids
	b.assignments.Add(1)
	b.mu.Unlock()
	return tps, nil
}

func (b *taskBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	cb, err := kgo.NewConsumerBalancer(b, members)
	return cb, cb.MemberTopics(), err
}

// planSize is the number of partitions plan assigns.
func planSize(plan *kgo.BalancePlan) int {
	n := 0
	for _, tps := range plan.AsMemberIDMap() {
		for _, ps := range tps {
			n += len(ps)
		}
	}
	return n
}

type balTask struct {
	sub  int
	part int32
}

// spread is an even split of one class of tasks (stateful or stateless):
// every member base, extra of them one more (taken by the first members
// to reach base). Kafka Streams' HighAvailabilityTaskAssignor balances
// stateful tasks across clients first and stateless ones after; one
// spread over both would let one member hold all the state while another
// runs only stateless tasks, so its restarts restore everything.
type spread struct {
	base, extra int
	n           map[*balMember]int // the member's tasks of this class
}

func newSpread(tasks, members int) *spread {
	members = max(members, 1)
	return &spread{base: tasks / members, extra: tasks % members, n: map[*balMember]int{}}
}

// fits reports whether m may take one more task of the class.
func (s *spread) fits(m *balMember) bool {
	return s.n[m] < s.base || s.n[m] == s.base && s.extra > 0
}

func (s *spread) take(m *balMember, t balTask) {
	if s.n[m] >= s.base {
		s.extra--
	}
	s.n[m]++
	m.tasks = append(m.tasks, t)
}

// lighter reports whether a is less loaded than b: fewer tasks of the
// class, then fewer tasks in all.
func (s *spread) lighter(a, b *balMember) bool {
	if s.n[a] != s.n[b] {
		return s.n[a] < s.n[b]
	}
	return len(a.tasks) < len(b.tasks)
}

// Balance implements kgo.ConsumerBalancerBalance.
func (b *taskBalancer) Balance(cb *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	members := balMembers(cb)
	stateful, stateless := b.tasks(topics)
	owner := ownerOf(members, b.subs)
	ends := b.warm.endsOf(append(slices.Clone(stateful), stateless...))
	for _, class := range [][]balTask{stateful, stateless} {
		b.assignClass(class, members, ends, owner)
	}
	b.scheduleProbe(b.warm.apply(members, ends, owner))
	plan := cb.NewPlan()
	for _, m := range members {
		for _, t := range m.tasks {
			for _, topic := range b.subs[t.sub].Topics {
				if c, ok := topics[topic]; ok && t.part < c {
					plan.AddPartition(m.m, topic, t.part)
				}
			}
		}
	}
	before := planSize(plan)
	plan.AdjustCooperative(cb)
	followUp := planSize(plan) < before
	standbys := placeStandbys(members, b.replicas)
	if len(standbys) == 0 && !followUp {
		return plan
	}
	return &standbyPlan{plan: plan, standbys: standbys, followUp: followUp}
}

// balMembers are the group's members with what they own and carry.
func balMembers(cb *kgo.ConsumerBalancer) []*balMember {
	var members []*balMember
	cb.EachMember(func(m *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		mb := &balMember{m: m, owned: map[string]map[int32]bool{}, gen: meta.Generation, user: decodeUserData(meta.UserData)}
		for _, op := range meta.OwnedPartitions {
			ps := map[int32]bool{}
			for _, p := range op.Partitions {
				ps[p] = true
			}
			mb.owned[op.Topic] = ps
		}
		members = append(members, mb)
	})
	return members
}

// tasks are the group's tasks, one per partition of each non-global
// sub-topology, split into those with state stores and those without.
func (b *taskBalancer) tasks(topics map[string]int32) (stateful, stateless []balTask) {
	for _, s := range b.subs {
		if len(s.Topics) == 0 || b.global[s.ID] {
			continue
		}
		n := int32(0)
		for _, t := range s.Topics {
			if c, ok := topics[t]; ok && c > n {
				n = c
			}
		}
		for p := int32(0); p < n; p++ {
			if len(s.Stores) > 0 {
				stateful = append(stateful, balTask{sub: s.ID, part: p})
			} else {
				stateless = append(stateless, balTask{sub: s.ID, part: p})
			}
		}
	}
	return stateful, stateless
}

// ownerOf returns the member owning a task: the one owning its first
// topic's partition, the newest generation winning a disputed claim.
func ownerOf(members []*balMember, subs []*engine.SubTopology) func(balTask) *balMember {
	claims := map[string]map[int32]*balMember{}
	for _, m := range members {
		for topic, ps := range m.owned {
			if claims[topic] == nil {
				claims[topic] = map[int32]*balMember{}
			}
			for p := range ps {
				if best := claims[topic][p]; best == nil || m.gen > best.gen {
					claims[topic][p] = m
				}
			}
		}
	}
	return func(t balTask) *balMember { return claims[subs[t.sub].Topics[0]][t.part] }
}

// assignClass spreads one class of tasks evenly over the members, so a
// member that joins gets its share from the others. Sticky pass first: a
// task stays with its owner while the owner is within its share.
func (b *taskBalancer) assignClass(tasks []balTask, members []*balMember, ends map[string]int64, owner func(balTask) *balMember) {
	sp := newSpread(len(tasks), len(members))
	assigned := map[balTask]bool{}
	for _, t := range b.warm.releaseLast(tasks, members, ends, owner) {
		if m := owner(t); m != nil && sp.fits(m) {
			sp.take(m, t)
			assigned[t] = true
		}
	}
	for _, t := range tasks {
		if assigned[t] {
			continue
		}
		// A task without an owner goes to the least loaded member with a
		// caught-up copy of its state, else where a copy is (a standby,
		// or local state left from before), else to the least loaded
		// member.
		m := b.warm.caughtUpHolder(members, t, sp, ends)
		if m == nil {
			m = stateHolder(members, t, sp)
		}
		if m == nil {
			m = leastLoaded(members, sp)
		}
		if m == nil {
			return
		}
		sp.take(m, t)
	}
}
