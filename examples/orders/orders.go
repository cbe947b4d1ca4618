// Command orders is example (a): it reads orders, drops tombstones,
// upper-cases item names, logs each order and writes processed-orders.
//
// Build and try it:
//
//	go generate && go build -o orders . && ./orders replay < testdata/input.jsonl
package main

//go:generate go tool streamgen generate

import (
	"context"
	"log/slog"
	"strings"
)

// Announce is the app's on-start hook: it runs once when `run` starts,
// before any record is processed.
func Announce(ctx context.Context) error {
	slog.Info("orders app starting: dropping tombstones and upper-casing item names")
	return nil
}

// UpperOrder returns a copy of the order with upper-cased item names.
func UpperOrder(key string, value *Order) *Order {
	out := *value
	out.Items = make([]Item, len(value.Items))
	for i, it := range value.Items {
		it.Name = strings.ToUpper(it.Name)
		out.Items[i] = it
	}
	return &out
}

// LogOrder logs an order on its way out.
func LogOrder(key string, value *Order) {
	slog.Debug("processed order", "id", key, "user", value.UserID, "amount", value.Amount)
}
