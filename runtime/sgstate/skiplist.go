package sgstate

import (
	"bytes"
	"math/rand/v2"
)

// skiplist is the ordered map behind the in-memory stores (Kafka uses a
// TreeMap). Level 0 is doubly linked so reverse iteration is O(1) per step.
// Removing a node leaves its own links intact, so an iteration that is
// positioned on it can still advance.
type skiplist struct {
	head  slNode
	level int
	n     int
	rng   *rand.PCG
	// update is scratch space for insert and remove.
	update [slMaxLevel]*slNode
}

const slMaxLevel = 24

type slNode struct {
	key   []byte
	value []byte
	// tomb marks a staged delete in an overlay list.
	tomb bool
	prev *slNode
	next []*slNode
}

func newSkiplist() *skiplist {
	s := &skiplist{level: 1, rng: rand.NewPCG(0x5eed, 0x57a7e)}
	s.head.next = make([]*slNode, slMaxLevel)
	return s
}

func (s *skiplist) randomLevel() int {
	l := 1
	for r := s.rng.Uint64(); l < slMaxLevel && r&3 == 0; r >>= 2 {
		l++
	}
	return l
}

// findGE returns the first node with key >= k, filling s.update with the
// predecessors at each level.
func (s *skiplist) findGE(k []byte) *slNode {
	x := &s.head
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil && bytes.Compare(nx.key, k) < 0; nx = x.next[i] {
			x = nx
		}
		s.update[i] = x
	}
	return x.next[0]
}

func (s *skiplist) get(k []byte) *slNode {
	x := &s.head
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil; nx = x.next[i] {
			c := bytes.Compare(nx.key, k)
			if c == 0 {
				return nx
			}
			if c > 0 {
				break
			}
			x = nx
		}
	}
	return nil
}

// set inserts or replaces; the list keeps key and value without copying.
func (s *skiplist) set(k, v []byte, tomb bool) {
	n := s.findGE(k)
	if n != nil && bytes.Equal(n.key, k) {
		n.value, n.tomb = v, tomb
		return
	}
	l := s.randomLevel()
	if l > s.level {
		for i := s.level; i < l; i++ {
			s.update[i] = &s.head
		}
		s.level = l
	}
	nn := &slNode{key: k, value: v, tomb: tomb, next: make([]*slNode, l)}
	for i := 0; i < l; i++ {
		nn.next[i] = s.update[i].next[i]
		s.update[i].next[i] = nn
	}
	if s.update[0] != &s.head {
		nn.prev = s.update[0]
	}
	if nn.next[0] != nil {
		nn.next[0].prev = nn
	}
	s.n++
}

func (s *skiplist) remove(k []byte) bool {
	n := s.findGE(k)
	if n == nil || !bytes.Equal(n.key, k) {
		return false
	}
	for i := 0; i < len(n.next); i++ {
		s.update[i].next[i] = n.next[i]
	}
	if n.next[0] != nil {
		n.next[0].prev = n.prev
	}
	s.n--
	return true
}

// seekGE returns the first node with key >= k (the first node if k is nil).
func (s *skiplist) seekGE(k []byte) *slNode {
	if k == nil {
		return s.head.next[0]
	}
	return s.findGE(k)
}

// seekLT returns the last node with key < k (the last node if k is nil).
func (s *skiplist) seekLT(k []byte) *slNode {
	x := &s.head
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil && (k == nil || bytes.Compare(nx.key, k) < 0); nx = x.next[i] {
			x = nx
		}
	}
	if x == &s.head {
		return nil
	}
	return x
}

func (s *skiplist) reset() {
	for i := range s.head.next {
		s.head.next[i] = nil
	}
	s.level, s.n = 1, 0
}
