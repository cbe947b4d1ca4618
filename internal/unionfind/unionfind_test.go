package unionfind

import "testing"

func TestSets(t *testing.T) {
	s := New(6)
	s.Union(4, 2)
	s.Union(5, 4)
	s.Union(1, 3)
	want := []int{0, 1, 2, 1, 2, 2}
	for x, w := range want {
		if got := s.Find(x); got != w {
			t.Errorf("Find(%d) = %d, want %d", x, got, w)
		}
	}
	s.Union(3, 5)
	if s.Find(5) != 1 || s.Find(2) != 1 {
		t.Errorf("after merging {1,3} and {2,4,5}: Find(5)=%d Find(2)=%d, want 1", s.Find(5), s.Find(2))
	}
}
