package javapq

import (
	"slices"
	"testing"
)

type item struct {
	name  string
	count int
}

// byCountDesc is TopArticles' comparator: higher counts first, ties equal.
func byCountDesc(a, b item) int { return b.count - a.count }

// The arrays are what java.util.PriorityQueue holds after the same calls
// (worked through its siftUp/siftDown/removeAt by hand): equal elements stay
// where the sifts leave them, which a sort would not reproduce.
func TestHeapMatchesJava(t *testing.T) {
	a, b, c, d, e := item{"a", 1}, item{"b", 1}, item{"c", 2}, item{"d", 1}, item{"e", 3}
	var h []item
	for _, x := range []item{a, b, c, d, e} {
		h = Offer(h, x, byCountDesc)
	}
	// offer a: [a]; b: [a b]; c (2) rises over a: [c b a]; d: [c b a d];
	// e (3) at 4, parent 1 (b) then 0 (c): [e c a d b].
	if want := []item{e, c, a, d, b}; !slices.Equal(h, want) {
		t.Fatalf("after offers %v, want %v", h, want)
	}
	before := slices.Clone(h)
	h2 := Remove(h, c, byCountDesc)
	// removeAt(1): b moves in, children d (3) only: d ties b, no move; b
	// stays at 1 and sifts up: e sorts first, stays: [e b a d].
	if want := []item{e, b, a, d}; !slices.Equal(h2, want) {
		t.Fatalf("after remove %v, want %v", h2, want)
	}
	if !slices.Equal(h, before) {
		t.Fatalf("Remove changed its argument: %v", h)
	}
	var got []string
	for rest := h2; ; {
		head, r, ok := Poll(rest, byCountDesc)
		if !ok {
			break
		}
		got, rest = append(got, head.name), r
	}
	// poll e: d to the root, children b, a tie, left wins, d ties b: [d b a]
	// -> d; a to root, b ties: [a b] -> a; b.
	if want := []string{"e", "d", "a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("poll order %v, want %v", got, want)
	}
	if _, _, ok := Poll[item](nil, byCountDesc); ok {
		t.Fatal("Poll of an empty queue reported an element")
	}
	if got := Remove(h2, item{"z", 9}, byCountDesc); !slices.Equal(got, h2) {
		t.Fatalf("removing an absent element changed the queue: %v", got)
	}
}
