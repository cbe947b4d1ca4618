package sgkafka

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streamgen/streamgen/internal/topodesc"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kadm"
)

// The status of an instance, for its live page (page.go) and for anyone
// who reads GET /status: the topology as the runtime built it, the
// figures of the metrics endpoint read at one moment (metricsSnapshot),
// the tasks with their states, the group's members and assignment as the
// coordinator describes it, and the last rebalances and dead letters.
// Counters are totals, as the metrics endpoint shows them; rates are the
// reader's to compute from two statuses (the page does), so every figure
// on the page is one the metrics endpoint shows at the same moment.

// Status is what GET /status answers.
type Status struct {
	ApplicationID string `json:"application_id"`
	Instance      string `json:"instance"`
	State         string `json:"state"`
	// At is when the figures were read, in Unix milliseconds.
	At       int64          `json:"at"`
	Totals   StatusTotals   `json:"totals"`
	Topology StatusTopology `json:"topology"`
	// Nodes are the nodes' forwarded records summed over this instance's
	// tasks (streamgen_node_forwarded_records_total).
	Nodes       []StatusNode      `json:"nodes"`
	Tasks       []StatusTask      `json:"tasks"`
	Stores      []StatusStore     `json:"stores"`
	Group       StatusGroup       `json:"group"`
	Rebalances  []StatusRebalance `json:"rebalances"`
	DeadLetters StatusDeadLetters `json:"dead_letters"`
	Queryable   []string          `json:"queryable,omitempty"`
}

// StatusTotals are the instance's counters.
type StatusTotals struct {
	Processed    int64 `json:"processed"`
	Commits      int64 `json:"commits"`
	Aborts       int64 `json:"aborts"`
	Rebalances   int64 `json:"rebalances"`
	DeadLettered int64 `json:"dead_lettered"`
	TasksRunning int   `json:"tasks_running"`
}

// StatusTopology is the topology's description (what `describe` prints).
type StatusTopology struct {
	Subs []StatusSub `json:"subs"`
}

// StatusSub is one sub-topology; its id is the first part of its task ids.
type StatusSub struct {
	ID     int              `json:"id"`
	Global bool             `json:"global,omitempty"`
	Nodes  []StatusTopoNode `json:"nodes"`
}

// StatusTopoNode is one source, processor or sink.
type StatusTopoNode struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Topics   []string `json:"topics,omitempty"`
	Stores   []string `json:"stores,omitempty"`
	Children []string `json:"children,omitempty"`
}

// StatusNode is a node's forwarded records on this instance.
type StatusNode struct {
	Name      string `json:"name"`
	Forwarded int64  `json:"forwarded"`
}

// Task states on the page.
const (
	TaskRunning   = "running"
	TaskRestoring = "restoring"
	TaskStandby   = "standby"
	// TaskSuspended is a task that ran here and was revoked: Kafka Streams
	// suspends a revoked task before closing it; here it is closed, its
	// state left in the state directory and its counters kept.
	TaskSuspended = "suspended"
)

// StatusTask is one task of this instance.
type StatusTask struct {
	ID           string            `json:"id"`
	State        string            `json:"state"`
	Partitions   []StatusPartition `json:"partitions,omitempty"`
	Processed    int64             `json:"processed"`
	DeadLettered int64             `json:"dead_lettered"`
	Dropped      map[string]int64  `json:"dropped,omitempty"`
	Restores     []StatusRestore   `json:"restores,omitempty"`
	// StandbyLag is, for a standby, the changelog offsets its stores
	// trail by, summed (streamgen_standby_lag_records).
	StandbyLag *int64 `json:"standby_lag,omitempty"`
}

// StatusPartition is an input partition of a running task.
type StatusPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"`
	End       int64  `json:"end"`
	Lag       int64  `json:"lag"`
}

