package sgkafka

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// standbyState is how many standby tasks e holds and how many changelog
// records they applied.
func standbyState(e *Engine) (tasks int, applied int64) {
	for _, w := range e.workers {
		tasks += len(w.standby.ids())
		applied += w.standby.applied.Load()
	}
	return tasks, applied
}

// Two instances with one standby replica each: every task has a copy of
// its state on the other instance, kept up to date from the changelog, so
// when one instance stops the other takes over its tasks restoring only
// the tail its standbys had not read. Without standbys the same move
// restores the moved tasks' whole changelog (shown for contrast, which
// also proves the check can fail).
func TestStandbyTakeoverRestoresOnlyTheTail(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		const parts, n = 4, 2000
		// run starts two instances, gives them input once their tasks
		// settled (so the state of a's tasks is only in a's stores, the
		// changelog and b's standbys), stops a and returns what b
		// restored taking over.
		run := func(appID, in, out string, replicas int) (restored int64) {
			tp := countTopology(t, ev, appID, in, out, parts)
			cfg := func() Config {
				return Config{Brokers: ev.brokers, ApplicationID: appID, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2,
					CommitInterval: 50 * time.Millisecond, StandbyReplicas: replicas}
			}
			a := startEngine(t, tp, cfg())
			b := startEngine(t, tp, cfg())
			waitFor(t, 90*time.Second, "both running with two tasks each", func() bool {
				return a.e.State() == Running && b.e.State() == Running && countTasks(a.e) == 2 && countTasks(b.e) == 2
			})
			recs := inputRecords(in, n, n) // one key per record: state grows with the input
			produce(t, ev.brokers, parts, recs)
			waitFor(t, 90*time.Second, "all records processed", func() bool { return a.e.Processed()+b.e.Processed() >= n })
			if replicas > 0 {
				// Each instance's standbys hold the other's two tasks,
				// caught up once they stop applying.
				var last int64 = -1
				waitFor(t, 60*time.Second, "standbys caught up", func() bool {
					ta, na := standbyState(a.e)
					tb, nb := standbyState(b.e)
					settled := ta == 2 && tb == 2 && na+nb == last && na+nb >= n
					last = na + nb
					time.Sleep(500 * time.Millisecond)
					return settled
				})
			}
			before := b.e.TotalRestored()
			if err := a.stop(t); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 60*time.Second, "b took over", func() bool { return countTasks(b.e) == parts && b.e.State() == Running })
			if err := b.stop(t); err != nil {
				t.Fatal(err)
			}
			expectDriverOutput(t, testEnv{brokers: ev.brokers, appID: appID, in: in, out: out}, tp, parts, recs, decodeCount, "output of "+appID)
			return b.e.TotalRestored() - before
		}
		withStandby := run(ev.appID, ev.in, ev.out, 1)
		if limit := int64(n / 100); withStandby > limit {
			t.Errorf("with a standby, the takeover restored %d changelog records, want at most %d (1%% of the state)", withStandby, limit)
		}
		without := run(ev.appID+"-nostandby", ev.in+"-contrast", ev.out+"-contrast", 0)
		if without < n/4 {
			t.Errorf("without standbys, the takeover restored %d records, want about half of %d: the contrast does not show", without, n)
		}
		t.Logf("records restored by the takeover: %d with a standby, %d without", withStandby, without)
	})
}

