// Command joins is example (e): a stream-stream join of orders and
// payments, and stream-table inner and left joins of orders with users.
package main

//go:generate go tool streamgen generate

// JoinPayment pairs an order with its payment.
func JoinPayment(key string, order *Order, payment *Payment) *PaidOrder {
	return &PaidOrder{OrderID: key, Ordered: order.Amount, Paid: payment.Amount}
}

// Enrich adds the user's name and country to an order; user is nil in a
// left join when the user is unknown.
func Enrich(key string, order *Order, user *User) *EnrichedOrder {
	e := &EnrichedOrder{OrderID: order.ID, Amount: order.Amount}
	if user != nil {
		name, country := user.Name, user.Country
		e.UserName, e.Country = &name, &country
	}
	return e
}
