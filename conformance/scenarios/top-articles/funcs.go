//go:build conformance

package main

import (
	"strings"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// User functions of top-articles, Confluent's TopArticlesLambdaExample. Each has a twin in
// conformance/java/src/main/java/io/streamgen/conformance/WindowedKeyScenarios.java. The queue
// functions reproduce java.util.PriorityQueue's heap operations step for step, because the
// order of pages with equal counts is the heap's, and the output shows it.

// IsArticle keeps pages whose flags say ARTICLE.
func IsArticle(key string, view *PageView) bool {
	return view.Flags != nil && strings.Contains(*view.Flags, "ARTICLE")
}

// PageAndIndustry keys a view by (page, industry), with the user made the same for all.
func PageAndIndustry(key string, view *PageView) (*PageView, *PageView) {
	clone := &PageView{User: "user", Page: view.Page, Industry: view.Industry}
	return clone, clone
}

// WindowedIndustry re-keys a windowed (page, industry) count by its industry, keeping the
// window, with the page and count in the value.
func WindowedIndustry(key sgstream.Windowed[*PageView], count int64) (sgstream.Windowed[string], *PageViewStats) {
	k := sgstream.Windowed[string]{Key: key.Key.Industry, Start: key.Start, End: key.End}
	return k, &PageViewStats{User: "user", Page: key.Key.Page, Industry: key.Key.Industry, Count: count}
}

// EmptyQueue is new PriorityQueue<>(comparator).
func EmptyQueue() *ViewQueue { return &ViewQueue{} }

// AddToQueue is queue.add(record).
func AddToQueue(key sgstream.Windowed[string], stats *PageViewStats, q *ViewQueue) *ViewQueue {
	h := append(append([]PageViewStats(nil), q.Heap...), *stats)
	siftUp(h, len(h)-1, *stats)
	return &ViewQueue{Heap: h}
}

// RemoveFromQueue is queue.remove(record): the first equal element, by PriorityQueue.removeAt.
func RemoveFromQueue(key sgstream.Windowed[string], stats *PageViewStats, q *ViewQueue) *ViewQueue {
	h := append([]PageViewStats(nil), q.Heap...)
	for i := range h {
		if h[i] == *stats {
			return &ViewQueue{Heap: removeAt(h, i)}
		}
	}
	return &ViewQueue{Heap: h}
}

// TopPages polls the 100 most viewed pages, one per line.
func TopPages(key sgstream.Windowed[string], q *ViewQueue) string {
	h := append([]PageViewStats(nil), q.Heap...)
	var sb strings.Builder
	for i := 0; i < 100 && len(h) > 0; i++ {
		top := h[0]
		last := h[len(h)-1]
		h = h[:len(h)-1]
		if len(h) > 0 {
			siftDown(h, 0, last)
		}
		sb.WriteString(top.Page)
		sb.WriteString("\n")
	}
	return sb.String()
}

// byCountDesc is the example's comparator, (int) (o2.count - o1.count).
func byCountDesc(a, b PageViewStats) int { return int(int32(b.Count - a.Count)) }

// siftUp is PriorityQueue.siftUpUsingComparator: x moves up from k.
func siftUp(h []PageViewStats, k int, x PageViewStats) {
	for k > 0 {
		parent := (k - 1) / 2
		if byCountDesc(x, h[parent]) >= 0 {
			break
		}
		h[k] = h[parent]
		k = parent
	}
	h[k] = x
}

// siftDown is PriorityQueue.siftDownUsingComparator; it returns where x landed.
func siftDown(h []PageViewStats, k int, x PageViewStats) int {
	n := len(h)
	for half := n / 2; k < half; {
		child := 2*k + 1
		if right := child + 1; right < n && byCountDesc(h[child], h[right]) > 0 {
			child = right
		}
		if byCountDesc(x, h[child]) <= 0 {
			break
		}
		h[k] = h[child]
		k = child
	}
	h[k] = x
	return k
}

// removeAt is PriorityQueue.removeAt: the last element fills the gap, sifted down, or up when
// it did not move down.
func removeAt(h []PageViewStats, i int) []PageViewStats {
	s := len(h) - 1
	moved := h[s]
	h = h[:s]
	if s == i {
		return h
	}
	if siftDown(h, i, moved) == i {
		siftUp(h, i, moved)
	}
	return h
}
