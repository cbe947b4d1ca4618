package sgstate

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"unsafe"
)

// skiplist is the ordered map behind the in-memory stores (Kafka uses a
// TreeMap) and the staged writes of both engines. Level 0 is doubly linked
// so reverse iteration is O(1) per step. Removing a node leaves its own
// links intact, so an iteration that is positioned on it can still advance.
//
// New keys are not linked into the list when they are set: they wait in
// pending, reachable through index, until something needs the order (a
// seek). Many lists are never walked between two commits (a count's staged
// writes, which are only read back by key and then applied), and for them
// the ordered insert was most of the cost of a write; the others link what
// is pending in one sorted batch, whose inserts walk neighbouring paths.
type skiplist struct {
	head slNode
	// index holds every live node, linked or pending: point reads and
	// overwrites of existing keys are O(1).
	index map[string]*slNode
	// pending are the nodes set since the last link, in insertion order;
	// dead of them have been removed since (slDead).
	pending []*slNode
	dead    int
	level   int
	n       int
	// bytes approximates the memory the list holds: keys, values and
	// nodeOverhead per node (what a writer that must bound its
	// uncommitted writes counts).
	bytes int64
	rng   *rand.PCG
	// update is scratch space for insert and remove.
	update [slMaxLevel]*slNode
}

// Node states: linked into the list, waiting in pending, or removed while
// pending (link skips it).
const (
	slLinked uint8 = iota
	slPending
	slDead
)

const slMaxLevel = 24

// nodeOverhead is what a node costs besides its key and value: the node
// (prefix, slices, links) and its index map entry, about 200 bytes on
// 64-bit platforms.
const nodeOverhead = 200

type slNode struct {
	// pfx is the key's first 24 bytes, zero-padded, big-endian: most
	// comparisons are decided by it without dereferencing key. Three
	// words, because window and session keys start with 9 bytes (index
	// byte and segment or time) that most keys of a store share, and keys
	// such as user-1234 share their first bytes too.
	pfx   keyPfx
	key   []byte
	value []byte
	// tomb marks a staged delete in an overlay list.
	tomb  bool
	state uint8
	// In the memory engine's list, value is the committed value (if
	// committed) and stage says whether staged holds a staged write.
	committed bool
	stage     uint8
	staged    []byte
	prev      *slNode
	next      []*slNode
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
	kp := prefixOf(k)
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil && nx.less(kp, k); nx = x.next[i] {
			x = nx
		}
		s.update[i] = x
	}
	return x.next[0]
}

func (s *skiplist) get(k []byte) *slNode { return s.index[string(k)] }

// set inserts or replaces; the list keeps key and value without copying,
// and the caller must never modify them afterwards: the index's string key
// shares key's bytes.
func (s *skiplist) set(k, v []byte, tomb bool) {
	if n := s.index[string(k)]; n != nil {
		s.bytes += int64(len(v) - len(n.value))
		n.value, n.tomb = v, tomb
		return
	}
	s.add(k, v, tomb)
}

// add is set for a key known not to be in the list (get returned nil), so
// a new key costs one map lookup, not two. The node waits in pending until
// the order is needed.
func (s *skiplist) add(k, v []byte, tomb bool) *slNode {
	nn := &slNode{pfx: prefixOf(k), key: k, value: v, tomb: tomb, state: slPending}
	s.index[bytesString(k)] = nn
	s.pending = append(s.pending, nn)
	s.n++
	s.bytes += int64(len(k)+len(v)) + nodeOverhead
	return nn
}

// bytesString views b as a string without copying. b must never change
// afterwards; the list's keys never do.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// link inserts the pending nodes into the list, in key order so that
// consecutive inserts walk mostly the same, cached, path.
func (s *skiplist) link() {
	if len(s.pending) == 0 {
		return
	}
	s.compactPending()
	live := s.pending
	slices.SortFunc(live, func(a, b *slNode) int {
		switch {
		case a == b:
			return 0
		case a.less(b.pfx, b.key):
			return -1
		}
		return 1 // keys are unique
	})
	for _, n := range live {
		s.insert(n)
	}
	clear(s.pending)
	s.pending = s.pending[:0]
}

