// Package evolve compares two versions of a spec and reports the changes
// that would break an application already running with the old one: state
// that would be orphaned (renamed or removed stores and internal topics),
// bytes that would be read with the wrong type (changed key types, record
// changes the msgpack serdes cannot read old data with), and partition
// counts that no longer match. It is `streamgen check --against`.
//
// What is safe follows from the wire format (see package serdes): records
// are msgpack maps keyed by field id; a reader skips ids it does not know
// and gives missing fields their default; integers decode into any integer
// type whose range holds them, floats and integers into floats, str and bin
// into string and bytes, timestamps and durations are integer
// milliseconds, enums their int32 number, and a nil field is a missing one.
// Keys are compared strictly: a key's bytes pick its partition and its slot
// in a store, so a key type must not change at all.
package evolve

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamgen/streamgen/spec"
)

// Severity says whether a change breaks the running application.
type Severity int

const (
	// Warning is a change that works but changes what someone sees: old
	// records read with zero values, consumers on the old schema.
	Warning Severity = iota
	// Breaking is a change that loses state, fails to read old data, or
	// stops the new version from starting.
	Breaking
)

func (s Severity) String() string {
	if s == Breaking {
		return "breaking"
	}
	return "warning"
}

// Change is one reported change.
type Change struct {
	// Pos is where the change is in the new spec, or, for something
	// removed, where it was in the old one.
	Pos      spec.Pos
	Severity Severity
	Message  string
	// Remedy says how to make the change safely.
	Remedy string
	// where lists the places (topics, stores) a record change matters
	// for; it is appended to Message when the report is rendered.
	where []string
}

// Report is the result of a comparison.
type Report struct {
	Changes []*Change // sorted: breaking first, then by position
}

// Breaking reports whether any change is breaking.
func (r *Report) Breaking() bool {
	for _, c := range r.Changes {
		if c.Severity == Breaking {
			return true
		}
	}
	return false
}

// String renders the report: one `file:line:col: severity: message` line
// per change, its remedy indented below, and a summary line.
func (r *Report) String() string {
	var b strings.Builder
	nb, nw := 0, 0
	for _, c := range r.Changes {
		msg := c.Message
		if len(c.where) > 0 {
			msg += " (" + strings.Join(c.where, "; ") + ")"
		}
		fmt.Fprintf(&b, "%s: %s: %s\n", c.Pos, c.Severity, msg)
		if c.Remedy != "" {
			fmt.Fprintf(&b, "\tremedy: %s\n", c.Remedy)
		}
		if c.Severity == Breaking {
			nb++
		} else {
			nw++
		}
	}
	switch {
	case nb == 0 && nw == 0:
		b.WriteString("no breaking changes\n")
	case nb == 0:
		fmt.Fprintf(&b, "no breaking changes, %s\n", plural(nw, "warning"))
	case nw == 0:
		fmt.Fprintf(&b, "%s\n", plural(nb, "breaking change"))
	default:
		fmt.Fprintf(&b, "%s, %s\n", plural(nb, "breaking change"), plural(nw, "warning"))
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Compare reports what changes from old to new.
func Compare(old, new *spec.Program) *Report {
	c := &comparer{old: old, new: new, seen: map[string]*Change{}}
	c.app()
	c.topics()
	c.stores()
	c.internalTopics()
	slices.SortStableFunc(c.out, func(a, b *Change) int {
		if a.Severity != b.Severity {
			return cmp.Compare(b.Severity, a.Severity)
		}
		if a.Pos.File != b.Pos.File {
			// The new spec's positions first, then the old one's.
			if a.Pos.File == new.File {
				return -1
			}
			if b.Pos.File == new.File {
				return 1
			}
			return cmp.Compare(a.Pos.File, b.Pos.File)
		}
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col), cmp.Compare(a.Message, b.Message))
	})
	for _, ch := range c.out {
		slices.Sort(ch.where)
		ch.where = slices.Compact(ch.where)
	}
	return &Report{Changes: c.out}
}

type comparer struct {
	old, new *spec.Program
	out      []*Change
	// seen merges record findings reached from several topics or stores
	// into one change listing every place.
	seen map[string]*Change
}

func (c *comparer) add(pos spec.Pos, sev Severity, remedy, format string, args ...any) *Change {
	ch := &Change{Pos: pos, Severity: sev, Message: fmt.Sprintf(format, args...), Remedy: remedy}
	key := fmt.Sprintf("%s\x00%d\x00%s", pos, sev, ch.Message)
	if prev, ok := c.seen[key]; ok {
		return prev
	}
	c.seen[key] = ch
	c.out = append(c.out, ch)
	return ch
}

