// Package javapq is java.util.PriorityQueue's binary heap, step for step: a
// port of a Kafka Streams application that ranks with a PriorityQueue (such
// as Confluent's TopArticlesExample) writes the elements that compare equal
// in the order the heap leaves them, so matching its output needs the same
// sift-up, sift-down and removeAt, not just any heap. A queue is its heap
// array (what PriorityQueue iterates and Confluent's PriorityQueueSerde
// writes); functions return the new array and leave their argument alone,
// because it may be a value a store still holds.
package javapq

// Offer is PriorityQueue.offer (add).
func Offer[T any](h []T, x T, cmp func(a, b T) int) []T {
	out := append(append(make([]T, 0, len(h)+1), h...), x)
	siftUp(out, len(out)-1, x, cmp)
	return out
}

// Remove is PriorityQueue.remove(o): the first element equal to x, by
// removeAt. It returns h's copy unchanged when there is none.
func Remove[T comparable](h []T, x T, cmp func(a, b T) int) []T {
	out := append([]T(nil), h...)
	for i := range out {
		if out[i] == x {
			return removeAt(out, i, cmp)
		}
	}
	return out
}

// Poll is PriorityQueue.poll: the head and the rest; ok is false when h is
// empty.
func Poll[T any](h []T, cmp func(a, b T) int) (head T, rest []T, ok bool) {
	if len(h) == 0 {
		return head, h, false
	}
	out := append([]T(nil), h...)
	head, last := out[0], out[len(out)-1]
	out = out[:len(out)-1]
	if len(out) > 0 {
		siftDown(out, 0, last, cmp)
	}
	return head, out, true
}

// siftUp is siftUpUsingComparator: x rises from k while it sorts before its
// parent.
func siftUp[T any](h []T, k int, x T, cmp func(a, b T) int) {
	for k > 0 {
		parent := (k - 1) / 2
		if cmp(x, h[parent]) >= 0 {
			break
		}
		h[k] = h[parent]
		k = parent
	}
	h[k] = x
}

// siftDown is siftDownUsingComparator; it returns where x landed.
func siftDown[T any](h []T, k int, x T, cmp func(a, b T) int) int {
	n := len(h)
	for half := n / 2; k < half; {
		child := 2*k + 1
		if right := child + 1; right < n && cmp(h[child], h[right]) > 0 {
			child = right
		}
		if cmp(x, h[child]) <= 0 {
			break
		}
		h[k] = h[child]
		k = child
	}
	h[k] = x
	return k
}

// removeAt is PriorityQueue.removeAt: the last element fills the gap and
// sifts down, or up when it did not move down.
func removeAt[T any](h []T, i int, cmp func(a, b T) int) []T {
	s := len(h) - 1
	moved := h[s]
	h = h[:s]
	if s == i {
		return h
	}
	if siftDown(h, i, moved, cmp) == i {
		siftUp(h, i, moved, cmp)
	}
	return h
}