// compactPending drops removed nodes from pending, so a list that is never
// walked does not keep every key it ever removed.
func (s *skiplist) compactPending() {
	live := s.pending[:0]
	for _, n := range s.pending {
		if n.state == slPending {
			live = append(live, n)
		}
	}
	clear(s.pending[len(live):])
	s.pending, s.dead = live, 0
}

// insert links n, whose key is not in the list yet, into the list.
func (s *skiplist) insert(nn *slNode) {
	s.findGE(nn.key)
	l := s.randomLevel()
	if l > s.level {
		for i := s.level; i < l; i++ {
			s.update[i] = &s.head
		}
		s.level = l
	}
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
	nn.state = slLinked
}

func (s *skiplist) remove(k []byte) bool {
	n := s.index[string(k)]
	if n == nil {
		return false
	}
	delete(s.index, string(k))
	s.n--
	s.bytes -= int64(len(n.key)+len(n.value)) + nodeOverhead
	if n.state == slPending {
		n.state = slDead
		if s.dead++; s.dead > 64 && s.dead > len(s.pending)/2 {
			s.compactPending()
		}
		return true
	}
	s.findGE(k)
	for i := 0; i < len(n.next); i++ {
		s.update[i].next[i] = n.next[i]
	}
	if n.next[0] != nil {
		n.next[0].prev = n.prev
	}
	return true
}

// inRange appends to dst the nodes with keys in [start, end), linked or
// pending, in no particular order. It links nothing: deleting a range of
// staged writes (an expired segment) needs no order, and linking every
// pending node for it cost more than the deletes.
func (s *skiplist) inRange(start, end []byte, dst []*slNode) []*slNode {
	for n := s.findGE(start); n != nil && bytes.Compare(n.key, end) < 0; n = n.next[0] {
		dst = append(dst, n)
	}
	for _, n := range s.pending {
		if n.state == slPending && bytes.Compare(n.key, start) >= 0 && bytes.Compare(n.key, end) < 0 {
			dst = append(dst, n)
		}
	}
	return dst
}

// all yields every node, linked or pending, in no particular order: for
// applying staged writes, which needs no order.
func (s *skiplist) all(yield func(*slNode) bool) {
	for n := s.head.next[0]; n != nil; n = n.next[0] {
		if !yield(n) {
			return
		}
	}
	for _, n := range s.pending {
		if n.state == slPending && !yield(n) {
			return
		}
	}
}

// seekGE returns the first node with key >= k (the first node if k is nil).
func (s *skiplist) seekGE(k []byte) *slNode {
	s.link()
	if k == nil {
		return s.head.next[0]
	}
	return s.findGE(k)
}

// seekLT returns the last node with key < k (the last node if k is nil).
func (s *skiplist) seekLT(k []byte) *slNode {
	s.link()
	x := &s.head
	kp := prefixOf(k)
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil && (k == nil || nx.less(kp, k)); nx = x.next[i] {
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
	s.level, s.n, s.bytes = 1, 0, 0
	clear(s.index)
	clear(s.pending)
	s.pending, s.dead = s.pending[:0], 0
}

// keyPfx is the first 24 bytes of a key, zero-padded, as three big-endian
// words.
type keyPfx [3]uint64

func prefixOf(k []byte) keyPfx {
	var p keyPfx
	for i := range p {
		if len(k) >= 8 {
			p[i] = binary.BigEndian.Uint64(k)
			k = k[8:]
			continue
		}
		var b [8]byte
		copy(b[:], k)
		p[i] = binary.BigEndian.Uint64(b[:])
		break
	}
	return p
}

// less reports n.key < k, where kp is prefixOf(k). Zero padding sorts like
// the end of a key, so unequal prefixes order keys as bytes.Compare does;
// equal prefixes of keys that both have 24 bytes or more leave the rest to
// compare.
func (n *slNode) less(kp keyPfx, k []byte) bool {
	for i := range kp {
		if n.pfx[i] != kp[i] {
			return n.pfx[i] < kp[i]
		}
	}
	if len(n.key) >= len(kp)*8 && len(k) >= len(kp)*8 {
		return bytes.Compare(n.key[len(kp)*8:], k[len(kp)*8:]) < 0
	}
	return bytes.Compare(n.key, k) < 0
}