func (c *comparer) app() {
	if c.old.App.ID != c.new.App.ID {
		c.add(c.new.App.Pos, Breaking,
			"keep the id; to start over on purpose, deploy under the new id and let it read its inputs from the beginning (docs/operations.md, resetting an application)",
			"app: application id changes from %q to %q: the new id is a new consumer group with no committed offsets, and every internal topic and state directory is renamed, so all state starts empty", c.old.App.ID, c.new.App.ID)
	}
}

// readTopics are the topics the topology reads (sources), by name.
func readTopics(p *spec.Program) map[string]bool {
	m := map[string]bool{}
	for _, n := range p.Nodes {
		if n.Op == spec.OpSource && n.Topic != nil {
			m[n.Topic.Name] = true
		}
	}
	return m
}

// stateful reports whether the topology keeps state or repartitions:
// then the partition of a key matters across restarts.
func stateful(p *spec.Program) bool { return len(p.Stores) > 0 || len(p.InternalTopics) > 0 }

func (c *comparer) topics() {
	oldRead, newRead := readTopics(c.old), readTopics(c.new)
	olds := map[string]*spec.Topic{}
	for _, t := range c.old.Topics {
		olds[t.Name] = t
	}
	for _, nt := range c.new.Topics {
		ot := olds[nt.Name]
		if ot == nil {
			continue // a new topic: nothing old to read
		}
		where := fmt.Sprintf("topic %q", nt.Name)
		switch {
		case oldRead[nt.Name] && newRead[nt.Name]:
			// The new version reads records the old one has already seen
			// and records written before the upgrade.
			c.keyType(nt.Pos, where, ot.Key, nt.Key,
				"old records in the topic no longer decode, and records with equal keys no longer meet in one partition and store slot",
				"keep the key type; to change it, write a new topic with the new key and read that")
			c.valueType(nt.Pos, where, ot.Value, nt.Value, false)
			if ot.Partitions != 0 && nt.Partitions != 0 && ot.Partitions != nt.Partitions && stateful(c.new) {
				c.add(nt.Pos, Breaking,
					"keep the partition count; to change it, plan a reset (docs/operations.md): stop every instance, repartition, delete the internal topics and state",
					"topic %q: partition count changes from %d to %d: keys move to other partitions, away from their state, and the internal topics no longer match (the engine refuses to start)", nt.Name, ot.Partitions, nt.Partitions)
			}
		case newRead[nt.Name]:
			// A topic the old version only wrote (or only declared) is now
			// read: what is in it was written with the old types.
			c.keyType(nt.Pos, where, ot.Key, nt.Key,
				"records already in the topic no longer decode",
				"keep the key type, or read a new topic")
			c.valueType(nt.Pos, where, ot.Value, nt.Value, false)
		default:
			// Written only: consumers still on the old schema read what the
			// new version writes.
			if !sameKey(ot.Key, nt.Key, map[[2]*spec.Record]bool{}) {
				c.add(nt.Pos, Warning, "keep the key type, or write a new topic and move consumers to it",
					"%s: %s: consumers that read it with the old key type cannot decode new records", where, keyChange(ot.Key, nt.Key))
			}
			c.valueType(nt.Pos, where, ot.Value, nt.Value, true)
		}
	}
}

// storeChangelog names the changelog of a store of program p for messages.
func storeChangelog(p *spec.Program, s *spec.Store) string {
	if !s.Logged {
		return "not logged"
	}
	for _, t := range p.Topics {
		if t.Store == s && t.Kind == spec.TopicGlobalTable {
			return "restored from topic " + t.Name
		}
	}
	return "changelog " + p.App.ID + "-" + s.Name + "-changelog"
}

// nodeStores lists the stores a node uses, in a fixed order.
func nodeStores(n *spec.Node) []*spec.Store {
	var out []*spec.Store
	if n.Store != nil {
		out = append(out, n.Store)
	}
	out = append(out, n.Stores...)
	if j := n.Join; j != nil {
		for _, s := range []*spec.Store{j.ThisStore, j.OtherStore, j.OuterStore, j.SubscriptionStore} {
			if s != nil {
				out = append(out, s)
			}
		}
	}
	if n.Topic != nil && n.Topic.Store != nil && n.Store == nil {
		out = append(out, n.Topic.Store)
	}
	return out
}

