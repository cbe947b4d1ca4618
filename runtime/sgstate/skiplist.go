package sgstate

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
)

// skiplist is the ordered map behind the in-memory stores (Kafka uses a
// TreeMap). Level 0 is doubly linked so reverse iteration is O(1) per step.
// Removing a node leaves its own links intact, so an iteration that is
// positioned on it can still advance.
type skiplist struct {
	head slNode
	// index makes point reads and overwrites of existing keys O(1); the
	// list is only walked for inserts, removals and scans.
	index map[string]*slNode
	level int
	n     int
	rng   *rand.PCG
	// update is scratch space for insert and remove.
	update [slMaxLevel]*slNode
}

const slMaxLevel = 24

type slNode struct {
	// pfx and pfx2 are the key's first 16 bytes, zero-padded, big-endian:
	// most comparisons are decided by them without dereferencing key. Two
	// words, because window and session keys start with 9 bytes (index
	// byte and segment or time) that most keys of a store share.
	pfx, pfx2 uint64
	key       []byte
	value     []byte
	// tomb marks a staged delete in an overlay list.
	tomb bool
	prev *slNode
	next []*slNode
	// next1 holds next for the three nodes in four that have one level,
	// saving them an allocation.
	next1 [1]*slNode
}

func newSkiplist() *skiplist {
	s := &skiplist{level: 1, rng: rand.NewPCG(0x5eed, 0x57a7e), index: map[string]*slNode{}}
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
	kp, kp2 := keyPrefix(k), keyPrefix2(k)
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil && nx.less(kp, kp2, k); nx = x.next[i] {
			x = nx
		}
		s.update[i] = x
	}
	return x.next[0]
}

func (s *skiplist) get(k []byte) *slNode { return s.index[string(k)] }

// set inserts or replaces; the list keeps key and value without copying.
func (s *skiplist) set(k, v []byte, tomb bool) {
	if n := s.index[string(k)]; n != nil {
		n.value, n.tomb = v, tomb
		return
	}
	s.findGE(k)
	l := s.randomLevel()
	if l > s.level {
		for i := s.level; i < l; i++ {
			s.update[i] = &s.head
		}
		s.level = l
	}
	nn := &slNode{pfx: keyPrefix(k), pfx2: keyPrefix2(k), key: k, value: v, tomb: tomb}
	if l == 1 {
		nn.next = nn.next1[:]
	} else {
		nn.next = make([]*slNode, l)
	}
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
	s.index[string(k)] = nn
	s.n++
}

func (s *skiplist) remove(k []byte) bool {
	if s.index[string(k)] == nil {
		return false
	}
	n := s.findGE(k)
	delete(s.index, string(k))
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
	kp, kp2 := keyPrefix(k), keyPrefix2(k)
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil && (k == nil || nx.less(kp, kp2, k)); nx = x.next[i] {
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
	clear(s.index)
}

func keyPrefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// keyPrefix2 is bytes 8 to 16 of k, zero-padded, big-endian.
func keyPrefix2(k []byte) uint64 {
	if len(k) <= 8 {
		return 0
	}
	return keyPrefix(k[8:])
}

// less reports n.key < k, where kp and kp2 are keyPrefix(k) and
// keyPrefix2(k). Zero padding sorts like the end of a key, so unequal
// prefixes order keys as bytes.Compare does.
func (n *slNode) less(kp, kp2 uint64, k []byte) bool {
	if n.pfx != kp {
		return n.pfx < kp
	}
	if n.pfx2 != kp2 {
		return n.pfx2 < kp2
	}
	return bytes.Compare(n.key, k) < 0
}
