package topograph

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/textdiff"
)

// The layout tests pin each composite operator's nodes as Kafka Streams
// lays them out: their order (which is the order the description's
// processors come in and the sub-topologies are numbered by), names,
// edges, peers, topics and stores, and the sub-topology every node lands
// in after Finalise.

// layout is g, finalised, one node per line in the order they were added:
//
//	<sub> <name> (<op>) <- parents ~ peers r[topics read] w[topics written] s[stores]
//
// with empty parts left out, then one line per topic that is not external:
//
//	topic <full name> <role> p<partitions>
func layout(g *Graph) string {
	g.Finalise()
	var b strings.Builder
	names := func(ids []int) string {
		var s []string
		for _, id := range ids {
			s = append(s, g.Nodes[id].Name)
		}
		return strings.Join(s, ",")
	}
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "%d %s (%s)", n.Sub, n.Name, n.Op)
		if len(n.Parents) > 0 {
			fmt.Fprintf(&b, " <- %s", names(n.Parents))
		}
		if len(n.Peers) > 0 {
			fmt.Fprintf(&b, " ~ %s", names(n.Peers))
		}
		for _, part := range []struct {
			tag  string
			list []string
		}{{"r", n.Reads}, {"w", n.Writes}, {"s", n.Stores}} {
			if len(part.list) > 0 {
				fmt.Fprintf(&b, " %s%v", part.tag, part.list)
			}
		}
		b.WriteByte('\n')
	}
	var topics []string
	for name, t := range g.Topics {
		if t.Role != TopicExternal {
			topics = append(topics, fmt.Sprintf("topic %s %s p%d\n", name, roleNames[t.Role], t.Partitions))
		}
	}
	sort.Strings(topics)
	b.WriteString(strings.Join(topics, ""))
	return b.String()
}

var roleNames = map[TopicRole]string{
	TopicRepartition: "repartition", TopicChangelog: "changelog", TopicInternal: "internal", TopicGlobal: "global",
}

// checkLayout compares layout(g) with want, given one node or topic per
// line with the indentation of a raw string literal.
func checkLayout(t *testing.T, g *Graph, want string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	if d := textdiff.Unified("want", "got", strings.Join(lines, "\n")+"\n", layout(g)); d != "" {
		t.Errorf("layout differs:\n%s", d)
	}
	if len(g.Errs) > 0 {
		t.Errorf("graph errors: %v", g.Errs)
	}
}

// checkDescribed checks that the description contains each of want (raw
// internal topic names, table-source processors, ...).
func checkDescribed(t *testing.T, g *Graph, want ...string) {
	t.Helper()
	text := g.Describe().Text()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("description lacks %q:\n%s", w, text)
		}
	}
}

// A key change then a repartition: the filter and sink stay upstream, the
// source starts a new sub-topology with the aggregation reading it.
func TestRepartitionLayout(t *testing.T) {
	g := New("app")
	in := g.Source("in", Topic{Name: "in"})
	sel := g.Add("by-user", "select_key", in)
	_, src := g.Repartition("by-user", 4, sel)
	g.Stateful("counts", "count", src, "counts-store")
	checkLayout(t, g, `
		0 in (source) r[in]
		0 by-user (select_key) <- in
		0 by-user-repartition-filter (repartition_filter) <- by-user
		0 by-user-repartition-sink (sink) <- by-user-repartition-filter w[app-by-user-repartition]
		1 by-user-repartition-source (source) r[app-by-user-repartition]
		1 counts (count) <- by-user-repartition-source s[counts-store]
		topic app-by-user-repartition repartition p4
	`)
	checkDescribed(t, g,
		"Sink: by-user-repartition-sink (topic: by-user-repartition)",
		"Source: by-user-repartition-source (topics: [by-user-repartition])")
	if s := g.Subs[1]; len(s.Topics) != 1 || s.Topics[0] != "app-by-user-repartition" || len(s.Stores) != 1 || s.Stores[0] != "counts-store" {
		t.Errorf("sub-topology 1 reads %v and has stores %v", s.Topics, s.Stores)
	}
}

// A table's group_by repartitions through <name>-sink and <name>-source,
// without a filter; a stream's through the stream layout.
func TestGroupByLayout(t *testing.T) {
	g := New("app")
	tbl := g.TableSource("users", Topic{Name: "users"}, "users-store")
	g.GroupBy("by-country", "table_group_by", tbl)
	st := g.Source("clicks", Topic{Name: "clicks"})
	g.GroupBy("by-page", "select_key", st)
	checkLayout(t, g, `
		0 users (table_source) r[users] s[users-store]
		0 by-country (table_group_by) <- users
		0 by-country-sink (sink) <- by-country w[app-by-country-repartition]
		1 by-country-source (source) r[app-by-country-repartition]
		2 clicks (source) r[clicks]
		2 by-page (select_key) <- clicks
		2 by-page-repartition-filter (repartition_filter) <- by-page
		2 by-page-repartition-sink (sink) <- by-page-repartition-filter w[app-by-page-repartition]
		3 by-page-repartition-source (source) r[app-by-page-repartition]
		topic app-by-country-repartition repartition p0
		topic app-by-page-repartition repartition p0
	`)
}