// Standbys go to other instances than their task's and each other's,
// prefer a member holding a copy of the task's state, and spread evenly.
func TestPlaceStandbys(t *testing.T) {
	mk := func(id, inst string, tasks ...balTask) *balMember {
		return &balMember{m: &kmsg.JoinGroupResponseMember{MemberID: id}, user: memberUserData{Instance: inst}, tasks: tasks}
	}
	t0, t1, t2, t3 := balTask{0, 0}, balTask{0, 1}, balTask{0, 2}, balTask{0, 3}
	members := func() []*balMember {
		return []*balMember{mk("x1", "X", t0), mk("x2", "X", t1), mk("y", "Y", t2, t3)}
	}
	got := placeStandbys(members(), 1)
	want := map[string][]string{"y": {"0_0", "0_1"}, "x1": {"0_2"}, "x2": {"0_3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("one replica: %v, want %v", got, want)
	}
	// Two instances cannot hold two standbys besides the active.
	if got := placeStandbys(members(), 2); !reflect.DeepEqual(got, want) {
		t.Errorf("two replicas on two instances: %v, want %v", got, want)
	}
	// A member with the task's state wins over a less loaded one.
	ms := members()
	ms[1].user.Standby = []string{"0_2", "0_3"}
	got = placeStandbys(ms, 1)
	if want := []string{"0_2", "0_3"}; !reflect.DeepEqual(got["x2"], want) {
		t.Errorf("sticky standbys: x2 got %v, want %v (all: %v)", got["x2"], want, got)
	}
	// Racks: a standby goes to another rack than its task's even when a
	// member on the same rack has fewer standbys.
	rs := []*balMember{mk("a", "A", t0), mk("b", "B"), mk("c", "C")}
	rs[0].user.Rack, rs[1].user.Rack, rs[2].user.Rack = "r1", "r1", "r2"
	rs[2].standbys = []balTask{t1, t2} // busier, but on another rack
	if got := placeStandbys(rs, 1); !reflect.DeepEqual(got["c"], []string{"0_1", "0_2", "0_0"}) {
		t.Errorf("rack-aware: %v, want t0's standby on c (rack r2)", got)
	}
	// The assignment's user data round-trips the standby list.
	ids, _ := decodeAssignmentUserData([]byte(`{"standby":["0_2","1_3","bad"]}`))
	if want := []engine.TaskID{{Sub: 0, Partition: 2}, {Sub: 1, Partition: 3}}; !reflect.DeepEqual(ids, want) {
		t.Errorf("decodeAssignmentUserData = %v, want %v", ids, want)
	}
}

// With ?stale=true an instance answers a key of the other instance's
// tasks from its standby copy, saying so and how far behind it is;
// without it the query is forwarded to the active task, as before.
func TestInteractiveQueriesFromStandby(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		const partitions, keys = 4, 16
		createTopic(t, ev.brokers, ev.in, partitions)
		createTopic(t, ev.brokers, ev.out, partitions)
		tp, err := sgstream.NewTopology(ev.appID, iqBuild(ev.in, ev.out))
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Brokers: ev.brokers, ApplicationID: ev.appID, CommitInterval: 100 * time.Millisecond, StandbyReplicas: 1}
		a := startIQ(t, tp, cfg, nil)
		b := startIQ(t, tp, cfg, nil)
		waitFor(t, 60*time.Second, "both running with two tasks and two standbys each", func() bool {
			na, _ := standbyState(a.e)
			nb, _ := standbyState(b.e)
			return a.e.State() == Running && b.e.State() == Running && a.e.ownedTasks() == 2 && b.e.ownedTasks() == 2 && na == 2 && nb == 2
		})
		var recs []sgstream.RawRecord
		for i := range keys {
			kb, _ := serdes.Int64.Append(nil, int64(i*1000))
			recs = append(recs, sgstream.RawRecord{Topic: ev.in, Key: kb, Value: []byte("v"), Timestamp: tsBase + int64(i)})
		}
		produce(t, ev.brokers, partitions, recs)
		stale := 0
		waitFor(t, 60*time.Second, "every key answered by a, stale where b runs it", func() bool {
			stale = 0
			for i := range keys {
				path := "/stores/counts/" + itoa(i*1000)
				s := iqGet(t, a.base+path+"?stale=true")
				if s.status != 200 || s.body["value"] != float64(1) {
					return false
				}
				if s.body["stale"] == true {
					stale++
					if lag, ok := s.body["lag"].(float64); !ok || lag < 0 {
						t.Fatalf("stale answer without a lag: %s", s.raw)
					}
					if s.owner != "" {
						t.Fatalf("a stale answer was forwarded: %s", s.raw)
					}
					if f := iqGet(t, a.base+path); f.owner == "" || f.body["stale"] != nil {
						t.Fatalf("without ?stale the key of b's task was not forwarded: owner %q, %s", f.owner, f.raw)
					}
				}
			}
			return stale > 0
		})
		t.Logf("%d of %d keys answered from a's standbys (the others a runs)", stale, keys)
	})
}

// TestWithheldMoveAsksForFollowUp: when a task moves, kgo's cooperative
// adjustment withholds it from its new owner until the old one revoked it;
// every member's assignment then asks for a follow-up rebalance (the old
// owner may die before its own rejoin brings one), and the next
// assignment, which withholds nothing, cancels it.
func TestWithheldMoveAsksForFollowUp(t *testing.T) {
	subs := []*engine.SubTopology{{ID: 0, Topics: []string{"in"}}}
	join := func(owned map[string][]int32) []kmsg.JoinGroupResponseMember {
		var jg []kmsg.JoinGroupResponseMember
		for _, id := range []string{"a", "b"} {
			mb := &taskBalancer{subs: subs, global: map[int]bool{}}
			jg = append(jg, kmsg.JoinGroupResponseMember{MemberID: id,
				ProtocolMetadata: mb.JoinGroupMetadata([]string{"in"}, map[string][]int32{"in": owned[id]}, 1)})
		}
		return jg
	}
	balance := func(owned map[string][]int32) []kmsg.SyncGroupRequestGroupAssignment {
		leader := &taskBalancer{subs: subs, global: map[int]bool{}}
		cb, err := kgo.NewConsumerBalancer(leader, join(owned))
		if err != nil {
			t.Fatal(err)
		}
		return leader.Balance(cb, map[string]int32{"in": 4}).IntoSyncAssignment()
	}
	member := &taskBalancer{subs: subs, global: map[int]bool{}}
	// a owns all four tasks, b joins: two move, withheld this round.
	for _, a := range balance(map[string][]int32{"a": {0, 1, 2, 3}}) {
		if _, err := member.ParseSyncAssignment(a.MemberAssignment); err != nil {
			t.Fatal(err)
		}
		if member.followUpAt.Load() == 0 {
			t.Errorf("member %s: the assignment withholding a move asks for no follow-up", a.MemberID)
		}
	}
	// After the revocation: a owns two, b none; the plan withholds nothing.
	for _, a := range balance(map[string][]int32{"a": {0, 1}}) {
		if _, err := member.ParseSyncAssignment(a.MemberAssignment); err != nil {
			t.Fatal(err)
		}
		if member.followUpAt.Load() != 0 {
			t.Errorf("member %s: an assignment that withholds nothing still asks for a follow-up", a.MemberID)
		}
	}
}