// renamedStore finds the store of new that took the place of the removed
// store s of old: a store used, at the same place, by a node of the same
// name.
func (c *comparer) renamedStore(s *spec.Store) *spec.Store {
	if r := c.renamedStoreByNode(s); r != nil {
		return r
	}
	// Otherwise a lone pair: the only store that disappeared and the only
	// one that appeared, of the same kind and, for stores a join or
	// suppress names after its step, with the same suffix.
	suffix := derivedSuffix(s.Name)
	var gone, added []*spec.Store
	for _, o := range c.old.Stores {
		if findStore(c.new, o.Name) == nil && o.Kind == s.Kind && derivedSuffix(o.Name) == suffix {
			gone = append(gone, o)
		}
	}
	for _, n := range c.new.Stores {
		if findStore(c.old, n.Name) == nil && n.Kind == s.Kind && derivedSuffix(n.Name) == suffix {
			added = append(added, n)
		}
	}
	if len(gone) == 1 && len(added) == 1 {
		return added[0]
	}
	return nil
}

// derivedSuffix is the suffix of derivedSuffixes name ends with, or "".
func derivedSuffix(name string) string {
	for _, suf := range derivedSuffixes {
		if strings.HasSuffix(name, suf) && len(name) > len(suf) {
			return suf
		}
	}
	return ""
}

func (c *comparer) renamedStoreByNode(s *spec.Store) *spec.Store {
	newNodes := map[string]*spec.Node{}
	for _, n := range c.new.Nodes {
		newNodes[n.Name] = n
	}
	for _, n := range c.old.Nodes {
		for i, os := range nodeStores(n) {
			if os != s {
				continue
			}
			nn := newNodes[n.Name]
			if nn == nil || nn.Op != n.Op {
				continue
			}
			if ns := nodeStores(nn); i < len(ns) && ns[i].Name != s.Name && findStore(c.old, ns[i].Name) == nil {
				return ns[i]
			}
		}
	}
	return nil
}

