// Command jsonschema-agg is the streamgen side of the interop scenario jsonschema-agg (interop/README.md).
package main

//go:generate go tool streamgen generate

// NewTotals starts a user's totals.
func NewTotals() *UserTotals { return &UserTotals{} }

// AddOrder adds one order to a user's totals; its Kafka Streams twin is
// JsonScenarios.addOrder (on the twin of jsonschema-agg too), which must compute the same fields the same way.
func AddOrder(key string, o *Order, agg *UserTotals) *UserTotals {
	out := *agg
	if out.Orders == 0 {
		out.FirstAt = o.PlacedAt
	}
	out.Orders++
	out.Total += o.Amount * float64(o.Qty)
	out.MaxQty = max(out.MaxQty, o.Qty)
	out.RefSum += o.Ref
	if o.Gift {
		out.Gifts++
	}
	out.LastAt = o.PlacedAt
	id := o.ID
	out.LastOrder = &id
	if o.Note != nil {
		notes := make(map[string]string, len(agg.Notes)+1)
		for k, v := range agg.Notes {
			notes[k] = v
		}
		notes[o.ID] = *o.Note
		out.Notes = notes
	}
	return &out
}