// StatusRestore is the latest restoration of one of a task's stores.
type StatusRestore struct {
	Store     string `json:"store"`
	Restored  int64  `json:"restored"`
	Remaining int64  `json:"remaining"`
	// Done is the fraction of the changelog range restored (0 to 1),
	// PerSecond the rate since it began and ETASeconds the time left at
	// that rate (-1: unknown).
	Done       float64 `json:"done"`
	PerSecond  float64 `json:"per_second"`
	ETASeconds float64 `json:"eta_seconds"`
}

// StatusStore is a persistent store of a running task and its size.
type StatusStore struct {
	Task  string `json:"task"`
	Store string `json:"store"`
	Bytes int64  `json:"bytes"`
}

// StatusGroup is the consumer group as its coordinator describes it.
type StatusGroup struct {
	State   string         `json:"state"`
	Error   string         `json:"error,omitempty"`
	Members []StatusMember `json:"members"`
}

// StatusMember is one group member (a worker of an instance) and the tasks
// the assignment gives it.
type StatusMember struct {
	MemberID  string   `json:"member_id"`
	ClientID  string   `json:"client_id"`
	Instance  string   `json:"instance"`
	QueryAddr string   `json:"query_addr,omitempty"`
	Self      bool     `json:"self"`
	Active    []string `json:"active"`
	Standby   []string `json:"standby,omitempty"`
}

// StatusRebalance is a rebalance a worker applied.
type StatusRebalance struct {
	At         int64    `json:"at"`
	Worker     int      `json:"worker"`
	Generation int32    `json:"generation"`
	Gained     []string `json:"gained,omitempty"`
	Lost       []string `json:"lost,omitempty"`
	// Millis is from the group's first callback to the gained tasks
	// running (their restoration included).
	Millis int64 `json:"millis"`
}

// StatusDeadLetters are the records written to the dead-letter topic.
type StatusDeadLetters struct {
	ByReason map[string]int64   `json:"by_reason"`
	Recent   []StatusDeadLetter `json:"recent"`
}