func findStore(p *spec.Program, name string) *spec.Store {
	for _, s := range p.Stores {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (c *comparer) stores() {
	for _, os := range c.old.Stores {
		ns := findStore(c.new, os.Name)
		if ns == nil && globalStore(c.old, os) {
			continue // rebuilt from its topic on every start
		}
		if ns == nil {
			if r := c.renamedStore(os); r != nil {
				c.add(r.Pos, Breaking,
					fmt.Sprintf("keep the name %s; if new state is what you want, accept that it starts empty and delete the old changelog topic once the new version runs", keepName(os.Name, r.Name, derivedStore(c.old, os))),
					"store %q is renamed to %q: the new store starts empty and the old state (%s) is orphaned", os.Name, r.Name, storeChangelog(c.old, os))
				c.storeTypes(os, r)
				continue
			}
			c.add(os.Pos, Breaking,
				"keep the step that owns it, or accept losing its state and delete "+c.old.App.ID+"-"+os.Name+"-changelog after the upgrade",
				"store %q is removed: its state (%s) is orphaned", os.Name, storeChangelog(c.old, os))
			continue
		}
		c.storeTypes(os, ns)
	}
}

// storeTypes compares two versions of one store.
func (c *comparer) storeTypes(os, ns *spec.Store) {
	where := fmt.Sprintf("store %q", ns.Name)
	if os.Kind != ns.Kind {
		c.add(ns.Pos, Breaking, "use a new store name (its state starts empty) or reset the application",
			"store %q: kind changes from %s to %s: the stored state has another layout", ns.Name, os.Kind, ns.Kind)
		return
	}
	c.keyType(ns.Pos, where, os.Key, ns.Key,
		"old entries and their changelog no longer decode, or are never found again",
		"keep the key type; to change it, use a new store name (its state starts empty) or reset the application")
	c.valueType(ns.Pos, where, os.Value, ns.Value, false)
	if ow, nw := c.windowOf(c.old, os), c.windowOf(c.new, ns); ow != nil && nw != nil && os.WindowSize == ns.WindowSize && windowText(ow) != windowText(nw) {
		c.add(ns.Pos, Breaking, "use a new store name (its state starts empty) or reset the application",
			"store %q: window changes from %s to %s: stored windows mean something else", ns.Name, windowText(ow), windowText(nw))
	}
	if os.WindowSize != ns.WindowSize {
		c.add(ns.Pos, Breaking, "use a new store name (its state starts empty) or reset the application",
			"store %q: window size changes from %s to %s: stored windows mean something else, and the store refuses to open its old files", ns.Name, dur(os.WindowSize), dur(ns.WindowSize))
	} else if os.Retention != ns.Retention && os.Kind != spec.StoreKeyValue {
		c.add(ns.Pos, Breaking, fmt.Sprintf("before starting the new version, delete the %q directories under every instance's state directory (the task restores from the changelog), or keep the retention", ns.Name),
			"store %q: retention changes from %s to %s: the store's segment layout may change, and it then refuses to open its old files", ns.Name, dur(os.Retention), dur(ns.Retention))
	}
	if os.Logged && !ns.Logged {
		c.add(ns.Pos, Warning, "keep `logged: true` unless the state can be lost",
			"store %q: no longer logged: its state is lost with the disk of the instance that holds it", ns.Name)
	}
}

func findInternal(p *spec.Program, name string, kind spec.InternalTopicKind) *spec.InternalTopic {
	for _, t := range p.InternalTopics {
		if t.Name == name && t.Kind == kind {
			return t
		}
	}
	return nil
}

// internalTopicName is the full topic name the runtime uses.
func internalTopicName(p *spec.Program, t *spec.InternalTopic) string {
	if t.Kind == spec.InternalRepartition {
		return p.App.ID + "-" + t.Name + "-repartition"
	}
	return p.App.ID + "-" + t.Name + "-topic"
}

// internalTypes are the key and value types of the records of an internal
// topic: what its writer forwards into it.
func internalTypes(t *spec.InternalTopic) (key, value *spec.Type) {
	n := t.Node
	if n == nil {
		return nil, nil
	}
	if j := n.Join; j != nil && len(n.Inputs) == 2 {
		switch {
		case j.ThisRepartition != nil && j.ThisRepartition.Name == t.Name:
			return n.Inputs[0].Key, n.Inputs[0].Value
		case j.OtherRepartition != nil && j.OtherRepartition.Name == t.Name:
			return n.Inputs[1].Key, n.Inputs[1].Value
		case t.Kind != spec.InternalRepartition:
			// Subscription topics: keyed by the right table's key, carrying
			// the left key.
			return n.Inputs[1].Key, n.Inputs[0].Key
		}
	}
	return n.Key, n.Value
}

func (c *comparer) internalTopics() {
	for _, ot := range c.old.InternalTopics {
		nt := findInternal(c.new, ot.Name, ot.Kind)
		if nt == nil {
			if r := c.renamedInternal(ot); r != nil {
				c.add(r.Pos, Breaking,
					fmt.Sprintf("keep the name %s; otherwise stop the old version only once it has drained the topic (no consumer lag on it), then delete %s", keepName(ot.Name, r.Name, derivedTopic(ot)), internalTopicName(c.old, ot)),
					"internal topic %s is renamed to %s: records still in the old topic are never read", internalTopicName(c.old, ot), internalTopicName(c.new, r))
				c.internalPair(ot, r)
				continue
			}
			c.add(ot.Pos, Breaking,
				fmt.Sprintf("stop the old version only once it has drained the topic (no consumer lag on it), then delete %s; or keep the step", internalTopicName(c.old, ot)),
				"internal topic %s is removed: records still in it are never read", internalTopicName(c.old, ot))
			continue
		}
		c.internalPair(ot, nt)
	}
}

// renamedInternal finds the internal topic of new that took the place of
// the removed ot of old: one written by a node of the same name, or else
// the only one of its kind that appeared while only ot disappeared (a
// step's name names both the node and its topic, so renaming the step
// renames both).
func (c *comparer) renamedInternal(ot *spec.InternalTopic) *spec.InternalTopic {
	if ot.Node == nil {
		return nil
	}
	for _, nt := range c.new.InternalTopics {
		if nt.Node != nil && nt.Node.Name == ot.Node.Name && nt.Kind == ot.Kind && findInternal(c.old, nt.Name, nt.Kind) == nil {
			return nt
		}
	}
	suffix := derivedSuffix(ot.Name)
	var gone, added []*spec.InternalTopic
	for _, o := range c.old.InternalTopics {
		if o.Kind == ot.Kind && derivedSuffix(o.Name) == suffix && findInternal(c.new, o.Name, o.Kind) == nil {
			gone = append(gone, o)
		}
	}
	for _, n := range c.new.InternalTopics {
		if n.Kind == ot.Kind && derivedSuffix(n.Name) == suffix && n.Node != nil && n.Node.Op == ot.Node.Op && findInternal(c.old, n.Name, n.Kind) == nil {
			added = append(added, n)
		}
	}
	if len(gone) == 1 && len(added) == 1 {
		return added[0]
	}
	return nil
}

func (c *comparer) internalPair(ot, nt *spec.InternalTopic) {
	where := "internal topic " + internalTopicName(c.new, nt)
	okey, ovalue := internalTypes(ot)
	nkey, nvalue := internalTypes(nt)
	c.keyType(nt.Pos, where, okey, nkey,
		"records still in it no longer decode, and equal keys no longer meet in one partition",
		"keep the key type, or give the step a new name once the old topic is drained")
	c.valueType(nt.Pos, where, ovalue, nvalue, false)
	if ot.Partitions != nt.Partitions {
		if ot.Partitions != 0 && nt.Partitions != 0 {
			c.add(nt.Pos, Breaking,
				"keep the partition count, or give the step a new name once the old topic is drained",
				"internal topic %s: partition count changes from %d to %d: the existing topic keeps %d partitions and the engine refuses to start", internalTopicName(c.new, nt), ot.Partitions, nt.Partitions, ot.Partitions)
		} else {
			c.add(nt.Pos, Warning,
				"make sure the count the topic was created with does not change",
				"internal topic %s: partition count changes from %s to %s", internalTopicName(c.new, nt), partitionsText(ot.Partitions), partitionsText(nt.Partitions))
		}
	}
}

func partitionsText(n int) string {
	if n == 0 {
		return "that of its source topics"
	}
	return fmt.Sprint(n)
}

// globalStore reports whether s materializes a global table (restored from
// its topic by every instance, outside the numbered tasks).
func globalStore(p *spec.Program, s *spec.Store) bool {
	for _, t := range p.Topics {
		if t.Store == s && t.Kind == spec.TopicGlobalTable {
			return true
		}
	}
	return false
}

// derivedSuffixes are what joins and suppress append to their step's name
// to name their stores and internal topics.
var derivedSuffixes = []string{"-subscription-registration", "-subscription-response", "-subscriptions",
	"-this", "-other", "-outer", "-left", "-right", "-store"}

// keepName names what the user should keep when old was renamed to new.
// For a store or topic derived from a step's name ("fk-subscriptions" from
// `name: fk`), that is the step's name.
func keepName(old, new string, derived bool) string {
	if derived {
		for _, suf := range derivedSuffixes {
			if strings.HasSuffix(old, suf) && strings.HasSuffix(new, suf) && len(old) > len(suf) {
				return fmt.Sprintf("%q (the step name that makes %q)", strings.TrimSuffix(old, suf), old)
			}
		}
	}
	return fmt.Sprintf("%q", old)
}

// derivedStore reports whether a join or suppress named s after its step.
func derivedStore(p *spec.Program, s *spec.Store) bool {
	for _, n := range p.Nodes {
		if n.Suppress != nil && n.Store == s {
			return true
		}
		if j := n.Join; j != nil && (j.ThisStore == s || j.OtherStore == s || j.OuterStore == s || j.SubscriptionStore == s) {
			return true
		}
	}
	return false
}

// derivedTopic reports whether a join named t after its step.
func derivedTopic(t *spec.InternalTopic) bool {
	return t.Kind != spec.InternalRepartition || (t.Node != nil && t.Node.Join != nil && t.Node.Join.Shape == spec.JoinStreamStream)
}

// windowOf is the window of the aggregation that owns store s, or nil.
func (c *comparer) windowOf(p *spec.Program, s *spec.Store) *spec.Window {
	for _, n := range p.Nodes {
		if n.Store == s && n.Window != nil {
			return n.Window
		}
	}
	return nil
}

// windowText spells what a window's stored state depends on (not grace or
// retention, which only decide how long windows are kept).
func windowText(w *spec.Window) string {
	switch w.Kind {
	case spec.WindowTumbling:
		return fmt.Sprintf("tumbling %s", dur(w.Size))
	case spec.WindowHopping:
		return fmt.Sprintf("hopping %s advancing %s", dur(w.Size), dur(w.Advance))
	case spec.WindowSliding:
		return fmt.Sprintf("sliding %s", dur(w.TimeDiff))
	case spec.WindowSession:
		return fmt.Sprintf("session gap %s", dur(w.Gap))
	}
	return string(w.Kind)
}

// dur spells a duration as a spec would: 5m, 1h, 1m30s.
func dur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