// Stream-stream joins as KStreamImplJoin lays them out, for each kind:
// "-outer" goes before the side that emits unmatched records, and the
// outer store is shared by both join processors. The window stores put
// both sides in one sub-topology. With a store name the stores have Kafka
// Streams' names for StreamJoined.withStoreName.
func TestStreamJoinLayout(t *testing.T) {
	cases := []struct {
		name, storeName  string
		leftJoin, outer  bool
		thisJoin, others string
		this, other      string
		unmatched        string
	}{
		{"inner", "", false, false, "j-this-join", "j-other-join", "j-this", "j-other", ""},
		{"left", "", true, false, "j-this-join", "j-outer-other-join", "j-this", "j-other", " j-outer"},
		{"outer", "", false, true, "j-outer-this-join", "j-outer-other-join", "j-this", "j-other", " j-outer"},
		{"inner kafka names", "s", false, false, "j-this-join", "j-other-join", "s-this-join-store", "s-other-join-store", ""},
		{"left kafka names", "s", true, false, "j-this-join", "j-outer-other-join", "s-this-join-store", "s-outer-other-join-store", " s-left-shared-join-store"},
		{"outer kafka names", "s", false, true, "j-outer-this-join", "j-outer-other-join", "s-outer-this-join-store", "s-outer-other-join-store", " s-outer-shared-join-store"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := New("app")
			l := g.Source("l", Topic{Name: "l"})
			r := g.Source("r", Topic{Name: "r"})
			g.StreamJoin("j", c.storeName, l, r, c.leftJoin, c.outer)
			checkLayout(t, g, fmt.Sprintf(`
				0 l (source) r[l]
				0 r (source) r[r]
				0 j-this-windowed (join_this_windowed) <- l s[%[3]s]
				0 j-other-windowed (join_other_windowed) <- r s[%[4]s]
				0 %[1]s (join_this) <- j-this-windowed s[%[4]s%[5]s]
				0 %[2]s (join_other) <- j-other-windowed s[%[3]s%[5]s]
				0 j-merge (join_merge) <- %[1]s,%[2]s
			`, c.thisJoin, c.others, c.this, c.other, c.unmatched))
		})
	}
}

// A stream-table join has the table as a peer, not a parent: no edge in
// the description, but the join runs in the table's sub-topology, which a
// repartitioned stream joins only through it.
func TestStreamTableJoinLayout(t *testing.T) {
	g := New("app")
	tbl := g.TableSource("users", Topic{Name: "users"}, "users-store")
	in := g.Source("orders", Topic{Name: "orders"})
	g.StreamTableJoin("enrich", in, tbl, "users-store")
	checkLayout(t, g, `
		0 users (table_source) r[users] s[users-store]
		0 orders (source) r[orders]
		0 enrich (join) <- orders ~ users s[users-store]
	`)
	checkDescribed(t, g, "Processor: users-table-source (stores: [users-store])\n      --> none")
}

// A table-table join as KTableImpl lays it out: each side looks the other
// up, and the merge is named after the join and holds its store.
func TestTableJoinLayout(t *testing.T) {
	for _, store := range []string{"j-store", ""} {
		g := New("app")
		l := g.TableSource("l", Topic{Name: "l"}, "l-store")
		r := g.TableSource("r", Topic{Name: "r"}, "r-store")
		g.TableJoin("j", l, r, "l-store", "r-store", store)
		merge := "0 j (table_join_merge) <- j-join-this,j-join-other"
		if store != "" {
			merge += " s[" + store + "]"
		}
		checkLayout(t, g, `
			0 l (table_source) r[l] s[l-store]
			0 r (table_source) r[r] s[r-store]
			0 j-join-this (table_join_this) <- l s[r-store]
			0 j-join-other (table_join_other) <- r s[l-store]
			`+merge)
	}
}

