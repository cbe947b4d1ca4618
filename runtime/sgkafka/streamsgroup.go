package sgkafka

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is the membership half of the streams rebalance protocol
// (KIP-1071, Kafka 4.2+): a member describes the topology to the group
// coordinator in its joining heartbeat, the broker computes the assignment
// (active, standby and warm-up tasks) and hands each member its part in
// heartbeat responses. streamsworker.go runs a worker on it
// (--group-protocol streams).

// streamsTopology describes the engine's topology as the join heartbeat
// carries it: one subtopology per sub-topology with source topics, with
// the topics it reads split into user topics and repartition topics (with
// their partition counts and configs, which the broker creates them with),
// the repartition topics it writes, its stores' changelogs (partition count
// 0: the broker derives it) and one copartition group of everything it
// reads, since a task reads the same partition of each. Sorted by name as
// Kafka Streams sorts it. Needs setup's partition counts and plan.
func (e *Engine) streamsTopology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	planned := map[string]internalTopic{}
	for _, it := range e.internal {
		planned[it.name] = it
	}
	writes := map[int][]string{}
	for _, n := range e.tp.Nodes() {
		for _, t := range n.Writes {
			if _, ok := planned[t]; ok && !slices.Contains(writes[n.Sub], t) {
				writes[n.Sub] = append(writes[n.Sub], t)
			}
		}
	}
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	for _, s := range e.sourceSubs {
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID = strconv.Itoa(s.ID)
		for _, t := range s.Topics {
			if it, ok := planned[t]; ok {
				st.RepartitionSourceTopics = append(st.RepartitionSourceTopics, topicInfo(it, int32(it.partitions)))
			} else {
				st.SourceTopics = append(st.SourceTopics, t)
			}
		}
		for _, store := range s.Stores {
			if it, ok := planned[changelogTopic(e.cfg.ApplicationID, store)]; ok {
				st.StateChangelogTopics = append(st.StateChangelogTopics, topicInfo(it, 0))
			}
		}
		st.RepartitionSinkTopics = writes[s.ID]
		sort.Strings(st.SourceTopics)
		sort.Strings(st.RepartitionSinkTopics)
		byName := func(a, b kmsg.TopicInfo) int { return strings.Compare(a.Topic, b.Topic) }
		slices.SortFunc(st.RepartitionSourceTopics, byName)
		slices.SortFunc(st.StateChangelogTopics, byName)
		if len(s.Topics) > 1 {
			g := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup()
			for i := range st.SourceTopics {
				g.SourceTopics = append(g.SourceTopics, int16(i))
			}
			for i := range st.RepartitionSourceTopics {
				g.RepartitionSourceTopics = append(g.RepartitionSourceTopics, int16(i))
			}
			st.CopartitionGroups = append(st.CopartitionGroups, g)
		}
		topo.Subtopologies = append(topo.Subtopologies, st)
	}
	return &topo
}

// topicInfo is an internal topic as the broker creates it: partitions 0
// leaves the count to the broker (it must for changelogs); the replication
// factor is the engine's (0: the broker's default).
func topicInfo(it internalTopic, partitions int32) kmsg.TopicInfo {
	ti := kmsg.NewTopicInfo()
	ti.Topic = it.name
	ti.NumPartitions = partitions
	ti.ReplicationFactor = 0
	keys := make([]string, 0, len(it.configs))
	for k := range it.configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := kmsg.NewTopicInfoConfig()
		c.Key, c.Value = k, it.configs[k]
		ti.Configs = append(ti.Configs, c)
	}
	return ti
}

// streamsAssignment is a member's part of a streams group's assignment.
type streamsAssignment struct {
	Active, Standby, Warmup []engine.TaskID
}

// streamsMember is one member of a streams group: its identity, epoch, the
// assignment the broker wants it to run (target) and the one it runs
// (owned), advanced by heartbeat. The member reports owned, not target: a
// task the broker takes away stays the member's until the worker has
// committed and closed it and acknowledged with acknowledge, and only then
// may the broker hand it to another member.
type streamsMember struct {
	cl       *kgo.Client
	group    string
	memberID string // made here, kept for the member's lifetime
	process  string // the instance: several members (workers) may share it
	instance string // static membership, "" for none
	topology *kmsg.StreamsGroupHeartbeatRequestTopology

	coordinator int32 // the group coordinator's node id, -1 until found
	epoch       int32
	interval    time.Duration // the broker's heartbeat interval
	target      streamsAssignment
	owned       streamsAssignment
	reported    bool // owned was sent since it last changed
	assigned    bool // a response carried an assignment since joining
	// offsets, when set, gives the changelog offset sums of the tasks whose
	// state the instance holds and of the tasks it runs (their end), sent on
	// joining and every offsetsEvery for the broker's lag-aware assignor.
	offsets      func() (held, end map[engine.TaskID]int64)
	offsetsSent  time.Time
	offsetsEvery time.Duration
}

