// Command ordersummary is example (c): per user and hour, the number of
// orders, their total and the largest, in a window store that keeps 24
// hours of windows.
package main

//go:generate go tool streamgen generate

// NewSummary starts an empty summary.
func NewSummary() *OrderSummary { return &OrderSummary{} }

// AddOrder folds one order into the summary.
func AddOrder(key string, value *Order, agg *OrderSummary) *OrderSummary {
	out := *agg
	out.Orders++
	out.Total += value.Amount
	if value.Amount > out.Largest {
		out.Largest = value.Amount
	}
	id := value.ID
	out.LastOrder = &id
	return &out
}
