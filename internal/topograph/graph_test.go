package topograph

import (
	"strings"
	"testing"
)

// TestForeignKeyJoinSubTopologies checks that a foreign-key join's nodes
// run with the side whose table they look up (peers and shared stores), and
// that sub-topologies are numbered by their first node.
func TestForeignKeyJoinSubTopologies(t *testing.T) {
	g := New("app")
	left := g.TableSource("orders", Topic{Name: "orders"}, "orders-store")
	right := g.TableSource("users", Topic{Name: "users"}, "users-store")
	j := g.ForeignKeyJoin("ou", left, right, "orders-store", "users-store", "")
	subs := g.Finalise()
	if len(subs) != 2 {
		t.Fatalf("got %d sub-topologies, want 2", len(subs))
	}
	for _, n := range []*Node{left, j.Send, j.RegSink, j.RespSource, j.Resolver, j.Result} {
		if n.Sub != 0 {
			t.Errorf("%s is in sub-topology %d, want 0", n.Name, n.Sub)
		}
	}
	for _, n := range []*Node{right, j.RegSource, j.Receive, j.Join, j.Foreign, j.RespSink} {
		if n.Sub != 1 {
			t.Errorf("%s is in sub-topology %d, want 1", n.Name, n.Sub)
		}
	}
	text := g.Describe().Text()
	for _, want := range []string{
		"Source: ou-subscription-registration-source (topics: [ou-subscription-registration-topic])",
		"Sink: ou-subscription-response-sink (topic: ou-subscription-response-topic)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("description lacks %q:\n%s", want, text)
		}
	}
}

// TestDuplicateName records a duplicate node name as an error.
func TestDuplicateName(t *testing.T) {
	g := New("app")
	g.Add("a", "x")
	g.Add("a", "x")
	if len(g.Errs) != 1 {
		t.Fatalf("got %d errors, want 1", len(g.Errs))
	}
}