// A foreign-key join (KIP-213): each arrow between the sides is a
// processor, a sink and a source; the nodes that look a table up are its
// peers, and the subscription store ties the right side's nodes together.
func TestForeignKeyJoinLayout(t *testing.T) {
	g := New("app")
	left := g.TableSource("orders", Topic{Name: "orders"}, "orders-store")
	right := g.TableSource("users", Topic{Name: "users"}, "users-store")
	g.ForeignKeyJoin("ou", left, right, "orders-store", "users-store", "ou-store")
	checkLayout(t, g, `
		0 orders (table_source) r[orders] s[orders-store]
		1 users (table_source) r[users] s[users-store]
		0 ou-subscription-registration-processor (fk_subscription_send) <- orders
		0 ou-subscription-registration-sink (sink) <- ou-subscription-registration-processor w[app-ou-subscription-registration-topic]
		1 ou-subscription-registration-source (source) r[app-ou-subscription-registration-topic]
		1 ou-subscription-receive (fk_subscription_receive) <- ou-subscription-registration-source s[ou-subscriptions]
		1 ou-subscription-join-foreign (fk_subscription_join) <- ou-subscription-receive ~ users s[users-store]
		1 ou-foreign-join-subscription (fk_foreign_join) <- users s[ou-subscriptions]
		1 ou-subscription-response-sink (sink) <- ou-subscription-join-foreign,ou-foreign-join-subscription w[app-ou-subscription-response-topic]
		0 ou-subscription-response-source (source) r[app-ou-subscription-response-topic]
		0 ou-subscription-response-resolver (fk_response_join) <- ou-subscription-response-source ~ orders s[orders-store]
		0 ou-result (fk_join_result) <- ou-subscription-response-resolver s[ou-store]
		topic app-ou-subscription-registration-topic internal p0
		topic app-ou-subscription-response-topic internal p0
	`)
	checkDescribed(t, g,
		"Source: ou-subscription-registration-source (topics: [ou-subscription-registration-topic])",
		"Sink: ou-subscription-response-sink (topic: ou-subscription-response-topic)")
	if got := g.Subs[1].Stores; strings.Join(got, ",") != "ou-subscriptions,users-store" {
		t.Errorf("right sub-topology stores %v", got)
	}
}

// A cogroup's aggregations share its store, so inputs from distinct
// topics run in one sub-topology; sub-topologies are numbered by their
// first node, so an unrelated source added first is sub-topology 0.
func TestCogroupLayout(t *testing.T) {
	g := New("app")
	g.Source("other", Topic{Name: "other"})
	a := g.Source("a", Topic{Name: "a"})
	b := g.Source("b", Topic{Name: "b"})
	g.Cogroup("totals", "cogroup_aggregate", []*Node{a, b}, "totals-store")
	checkLayout(t, g, `
		0 other (source) r[other]
		1 a (source) r[a]
		1 b (source) r[b]
		1 totals-cogroup-agg-0 (cogroup_aggregate) <- a s[totals-store]
		1 totals-cogroup-agg-1 (cogroup_aggregate) <- b s[totals-store]
		1 totals (cogroup_merge) <- totals-cogroup-agg-0,totals-cogroup-agg-1
	`)
	if got := g.Subs[1].Topics; strings.Join(got, ",") != "a,b" {
		t.Errorf("cogroup sub-topology reads %v, want [a b]", got)
	}
}

// A split is the processor "<name>-" with one child per branch.
func TestSplitLayout(t *testing.T) {
	g := New("app")
	in := g.Source("in", Topic{Name: "in"})
	split, outs := g.Split("route", in, []string{"big", "small"})
	g.Sink("big-out", Topic{Name: "big"}, outs[0])
	checkLayout(t, g, `
		0 in (source) r[in]
		0 route- (split) <- in
		0 route-big (branch) <- route-
		0 route-small (branch) <- route-
		0 big-out (sink) <- route-big w[big]
	`)
	if split.Name != "route-" || len(outs) != 2 {
		t.Errorf("split %q with %d branches", split.Name, len(outs))
	}
}

// A global table is a sub-topology of its own that no join connects to:
// a stream-global join looks it up through the task's global store.
func TestGlobalTableLayout(t *testing.T) {
	g := New("app")
	g.GlobalTableSource("countries", Topic{Name: "countries"}, "countries-store")
	in := g.Source("orders", Topic{Name: "orders"})
	g.StreamGlobalJoin("with-country", in)
	checkLayout(t, g, `
		0 countries (global_table_source) r[countries] s[countries-store]
		1 orders (source) r[orders]
		1 with-country (join) <- orders
		topic countries global p0
	`)
	d := g.Describe()
	if !d.IsGlobal(0) || d.IsGlobal(1) {
		t.Errorf("global marks %v, want sub-topology 0 only", d.Global)
	}
	// Kafka Streams prints a global table's topic by its own name, never
	// stripped of the application id as an internal topic's is.
	checkDescribed(t, g, "Source: countries (topics: [countries])", "Processor: countries-table-source (stores: [countries-store])")
}
