// Package describecheck compares a streamgen application's describe with
// Kafka Streams' own Topology#describe of the scenario's Java twin. The two
// must be the same graph: the same sub-topologies with the same numbers
// (global stores included), the same nodes of the same kinds reading and
// writing the same topics and using the same stores, the same edges, and
// nodes listed in the same order, apart from these names, which the spec
// does not fix and are normalised:
//
//   - node names Kafka Streams generates (KSTREAM-…-0000000003,
//     KTABLE-…-0000000001: the twin names only what the spec names): such a
//     node matches the streamgen node of the same kind, topics, stores and
//     (already matched) parents;
//   - topic and store names Kafka Streams generates (containing
//     "-0000000"), likewise matched by position;
//   - a foreign-key join's subscription store, "<join>-subscription-store"
//     in Kafka Streams and "<join>-subscriptions" in streamgen.
//
// A stream-stream join's stores are not normalised: the scenarios give the
// join `store:`, which names them as Kafka Streams does for
// StreamJoined.withStoreName ("<store>-this-join-store",
// "<store>-outer-other-join-store", "<store>-left-shared-join-store"…).
//
// The order check re-sorts the Java graph under the streamgen names with
// Kafka Streams' comparator (sub-tree size, then name) and requires
// streamgen's order; it also requires Kafka Streams' printed order to be
// that comparator's, which checks topodesc.Order against the real thing.
// The "-->" and "<--" lists are compared as sets: Kafka Streams fills them
// while sub-tree sizes still grow, so their order follows Java's hashing.
package describecheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/streamgen/streamgen/internal/topodesc"
)

var generated = regexp.MustCompile(`^K[A-Z]+-[A-Z-]+-\d{10}`)

// generatedName reports whether Kafka Streams made up the name.
func generatedName(s string) bool { return generated.MatchString(s) || strings.Contains(s, "-0000000") }

// normStore maps a Kafka Streams store name onto streamgen's spelling.
func normStore(s string) string {
	if base, ok := strings.CutSuffix(s, "-subscription-store"); ok {
		return base + "-subscriptions"
	}
	return s
}

