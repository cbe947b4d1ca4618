package topograph

import "testing"

// TestDuplicateName records a duplicate node name as an error.
func TestDuplicateName(t *testing.T) {
	g := New("app")
	g.Add("a", "x")
	g.Add("a", "x")
	if len(g.Errs) != 1 {
		t.Fatalf("got %d errors, want 1", len(g.Errs))
	}
}
