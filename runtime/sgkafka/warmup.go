package sgkafka

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Warm-up replicas and probing rebalances (Kafka Streams' KIP-441): a task
// moves only to an instance whose copy of its state is caught up. Every
// member reports, in its subscription, the changelog offset sum of each
// task it holds a copy of (its standbys' positions, and the offsets left
// by tasks closed in its state directory); the leader reads the
// changelogs' end offsets and counts a copy caught up when it is at most
// AcceptableRecoveryLag records behind. When balance wants a task on an
// instance that is not caught up, the task stays with its caught-up owner
// and the instance gets a warm-up replica, a standby that fills its copy
// from the changelog; ProbingRebalanceInterval later the leader rebalances
// again, and the caught-up warm-ups take their tasks over, restoring only
// the tail. A scale-out or a restarted instance with an old state
// directory so never stops a task for a whole restore.

// offsetsFile is the file in a task's state directory holding the
// changelog offset sum of its stores when the task last closed there, so
// a member can report its copy's position without opening the stores.
// It can only lag the stores, never lead them: they advance only after
// the task opens again, and the file is rewritten when it closes.
const offsetsFile = ".offsets"

// changelogEndsTimeout bounds the leader's end-offset lookup: without it
// the assignment goes ahead as if every copy were caught up.
const changelogEndsTimeout = 5 * time.Second

// warmups is the warm-up policy of the group leader's balancer.
type warmups struct {
	max      int
	lag      int64
	interval time.Duration
	// ends returns the changelog end offset sum of each stateful task of
	// tasks (task id string → sum); tasks without changelogs are absent.
	ends func(tasks []balTask) map[string]int64
}

// offsetSum is the sum of the non-negative offsets of cps.
func offsetSum(cps map[string]int64) int64 {
	var sum int64
	for _, off := range cps {
		if off > 0 {
			sum += off
		}
	}
	return sum
}

// saveOffsets records the task's checkpointed changelog offset sum in its
// state directory (offsetsFile). A failure only makes the copy look
// further behind to the assignor.
func (tk *task) saveOffsets() {
	if len(tk.changelogs) == 0 {
		return
	}
	cps, err := tk.checkpoints()
	if err != nil {
		return
	}
	dir := filepath.Join(tk.w.e.cfg.StateDir, tk.id.String())
	tmp := filepath.Join(dir, offsetsFile+".tmp")
	if os.WriteFile(tmp, []byte(strconv.FormatInt(offsetSum(cps), 10)), 0o644) == nil {
		os.Rename(tmp, filepath.Join(dir, offsetsFile))
	}
}

// readOffsets is the offset sum a closed task left in dir, if any.
func readOffsets(dir string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, offsetsFile))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n >= 0
}

// changelogEnds is warmups.ends for this worker's topology: one
// ListEndOffsets over the changelog topics of tasks' stores.
func (w *worker) changelogEnds(tasks []balTask) map[string]int64 {
	subs := w.e.tp.SubTopologies()
	byTopic := map[string][]string{} // changelog topic → its stores' tasks' sub ids
	var topics []string
	for _, s := range subs {
		for _, name := range s.Stores {
			if spec := w.e.tp.Store(name); spec != nil && spec.Logged {
				topic := changelogTopic(w.e.cfg.ApplicationID, name)
				if byTopic[topic] == nil {
					topics = append(topics, topic)
				}
				byTopic[topic] = append(byTopic[topic], strconv.Itoa(s.ID))
			}
		}
	}
	if len(topics) == 0 {
		return nil
	}
	// The client joins its group as it is created, so the first Balance
	// can run before the worker holds it: then every copy counts as
	// caught up.
	cl := w.client.Load()
	if cl == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), changelogEndsTimeout)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...)
	if err != nil {
		w.log.Warn("reading changelog end offsets for the assignment", "error", err.Error())
		return nil
	}
	want := map[string]bool{}
	for _, t := range tasks {
		want[t.id()] = true
	}
	out := map[string]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			return
		}
		for _, sub := range byTopic[o.Topic] {
			id := sub + "_" + strconv.Itoa(int(o.Partition))
			if want[id] {
				out[id] += o.Offset
			}
		}
	})
	return out
}

// caughtUp reports whether m's copy of t's state is within the
// acceptable lag of the changelog end (owners are by definition).
func (p *warmups) caughtUp(m *balMember, t balTask, ends map[string]int64, owner *balMember) bool {
	end, stateful := ends[t.id()]
	if !stateful || m == owner {
		return true
	}
	// No copy counts as offset 0, as in Kafka Streams: a task whose
	// changelog is shorter than the acceptable lag moves anywhere.
	return end-m.user.Offsets[t.id()] <= p.lag
}

