package topodesc

import (
	"strings"
	"testing"
)

func sample() *Graph {
	return &Graph{Subs: [][]*Node{
		{
			{Name: "in", Kind: Source, Topics: []string{"in"}, Children: []string{"p.count1"}},
			{Name: "p.count1", Kind: Processor, Stores: []string{"counts"}, Children: []string{"p", "p.x"}},
			{Name: "p", Kind: Sink, Topics: []string{"<chosen per record>"}},
			{Name: "p.x", Kind: Processor},
		},
		{
			{Name: "a.b", Kind: Source, Topics: []string{"t1", "t2"}, Children: []string{"a_b"}},
			{Name: "a_b", Kind: Sink, Topics: []string{"o"}},
		},
	}}
}

// TestParseTextRoundTrip: every picture rendered from the parsed text
// equals the picture rendered from the graph, which is what lets the
// generated binary embed only the text.
func TestParseTextRoundTrip(t *testing.T) {
	g := sample()
	back, err := ParseText(g.Text())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Formats {
		want, _ := g.Render(f)
		got, err := back.Render(f)
		if err != nil || got != want {
			t.Errorf("%s: round trip differs (%v):\n%s\nwant\n%s", f, err, got, want)
		}
	}
}

func TestDistinctIDsAndEscapes(t *testing.T) {
	m := sample().Mermaid()
	// "a.b" and "a_b" must not share an id.
	if !strings.Contains(m, `n_a_b["a.b"]`) || !strings.Contains(m, `n_a_b_2["a_b"]`) {
		t.Errorf("colliding ids not told apart:\n%s", m)
	}
	if !strings.Contains(m, "#lt;chosen per record#gt;") {
		t.Errorf("angle brackets not escaped for Mermaid:\n%s", m)
	}
	d := sample().Dot()
	if !strings.Contains(d, `n_p_count1 -> s_counts [style=dashed, arrowhead=none];`) || !strings.HasSuffix(d, "}\n") {
		t.Errorf("dot:\n%s", d)
	}
}

func TestParseTextRejectsGarbage(t *testing.T) {
	for _, s := range []string{"", "Topologies:\n    Source: x\n", "Topologies:\n   Sub-topology: 0\n    Weird: x (y)\n", "Topologies:\n      --> a\n"} {
		if _, err := ParseText(s); err == nil {
			t.Errorf("ParseText(%q) accepted it", s)
		}
	}
	if _, err := sample().Render("png"); err == nil {
		t.Error("unknown format accepted")
	}
}
