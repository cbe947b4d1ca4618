package sgkafka

import (
	"sort"

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
	// userData rides in every subscription: the instance's query address
	// (query.go), as Kafka Streams' SubscriptionInfo carries
	// application.server.
	userData []byte
}

// advertising sets the query address the member advertises.
func (b *taskBalancer) advertising(queryAddr string) *taskBalancer {
	b.userData = encodeUserData(queryAddr)
	return b
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
	meta.UserData = b.userData
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
	return kgo.ParseConsumerSyncAssignment(assignment)
}

func (b *taskBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	cb, err := kgo.NewConsumerBalancer(b, members)
	return cb, cb.MemberTopics(), err
}

type balTask struct {
	sub  int
	part int32
}

// Balance implements kgo.ConsumerBalancerBalance.
func (b *taskBalancer) Balance(cb *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	type member struct {
		m     *kmsg.JoinGroupResponseMember
		owned map[string]map[int32]bool
		gen   int32
		tasks []balTask
	}
	var members []*member
	cb.EachMember(func(m *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		mb := &member{m: m, owned: map[string]map[int32]bool{}, gen: meta.Generation}
		for _, op := range meta.OwnedPartitions {
			ps := map[int32]bool{}
			for _, p := range op.Partitions {
				ps[p] = true
			}
			mb.owned[op.Topic] = ps
		}
		members = append(members, mb)
	})
	var tasks []balTask
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
			tasks = append(tasks, balTask{sub: s.ID, part: p})
		}
	}
	// Spread evenly: at most ceil(tasks/members) each.
	quota := (len(tasks) + len(members) - 1) / max(len(members), 1)
	assigned := map[balTask]bool{}
	// Sticky pass: a task stays with the member owning its first topic's
	// partition (the newest generation wins a disputed claim).
	owner := func(t balTask) *member {
		topic := b.subs[t.sub].Topics[0]
		var best *member
		for _, m := range members {
			if m.owned[topic][t.part] && (best == nil || m.gen > best.gen) {
				best = m
			}
		}
		return best
	}
	for _, t := range tasks {
		if m := owner(t); m != nil && len(m.tasks) < quota {
			m.tasks = append(m.tasks, t)
			assigned[t] = true
		}
	}
	for _, t := range tasks {
		if assigned[t] {
			continue
		}
		var least *member
		for _, m := range members {
			if least == nil || len(m.tasks) < len(least.tasks) {
				least = m
			}
		}
		if least == nil {
			break
		}
		least.tasks = append(least.tasks, t)
	}
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
	plan.AdjustCooperative(cb)
	return plan
}