// endsOf is the changelog end offset sum of each stateful task of tasks,
// nil when warm-ups are off or the ends cannot be read (every copy then
// counts as caught up, and tasks move as balance wants).
func (p *warmups) endsOf(tasks []balTask) map[string]int64 {
	if p == nil || p.max <= 0 || p.ends == nil {
		return nil
	}
	return p.ends(tasks)
}

// releaseLast orders tasks for the sticky pass so that an owner over its
// share keeps first the tasks no other member has a caught-up copy of:
// those it lets go are then the ones that move without a restore.
func (p *warmups) releaseLast(tasks []balTask, members []*balMember, ends map[string]int64, owner func(balTask) *balMember) []balTask {
	if len(ends) == 0 {
		return tasks
	}
	elsewhere := func(t balTask) bool {
		o := owner(t)
		for _, m := range members {
			if m != o && o != nil && p.caughtUp(m, t, ends, o) {
				return true
			}
		}
		return false
	}
	// A stable partition, each task looked at once.
	first := make([]balTask, 0, len(tasks))
	var last []balTask
	for _, t := range tasks {
		if elsewhere(t) {
			last = append(last, t)
		} else {
			first = append(first, t)
		}
	}
	return append(first, last...)
}

// apply keeps every task that balance moved to a member without a
// caught-up copy with a caught-up member instead (its owner first), and
// gives up to p.max of those members a warm-up replica of the task. It
// reports whether any task waits for a warm-up, so a probing rebalance is
// due.
func (p *warmups) apply(members []*balMember, ends map[string]int64, owner func(balTask) *balMember) (probe bool) {
	if len(ends) == 0 {
		return false
	}
	budget := p.max
	for _, m := range members {
		kept := m.tasks[:0:0]
		for _, t := range m.tasks {
			o := owner(t)
			if p.caughtUp(m, t, ends, o) {
				kept = append(kept, t)
				continue
			}
			best := p.mostCaughtUp(members, t, ends, o)
			if best == nil {
				// Nobody is caught up: restoring somewhere is unavoidable.
				kept = append(kept, t)
				continue
			}
			best.tasks = append(best.tasks, t)
			probe = true
			if budget > 0 {
				m.warmups = append(m.warmups, t)
				budget--
			}
		}
		m.tasks = kept
	}
	return probe
}

// caughtUpHolder is the least loaded member with room whose copy of t's
// state is caught up; nil when there is none or no ends are known.
func (p *warmups) caughtUpHolder(members []*balMember, t balTask, sp *spread, ends map[string]int64) *balMember {
	if _, stateful := ends[t.id()]; !stateful {
		return nil
	}
	var best *balMember
	for _, m := range members {
		if !sp.fits(m) || !m.hasState(t) || !p.caughtUp(m, t, ends, nil) {
			continue
		}
		if best == nil || sp.lighter(m, best) {
			best = m
		}
	}
	return best
}

// mostCaughtUp is t's owner when it is in the group, else the caught-up
// member with the highest offset sum; nil when no member is caught up.
func (p *warmups) mostCaughtUp(members []*balMember, t balTask, ends map[string]int64, owner *balMember) *balMember {
	if owner != nil {
		return owner
	}
	var best *balMember
	for _, m := range members {
		if !p.caughtUp(m, t, ends, nil) {
			continue
		}
		if best == nil || m.user.Offsets[t.id()] > best.user.Offsets[t.id()] {
			best = m
		}
	}
	return best
}

// heldOffsets are the offset sums this worker's copies report: its
// standbys' positions, and those closed tasks left in the state directory.
func (w *worker) heldOffsets(state []string) map[string]int64 {
	out := w.standby.offsetSums()
	for _, id := range state {
		if _, ok := out[id]; ok {
			continue
		}
		if n, ok := readOffsets(filepath.Join(w.e.cfg.StateDir, id)); ok {
			if out == nil {
				out = map[string]int64{}
			}
			out[id] = n
		}
	}
	return out
}

// offsetSums are the changelog offset sums of the open standbys.
func (s *standbySet) offsetSums() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string]int64
	for id, st := range s.tasks {
		var sum int64
		for _, topic := range st.tk.changelogs {
			sum += max(s.pos[checkpointKey(topic, id.Partition)], 0)
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[id.String()] = sum
	}
	return out
}
