// Command protobuf-join is the streamgen side of the interop scenario protobuf-join (interop/README.md).
package main

//go:generate go tool streamgen generate

// Enrich adds the user's profile to an order; user is nil when the table has no such user
// (a left join). Its Kafka Streams twin is ProtobufScenarios.enrich.
func Enrich(key string, o *Order, u *User) *EnrichedOrder {
	e := &EnrichedOrder{
		OrderID:  o.ID,
		UserID:   key,
		Total:    o.Amount * float64(o.Qty),
		Ref:      o.Ref,
		PlacedAt: o.PlacedAt,
		Note:     o.Note,
	}
	if u != nil {
		name, tier := u.Name, u.Tier
		e.UserName, e.Tier = &name, &tier
		e.Tags, e.Avatar = u.Tags, u.Avatar
	}
	return e
}