// acknowledge makes a the assignment the member runs; the next heartbeat
// reports it.
func (m *streamsMember) acknowledge(a streamsAssignment) {
	m.owned, m.reported = a, false
}

// newStreamsMember is a member that has not joined yet. memberID is the
// member's id, "" for a random one.
func newStreamsMember(cl *kgo.Client, group, memberID, process, instance string, topo *kmsg.StreamsGroupHeartbeatRequestTopology) (*streamsMember, error) {
	if memberID == "" {
		var id [16]byte
		if _, err := rand.Read(id[:]); err != nil {
			return nil, fmt.Errorf("streamgen: member id: %w", err)
		}
		memberID = base64.RawURLEncoding.EncodeToString(id[:])
	}
	return &streamsMember{cl: cl, group: group, memberID: memberID,
		process: process, instance: instance, topology: topo, interval: 5 * time.Second, coordinator: -1}, nil
}

// send sends a heartbeat to the group coordinator. kgo routes the consumer
// and share group heartbeats itself but not this one (it answers "client
// is too old"), so the member finds the coordinator and talks to that
// broker; a moved or loading coordinator is looked up again next time.
func (m *streamsMember) send(ctx context.Context, req *kmsg.StreamsGroupHeartbeatRequest) (*kmsg.StreamsGroupHeartbeatResponse, error) {
	if m.coordinator < 0 {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKeys = 0, []string{m.group}
		resp, err := fc.RequestWith(ctx, m.cl)
		if err != nil {
			return nil, fmt.Errorf("finding the group coordinator: %w", err)
		}
		if len(resp.Coordinators) != 1 {
			return nil, fmt.Errorf("finding the group coordinator: %d answers", len(resp.Coordinators))
		}
		c := resp.Coordinators[0]
		if err := kerr.ErrorForCode(c.ErrorCode); err != nil {
			return nil, fmt.Errorf("finding the group coordinator: %w", err)
		}
		m.coordinator = c.NodeID
	}
	kresp, err := m.cl.Broker(int(m.coordinator)).Request(ctx, req)
	if err != nil {
		m.coordinator = -1
		return nil, err
	}
	resp := kresp.(*kmsg.StreamsGroupHeartbeatResponse)
	switch kerr.ErrorForCode(resp.ErrorCode) {
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable:
		m.coordinator = -1
	}
	return resp, nil
}

// streamsStatusError is a group status that stops the assignment (a
// missing source topic, topics not copartitioned).
type streamsStatusError struct {
	code   int8
	detail string
}

func (e *streamsStatusError) Error() string {
	return fmt.Sprintf("streams group status %d: %s", e.code, e.detail)
}

// heartbeat sends one heartbeat and applies its answer. On joining (epoch
// 0) it carries the topology and the member's identity; afterwards it
// reports the owned tasks once after they changed (the acknowledgement the
// broker waits for before it moves a task elsewhere). It returns whether
// the assignment changed. A fenced or unknown member loses its tasks and
// joins again at the next heartbeat, as the Java client does.
func (m *streamsMember) heartbeat(ctx context.Context) (bool, error) {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = m.group, m.memberID, m.epoch
	req.EndpointInformationEpoch = -1
	if m.epoch == 0 {
		req.Topology = m.topology
		req.RebalanceTimeoutMillis = int32((5 * time.Minute).Milliseconds())
		req.ProcessID = &m.process
		if m.instance != "" {
			req.InstanceID = &m.instance
		}
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	} else if !m.reported {
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = taskIDs(m.owned.Active), taskIDs(m.owned.Standby), taskIDs(m.owned.Warmup)
	}
	m.addOffsets(req)
	resp, err := m.send(ctx, req)
	if err != nil {
		return false, fmt.Errorf("streams group heartbeat: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if kerr.IsRetriable(err) {
			return false, nil // the next heartbeat retries (a new coordinator, a loading group)
		}
		if err == kerr.FencedMemberEpoch || err == kerr.UnknownMemberID {
			m.epoch, m.owned, m.target, m.reported, m.assigned = 0, streamsAssignment{}, streamsAssignment{}, false, false
			m.offsetsSent = time.Time{}
			return true, nil
		}
		msg := ""
		if resp.ErrorMessage != nil {
			msg = ": " + *resp.ErrorMessage
		}
		return false, fmt.Errorf("streams group heartbeat: %w%s", err, msg)
	}
	m.epoch = resp.MemberEpoch
	if resp.HeartbeatIntervalMillis > 0 {
		m.interval = time.Duration(resp.HeartbeatIntervalMillis) * time.Millisecond
	}
	if req.ActiveTasks != nil && m.epoch != 0 {
		m.reported = true
	}
	changed := false
	if resp.ActiveTasks != nil || resp.StandbyTasks != nil || resp.WarmupTasks != nil {
		next := streamsAssignment{Active: fromTaskIDs(resp.ActiveTasks), Standby: fromTaskIDs(resp.StandbyTasks), Warmup: fromTaskIDs(resp.WarmupTasks)}
		changed = !sameAssignment(next, m.target) || !m.assigned
		m.target, m.assigned = next, true
	}
	for _, s := range resp.Status {
		// 5 (assignment delayed) and 3 (internal topics being created by
		// the broker) pass; the others stop the application as in Java.
		if s.StatusCode == 1 || s.StatusCode == 2 || s.StatusCode == 4 {
			return changed, &streamsStatusError{code: s.StatusCode, detail: s.StatusDetail}
		}
	}
	return changed, nil
}

