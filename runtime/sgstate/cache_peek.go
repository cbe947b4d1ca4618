package sgstate

import (
	"bytes"
	"sort"
)

// Peek is Get for readers outside the task's processing, such as
// interactive queries: it returns the cached value (ok true with a nil value
// for a cached delete) without moving the entry in the LRU order, so a
// query never changes which entries the task's next writes evict, and so
// never changes what the task forwards or when.
func (n *NamedCache) Peek(key []byte) (value []byte, ok bool) {
	e := n.m[string(key)]
	if e == nil {
		return nil, false
	}
	return e.value, true
}

// PeekRange returns the cached entries with keys in [from, to] (nil bounds
// are open), sorted by key, without touching the LRU order. A nil value is
// a cached delete. The slices must not be modified; they stay valid (the
// cache never writes into them).
func (n *NamedCache) PeekRange(from, to []byte) (keys, values [][]byte) {
	type kv struct{ k, v []byte }
	var out []kv
	for _, e := range n.m {
		if from != nil && bytes.Compare(e.key, from) < 0 || to != nil && bytes.Compare(e.key, to) > 0 {
			continue
		}
		out = append(out, kv{e.key, e.value})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].k, out[j].k) < 0 })
	keys, values = make([][]byte, len(out)), make([][]byte, len(out))
	for i, e := range out {
		keys[i], values[i] = e.k, e.v
	}
	return keys, values
}
