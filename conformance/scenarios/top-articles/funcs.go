//go:build conformance

package main

import (
	"strings"

	"github.com/streamgen/streamgen/internal/javapq"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// User functions of top-articles, Confluent's TopArticlesLambdaExample. Each has a twin in
// conformance/java/src/main/java/io/streamgen/conformance/WindowedKeyScenarios.java. The queue
// functions use java.util.PriorityQueue's heap operations (internal/javapq), because the
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
	return &ViewQueue{Heap: javapq.Offer(q.Heap, *stats, byCountDesc)}
}

// RemoveFromQueue is queue.remove(record).
func RemoveFromQueue(key sgstream.Windowed[string], stats *PageViewStats, q *ViewQueue) *ViewQueue {
	return &ViewQueue{Heap: javapq.Remove(q.Heap, *stats, byCountDesc)}
}

// TopPages polls the 100 most viewed pages, one per line.
func TopPages(key sgstream.Windowed[string], q *ViewQueue) string {
	var sb strings.Builder
	h := q.Heap
	for i := 0; i < 100; i++ {
		top, rest, ok := javapq.Poll(h, byCountDesc)
		if !ok {
			break
		}
		sb.WriteString(top.Page)
		sb.WriteString("\n")
		h = rest
	}
	return sb.String()
}

// byCountDesc is the example's comparator, (int) (o2.count - o1.count).
func byCountDesc(a, b PageViewStats) int { return int(int32(b.Count - a.Count)) }
