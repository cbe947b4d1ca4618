// Package unionfind groups the integers 0..n-1 into disjoint sets. Both the
// generator (describe) and the runtime (task layout) split a topology into
// sub-topologies with it, so the two always agree on the grouping rule.
package unionfind

// Sets is a disjoint-set forest over 0..n-1. The representative of a set is
// always its smallest member, so numbering sets by their representative
// keeps the order of first appearance.
type Sets struct{ parent []int }

// New makes n singleton sets.
func New(n int) *Sets {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return &Sets{parent: p}
}

// Find returns the smallest member of x's set.
func (s *Sets) Find(x int) int {
	for s.parent[x] != x {
		s.parent[x] = s.parent[s.parent[x]]
		x = s.parent[x]
	}
	return x
}

// Union merges the sets of a and b.
func (s *Sets) Union(a, b int) {
	ra, rb := s.Find(a), s.Find(b)
	switch {
	case ra < rb:
		s.parent[rb] = ra
	case rb < ra:
		s.parent[ra] = rb
	}
}
