// Command myorders is a streamgen application: streamgen.yaml is its
// topology, this file the functions the topology names, and streamgen_*.go
// (written by go generate) the typed records, serdes and wiring.
package main

//go:generate go tool streamgen generate

import (
	"context"
	"log/slog"
	"strings"
)

// Announce runs once when `run` starts, before any record is processed.
func Announce(ctx context.Context) error {
	slog.Info("myorders starting: dropping tombstones, upper-casing item names, counting orders per user")
	return nil
}

// UpperOrder upper-cases the item names of an order.
func UpperOrder(key string, value *Order) *Order {
	out := *value
	out.Items = make([]Item, len(value.Items))
	for i, it := range value.Items {
		it.Name = strings.ToUpper(it.Name)
		out.Items[i] = it
	}
	return &out
}

// LogOrder logs each processed order at debug level (--log-level debug).
func LogOrder(key string, value *Order) {
	slog.Debug("processed order", "id", key, "user", value.UserID, "amount", value.Amount)
}
