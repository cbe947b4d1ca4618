package sgstate

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func randKey(r *rand.Rand) []byte {
	k := make([]byte, r.IntN(12))
	for i := range k {
		k[i] = []byte{0, 1, 0xFF, 'a', 'b'}[r.IntN(5)]
	}
	return k
}

// Escaped keys keep bytewise order, are prefix-free and decode back.
func TestEscapedKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		a, b := randKey(r), randKey(r)
		ea, eb := appendEscaped(nil, a), appendEscaped(nil, b)
		if c1, c2 := bytes.Compare(a, b), bytes.Compare(ea, eb); c1 != c2 {
			t.Fatalf("order of %x,%x = %d, escaped %d", a, b, c1, c2)
		}
		if !bytes.Equal(a, b) && (bytes.HasPrefix(ea, eb) || bytes.HasPrefix(eb, ea)) {
			t.Fatalf("escaped %x and %x prefix each other", a, b)
		}
		got, rest, err := readEscaped(nil, append(ea, 7))
		if err != nil || !bytes.Equal(got, a) || !bytes.Equal(rest, []byte{7}) {
			t.Fatalf("decode %x = %x %x %v", a, got, rest, err)
		}
	}
}

// The skiplist agrees with a sorted slice under random inserts, overwrites
// and removals, forwards and backwards. Seeks in between link the pending
// nodes, so removals hit both linked and pending nodes.
func TestSkiplistAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := newSkiplist()
	ref := map[string]string{}
	for i := 0; i < 5000; i++ {
		k := randKey(r)
		if r.IntN(100) == 0 {
			s.seekGE(k)
		}
		if r.IntN(3) == 0 {
			if s.remove(k) != (ref[string(k)] != "") {
				t.Fatalf("remove %x disagrees", k)
			}
			delete(ref, string(k))
		} else {
			v := []byte{byte(i), 1}
			s.set(cloneBytes(k), v, false)
			ref[string(k)] = string(v)
		}
	}
	keys := make([]string, 0, len(ref))
	for k := range ref {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var fwd, back []string
	for n := s.seekGE(nil); n != nil; n = n.next[0] {
		fwd = append(fwd, string(n.key))
	}
	for n := s.seekLT(nil); n != nil; n = n.prev {
		back = append(back, string(n.key))
	}
	slices.Reverse(back)
	if !slices.Equal(fwd, keys) || !slices.Equal(back, keys) || s.n != len(keys) {
		t.Fatalf("skiplist order differs: %d/%d/%d keys", len(fwd), len(back), len(keys))
	}
	for i := 0; i < 1000; i++ {
		k := randKey(r)
		i := sortSearch(keys, string(k))
		n := s.seekGE(k)
		if (i == len(keys)) != (n == nil) || (n != nil && string(n.key) != keys[i]) {
			t.Fatalf("seekGE(%x) wrong", k)
		}
	}
}

func sortSearch(keys []string, k string) int {
	i, _ := slices.BinarySearch(keys, k)
	return i
}