// leave sends the leaving heartbeat: epoch -1, or -2 for a static member,
// which will rejoin under the same instance id and keep its tasks.
func (m *streamsMember) leave(ctx context.Context) error {
	if m.epoch == 0 {
		return nil
	}
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = m.group, m.memberID, -1
	if m.instance != "" {
		req.MemberEpoch = -2
		req.InstanceID = &m.instance
	}
	resp, err := m.send(ctx, req)
	if err != nil {
		return fmt.Errorf("streams group leave: %w", err)
	}
	m.epoch, m.owned, m.target, m.assigned = 0, streamsAssignment{}, streamsAssignment{}, false
	return kerr.ErrorForCode(resp.ErrorCode)
}

// addOffsets puts the task offset sums into req on joining and every
// offsetsEvery after: the broker's assignor moves a task to the member
// whose copy is caught up and promotes a warm-up task once its lag is
// within the group's acceptable recovery lag.
func (m *streamsMember) addOffsets(req *kmsg.StreamsGroupHeartbeatRequest) {
	if m.offsets == nil || (req.MemberEpoch != 0 && time.Since(m.offsetsSent) < m.offsetsEvery) {
		return
	}
	held, end := m.offsets()
	req.TaskOffsets, req.TaskEndOffsets = taskOffsets(held), taskOffsets(end)
	m.offsetsSent = time.Now()
}

func taskOffsets(sums map[engine.TaskID]int64) []kmsg.TaskOffset {
	ids := slices.SortedFunc(maps.Keys(sums), compareTaskIDs)
	out := make([]kmsg.TaskOffset, 0, len(ids))
	for _, id := range ids {
		o := kmsg.NewTaskOffset()
		o.SubtopologyID, o.Partition, o.Offset = strconv.Itoa(id.Sub), id.Partition, sums[id]
		out = append(out, o)
	}
	return out
}

func taskIDs(ids []engine.TaskID) []kmsg.TaskIDs {
	bySub := map[int][]int32{}
	for _, id := range ids {
		bySub[id.Sub] = append(bySub[id.Sub], id.Partition)
	}
	out := []kmsg.TaskIDs{}
	for sub, ps := range bySub {
		slices.Sort(ps)
		t := kmsg.NewTaskIDs()
		t.SubtopologyID, t.Partitions = strconv.Itoa(sub), ps
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b kmsg.TaskIDs) int { return strings.Compare(a.SubtopologyID, b.SubtopologyID) })
	return out
}

func fromTaskIDs(ts []kmsg.TaskIDs) []engine.TaskID {
	var out []engine.TaskID
	for _, t := range ts {
		sub, err := strconv.Atoi(t.SubtopologyID)
		if err != nil {
			continue // not a subtopology of ours: the topology check refuses it at join
		}
		for _, p := range t.Partitions {
			out = append(out, engine.TaskID{Sub: sub, Partition: p})
		}
	}
	slices.SortFunc(out, func(a, b engine.TaskID) int {
		if a.Sub != b.Sub {
			return a.Sub - b.Sub
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

func sameAssignment(a, b streamsAssignment) bool {
	return slices.Equal(a.Active, b.Active) && slices.Equal(a.Standby, b.Standby) && slices.Equal(a.Warmup, b.Warmup)
}