// StatusDeadLetter is one dead letter: the error's exception name (its
// reason), message and where the record came from.
type StatusDeadLetter struct {
	At        int64  `json:"at"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Topic     string `json:"topic"`
	Partition string `json:"partition"`
	Offset    string `json:"offset"`
}

// historyLen is how many rebalances and dead letters the status keeps.
const historyLen = 20

// history keeps the recent rebalances and dead letters.
type history struct {
	mu         sync.Mutex
	rebalances []StatusRebalance
	byReason   map[string]int64
	dead       []StatusDeadLetter
}

func keepLast[T any](s []T, v T) []T {
	s = append(s, v)
	if len(s) > historyLen {
		s = slices.Delete(s, 0, len(s)-historyLen)
	}
	return s
}

func (h *history) rebalance(worker int, gen int32, gained, lost []engine.TaskID, from time.Time) {
	now := time.Now()
	if from.IsZero() {
		from = now
	}
	r := StatusRebalance{At: now.UnixMilli(), Worker: worker, Generation: gen, Gained: taskIDStrings(gained),
		Lost: taskIDStrings(lost), Millis: now.Sub(from).Milliseconds()}
	h.mu.Lock()
	h.rebalances = keepLast(h.rebalances, r)
	h.mu.Unlock()
}

// deadLetter notes a record sent to the dead-letter topic, from the error
// headers the task put on it.
func (h *history) deadLetter(headers []sgstream.Header) {
	d := StatusDeadLetter{At: time.Now().UnixMilli()}
	for _, hd := range headers {
		switch hd.Key {
		case sgstream.HeaderErrorsException:
			d.Reason = string(hd.Value)
		case sgstream.HeaderErrorsMessage:
			d.Message = string(hd.Value)
		case sgstream.HeaderErrorsTopic:
			d.Topic = string(hd.Value)
		case sgstream.HeaderErrorsPartition:
			d.Partition = string(hd.Value)
		case sgstream.HeaderErrorsOffset:
			d.Offset = string(hd.Value)
		}
	}
	h.mu.Lock()
	if h.byReason == nil {
		h.byReason = map[string]int64{}
	}
	h.byReason[d.Reason]++
	h.dead = keepLast(h.dead, d)
	h.mu.Unlock()
}

func (h *history) read() ([]StatusRebalance, StatusDeadLetters) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := StatusDeadLetters{ByReason: map[string]int64{}, Recent: slices.Clone(h.dead)}
	for k, v := range h.byReason {
		d.ByReason[k] = v
	}
	if d.Recent == nil {
		d.Recent = []StatusDeadLetter{}
	}
	rb := slices.Clone(h.rebalances)
	if rb == nil {
		rb = []StatusRebalance{}
	}
	return rb, d
}

// Status reads the instance's status now (see Status). The group's part
// costs one request to its coordinator; the rest is what a metrics scrape
// reads.
func (e *Engine) Status(ctx context.Context) Status {
	snap := e.met.snapshot()
	st := Status{ApplicationID: e.cfg.ApplicationID, Instance: e.instanceID, State: snap.state.String(), At: snap.at.UnixMilli(),
		Totals:   StatusTotals{Commits: snap.commits, Aborts: snap.aborts, Rebalances: snap.rebalances, TasksRunning: snap.open},
		Topology: describeTopology(e.tp.Describe()), Nodes: []StatusNode{}, Stores: []StatusStore{}}
	st.Rebalances, st.DeadLetters = e.met.history.read()
	st.Tasks = e.statusTasks(snap)
	byNode := map[string]int64{}
	var names []string
	for _, t := range snap.tasks {
		st.Totals.Processed += t.processed
		st.Totals.DeadLettered += t.deadLettered
		for i, n := range t.nodes {
			if _, ok := byNode[n]; !ok {
				names = append(names, n)
			}
			byNode[n] += t.forwarded[i]
		}
	}
	slices.Sort(names)
	for _, n := range names {
		st.Nodes = append(st.Nodes, StatusNode{Name: n, Forwarded: byNode[n]})
	}
	for _, d := range snap.disk {
		st.Stores = append(st.Stores, StatusStore{Task: d.task.String(), Store: d.store, Bytes: d.bytes})
	}
	st.Group = e.statusGroup(ctx)
	return st
}

func describeTopology(g *topodesc.Graph) StatusTopology {
	var t StatusTopology
	for i, sub := range g.Subs {
		s := StatusSub{ID: i, Global: g.IsGlobal(i)}
		for _, n := range sub {
			s.Nodes = append(s.Nodes, StatusTopoNode{Name: n.Name, Kind: n.Kind, Topics: n.Topics, Stores: n.Stores, Children: n.Children})
		}
		t.Subs = append(t.Subs, s)
	}
	return t
}

// statusTasks lists the tasks: the running and suspended ones the
// counters know, the ones restoring now and the standbys.
func (e *Engine) statusTasks(snap metricsSnapshot) []StatusTask {
	byID := map[engine.TaskID]*StatusTask{}
	get := func(id engine.TaskID) *StatusTask {
		t := byID[id]
		if t == nil {
			t = &StatusTask{ID: id.String(), State: TaskSuspended}
			byID[id] = t
		}
		return t
	}
	for _, ts := range snap.tasks {
		t := get(ts.id)
		t.Processed, t.DeadLettered = ts.processed, ts.deadLettered
		t.Dropped = map[string]int64{"late": ts.late, "skipped": ts.skipped, "other": ts.dropped - ts.late}
		if ts.open {
			t.State = TaskRunning
		}
	}
	now := snap.at
	for _, r := range snap.restores {
		t := get(r.task)
		sr := StatusRestore{Store: r.store, Restored: r.restored, Remaining: r.remaining, ETASeconds: -1, Done: 1}
		if total := r.to - r.from; total > 0 {
			sr.Done = float64(r.pos-r.from) / float64(total)
		}
		if el := now.Sub(r.started).Seconds(); el > 0 {
			sr.PerSecond = float64(r.restored-r.startN) / el
		}
		if sr.PerSecond > 0 {
			sr.ETASeconds = float64(r.remaining) / sr.PerSecond
		}
		t.Restores = append(t.Restores, sr)
		if r.remaining > 0 && t.State != TaskRunning {
			t.State = TaskRestoring
		}
	}
	for _, sb := range snap.standbys {
		t := get(sb.id)
		var lag int64
		for _, s := range sb.stores {
			lag += s.lag
		}
		if t.State != TaskRunning && t.State != TaskRestoring {
			t.State, t.StandbyLag = TaskStandby, &lag
		}
	}
	for _, p := range snap.lag {
		sub := e.tp.SubTopologyOf(p.topic)
		if sub == nil {
			continue
		}
		t := get(engine.TaskID{Sub: sub.ID, Partition: p.partition})
		t.Partitions = append(t.Partitions, StatusPartition{Topic: p.topic, Partition: p.partition, Committed: p.committed, End: p.end, Lag: p.lag})
	}
	ids := make([]engine.TaskID, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareTaskIDs)
	out := make([]StatusTask, 0, len(ids))
	for _, id := range ids {
		out = append(out, *byID[id])
	}
	return out
}

// statusGroup describes the group: every member with its instance, query
// address and the tasks of its assignment (active from its partitions,
// standbys from what it reports holding).
func (e *Engine) statusGroup(ctx context.Context) StatusGroup {
	g, err := e.describeGroup(ctx)
	if err != nil {
		return StatusGroup{Error: err.Error(), Members: []StatusMember{}}
	}
	local := e.localMembers()
	out := StatusGroup{State: g.State, Members: []StatusMember{}}
	for _, m := range g.Members {
		sm := StatusMember{MemberID: m.MemberID, ClientID: m.ClientID, Self: slices.Contains(local, m.MemberID), Active: []string{}}
		if meta, ok := m.Join.AsConsumer(); ok {
			u := decodeUserData(meta.UserData)
			sm.Instance, sm.QueryAddr, sm.Standby = u.Instance, u.QueryAddr, u.Standby
		}
		if a, ok := m.Assigned.AsConsumer(); ok {
			seen := map[engine.TaskID]bool{}
			var ids []engine.TaskID
			for _, t := range a.Topics {
				sub := e.tp.SubTopologyOf(t.Topic)
				if sub == nil {
					continue
				}
				for _, p := range t.Partitions {
					if id := (engine.TaskID{Sub: sub.ID, Partition: p}); !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
			slices.SortFunc(ids, compareTaskIDs)
			sm.Active = taskIDStrings(ids)
		}
		out.Members = append(out.Members, sm)
	}
	slices.SortFunc(out.Members, func(a, b StatusMember) int {
		return cmp.Or(strings.Compare(a.Instance, b.Instance), strings.Compare(a.ClientID, b.ClientID))
	})
	return out
}

// describeGroup asks the group coordinator for the group's members and
// assignment.
func (e *Engine) describeGroup(ctx context.Context) (kadm.DescribedGroup, error) {
	if !e.setUp() {
		return kadm.DescribedGroup{}, fmt.Errorf("the application is %s", e.State())
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	groups, err := kadm.NewClient(e.base).DescribeGroups(ctx, e.cfg.ApplicationID)
	if err != nil {
		return kadm.DescribedGroup{}, fmt.Errorf("describing group %q: %v", e.cfg.ApplicationID, err)
	}
	g, err := groups.On(e.cfg.ApplicationID, nil)
	if err == nil {
		err = g.Err
	}
	if err != nil {
		return kadm.DescribedGroup{}, fmt.Errorf("describing group %q: %v", e.cfg.ApplicationID, err)
	}
	return g, nil
}