// Compare returns nil when ours (streamgen's describe text) equals java's
// (Kafka Streams'), names aside as the package doc says, or the first
// differences found.
func Compare(java, ours string) error {
	jg, err := topodesc.ParseText(java)
	if err != nil {
		return fmt.Errorf("kafka streams describe: %w", err)
	}
	og, err := topodesc.ParseText(ours)
	if err != nil {
		return fmt.Errorf("streamgen describe: %w", err)
	}
	if err := kafkaOrdered(jg); err != nil {
		return err
	}
	if len(jg.Subs) != len(og.Subs) {
		return fmt.Errorf("kafka streams has %d sub-topologies, streamgen %d", len(jg.Subs), len(og.Subs))
	}
	var errs []string
	for i := range jg.Subs {
		if jg.IsGlobal(i) != og.IsGlobal(i) {
			errs = append(errs, fmt.Sprintf("sub-topology %d: global store in one description only", i))
			continue
		}
		if err := compareSub(jg.Subs[i], og.Subs[i]); err != nil {
			errs = append(errs, fmt.Sprintf("sub-topology %d: %v", i, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// kafkaOrdered checks that Kafka Streams printed every sub-topology in the
// order topodesc.Order gives.
func kafkaOrdered(g *topodesc.Graph) error {
	want := make([][]string, len(g.Subs))
	for i, sub := range g.Subs {
		for _, n := range sub {
			want[i] = append(want[i], n.Name)
		}
	}
	c := clone(g)
	c.Order()
	for i, sub := range c.Subs {
		var got []string
		for _, n := range sub {
			got = append(got, n.Name)
		}
		if !slices.Equal(got, want[i]) {
			return fmt.Errorf("sub-topology %d: kafka streams lists %v, topodesc.Order gives %v", i, want[i], got)
		}
	}
	return nil
}

func clone(g *topodesc.Graph) *topodesc.Graph {
	c := &topodesc.Graph{Global: g.Global}
	for _, sub := range g.Subs {
		var ns []*topodesc.Node
		for _, n := range sub {
			m := *n
			m.Children = slices.Clone(n.Children)
			ns = append(ns, &m)
		}
		c.Subs = append(c.Subs, ns)
	}
	return c
}

// compareSub matches the Java nodes to ours, parents first, then checks
// edges and order.
func compareSub(java, ours []*topodesc.Node) error {
	if len(java) != len(ours) {
		return fmt.Errorf("kafka streams has %d nodes, streamgen %d", len(java), len(ours))
	}
	jParents, oParents := parentsOf(java), parentsOf(ours)
	byName := map[string]*topodesc.Node{}
	for _, n := range ours {
		byName[n.Name] = n
	}
	mapped := map[string]string{} // java name → our name
	// used holds our nodes already matched, and from the start those the
	// Java graph names too: they match only the Java node of their name,
	// never a generated one met before it.
	used := map[string]bool{}
	for _, j := range java {
		if !generatedName(j.Name) && byName[j.Name] != nil {
			used[j.Name] = true
		}
	}
	pending := slices.Clone(java)
	for len(pending) > 0 {
		progress := false
		for k := 0; k < len(pending); k++ {
			j := pending[k]
			ps, ready := mapNames(jParents[j.Name], mapped)
			if !ready {
				continue
			}
			var match *topodesc.Node
			if !generatedName(j.Name) {
				if o := byName[j.Name]; o != nil && same(j, o, ps, oParents[o.Name]) {
					match = o
				}
			} else {
				for _, o := range ours {
					if !used[o.Name] && same(j, o, ps, oParents[o.Name]) {
						match = o
						break
					}
				}
			}
			if match == nil {
				return fmt.Errorf("no streamgen node matches %s %s (topics %v, stores %v, parents %v)", j.Kind, j.Name, j.Topics, j.Stores, jParents[j.Name])
			}
			mapped[j.Name], used[match.Name] = match.Name, true
			pending = slices.Delete(pending, k, k+1)
			k--
			progress = true
		}
		if !progress {
			return fmt.Errorf("cannot match nodes %v", names(pending))
		}
	}
	// Order: the Java nodes under our names, sorted as Kafka Streams sorts.
	renamed := make([]*topodesc.Node, len(java))
	for i, j := range java {
		m := *j
		m.Name = mapped[j.Name]
		m.Children, _ = mapNames(j.Children, mapped)
		renamed[i] = &m
	}
	g := &topodesc.Graph{Subs: [][]*topodesc.Node{renamed}}
	g.Order()
	if got, want := names(g.Subs[0]), names(ours); !slices.Equal(got, want) {
		return fmt.Errorf("node order: kafka streams (renamed) %v, streamgen %v", got, want)
	}
	return nil
}

// same reports whether Java node j and our node o agree on kind, topics,
// stores and (mapped) parents.
func same(j, o *topodesc.Node, jParents, oParents []string) bool {
	if j.Kind != o.Kind || !sameNames(j.Topics, o.Topics, func(s string) string { return s }) ||
		!sameNames(j.Stores, o.Stores, normStore) || (j.Extractor != "") != (o.Extractor != "") {
		return false
	}
	a, b := slices.Clone(jParents), slices.Clone(oParents)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// sameNames compares two name sets, a generated Java name matching any.
func sameNames(java, ours []string, norm func(string) string) bool {
	if len(java) != len(ours) {
		return false
	}
	a := make([]string, 0, len(java))
	wild := 0
	for _, s := range java {
		if generatedName(s) {
			wild++
			continue
		}
		a = append(a, norm(s))
	}
	b := slices.Clone(ours)
	for _, s := range a {
		i := slices.Index(b, s)
		if i < 0 {
			return false
		}
		b = slices.Delete(b, i, i+1)
	}
	return len(b) == wild
}

func parentsOf(sub []*topodesc.Node) map[string][]string {
	p := map[string][]string{}
	for _, n := range sub {
		for _, c := range n.Children {
			p[c] = append(p[c], n.Name)
		}
	}
	return p
}

// mapNames maps names through m; ok is false when one is not mapped yet.
func mapNames(in []string, m map[string]string) ([]string, bool) {
	out := make([]string, 0, len(in))
	for _, s := range in {
		t, ok := m[s]
		if !ok {
			return nil, false
		}
		out = append(out, t)
	}
	return out, true
}

func names(ns []*topodesc.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}
