package sgkafka

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// balanceRound runs one rebalance of members (id → topic → owned
// partitions) over subs as the group leader would and returns what each
// member is assigned, after the cooperative adjustment.
func balanceRound(t *testing.T, subs []*engine.SubTopology, topics map[string]int32, owned map[string]map[string][]int32) map[string]map[string][]int32 {
	t.Helper()
	var interests []string
	for topic := range topics {
		interests = append(interests, topic)
	}
	slices.Sort(interests)
	var jg []kmsg.JoinGroupResponseMember
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range owned {
			if !yield(id) {
				return
			}
		}
	}) {
		mb := newTestBalancer(subs)
		meta := mb.JoinGroupMetadata(interests, owned[id], 1)
		jg = append(jg, kmsg.JoinGroupResponseMember{MemberID: id, ProtocolMetadata: meta})
	}
	leader := newTestBalancer(subs)
	cb, err := kgo.NewConsumerBalancer(leader, jg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string][]int32{}
	for _, a := range leader.Balance(cb, topics).IntoSyncAssignment() {
		var ma kmsg.ConsumerMemberAssignment
		if err := ma.ReadFrom(a.MemberAssignment); err != nil {
			t.Fatal(err)
		}
		got[a.MemberID] = map[string][]int32{}
		for _, tp := range ma.Topics {
			got[a.MemberID][tp.Topic] = slices.Sorted(slices.Values(tp.Partitions))
		}
	}
	return got
}

func newTestBalancer(subs []*engine.SubTopology) *taskBalancer {
	return &taskBalancer{subs: subs, global: map[int]bool{}}
}

// Stateful tasks are spread over the members before stateless ones, as
// Kafka Streams' HighAvailabilityTaskAssignor does: a group where one
// member owns every count task and the other every stateless task (an
// even split by count, which the sticky pass used to keep) moves half of
// each, so no member holds all the state.
func TestBalanceSpreadsStatefulTasksFirst(t *testing.T) {
	subs := []*engine.SubTopology{
		{ID: 0, Topics: []string{"counts-repartition"}, Stores: []string{"counts"}},
		{ID: 1, Topics: []string{"orders"}},
	}
	topics := map[string]int32{"counts-repartition": 4, "orders": 4}
	owned := map[string]map[string][]int32{
		"a": {"counts-repartition": {0, 1, 2, 3}},
		"b": {"orders": {0, 1, 2, 3}},
	}
	// The first round revokes what moves; the second assigns it.
	for round := 0; round < 2; round++ {
		owned = balanceRound(t, subs, topics, owned)
	}
	for id, tps := range owned {
		if n, m := len(tps["counts-repartition"]), len(tps["orders"]); n != 2 || m != 2 {
			t.Errorf("member %s: %d stateful and %d stateless tasks, want 2 and 2 (assignment %v)", id, n, m, owned)
		}
	}
	// A settled group stays as it is.
	again := balanceRound(t, subs, topics, owned)
	for id := range owned {
		for topic, ps := range owned[id] {
			if !slices.Equal(again[id][topic], ps) {
				t.Errorf("settled group: member %s %s moved from %v to %v", id, topic, ps, again[id][topic])
			}
		}
	}
}

// Uneven counts: with three members and four tasks of each class, every
// member gets one or two of each, and no member more than three in all.
func TestBalanceUnevenClasses(t *testing.T) {
	subs := []*engine.SubTopology{
		{ID: 0, Topics: []string{"s"}, Stores: []string{"st"}},
		{ID: 1, Topics: []string{"l"}},
	}
	topics := map[string]int32{"s": 4, "l": 4}
	got := balanceRound(t, subs, topics, map[string]map[string][]int32{"a": nil, "b": nil, "c": nil})
	for id, tps := range got {
		n, m := len(tps["s"]), len(tps["l"])
		if n < 1 || n > 2 || m < 1 || m > 2 || n+m > 3 {
			t.Errorf("member %s: %d stateful, %d stateless tasks (assignment %v)", id, n, m, got)
		}
	}
}
