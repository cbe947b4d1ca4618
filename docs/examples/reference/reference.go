// Command reference is the annotated spec of docs/spec-reference.md, built
// and replayed like every spec the guide shows.
package main

//go:generate go tool streamgen generate

import (
	"context"
	"strings"

	"github.com/streamgen/streamgen/runtime/sgstate"
)

// Announce is the app's on_start hook.
func Announce(ctx context.Context) error { return nil }

// UpperOrder upper-cases the names of an order's items.
func UpperOrder(key string, value *Order) *Order {
	out := *value
	out.Items = make([]Item, len(value.Items))
	for i, it := range value.Items {
		it.SKU = strings.ToUpper(it.SKU)
		out.Items[i] = it
	}
	return &out
}

// LogOrder is a side effect (peek).
func LogOrder(key string, value *Order) {}

// NewDedupStore is the user-written store of the spec's stores section.
func NewDedupStore() sgstate.Store { return sgstate.NewMemoryKeyValue("dedup") }
