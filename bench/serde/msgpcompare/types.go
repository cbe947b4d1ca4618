// Package msgpcompare holds the benchmark record of bench/serde for the
// two peers streamgen is measured against: msgpack/v5 (reflection, through
// the msgpack struct tags) and tinylib/msgp (generated code, through the msg
// tags). Tags are the spec field names, so msgpack/v5's encoding of Order is
// also what a name-keyed writer produces for streamgen's decoder.
package msgpcompare

import "time"

//go:generate go run github.com/tinylib/msgp@v1.6.5 -tests=false -file types.go -o types_gen.go

// Order mirrors bench/serde.Order.
type Order struct {
	ID       string           `msg:"id" msgpack:"id"`
	UserID   string           `msg:"user_id" msgpack:"user_id"`
	Amount   float64          `msg:"amount" msgpack:"amount"`
	PlacedAt time.Time        `msg:"placed_at" msgpack:"placed_at"`
	Items    []Item           `msg:"items" msgpack:"items"`
	Note     *string          `msg:"note" msgpack:"note"`
	Tags     map[string]int64 `msg:"tags" msgpack:"tags"`
	Status   int32            `msg:"status" msgpack:"status"`
	Shipping Address          `msg:"shipping" msgpack:"shipping"`
	Version  int64            `msg:"version" msgpack:"version"`
}

// Item mirrors bench/serde.Item.
type Item struct {
	SKU   string  `msg:"sku" msgpack:"sku"`
	Qty   int32   `msg:"qty" msgpack:"qty"`
	Price float64 `msg:"price" msgpack:"price"`
}

// Address mirrors bench/serde.Address.
type Address struct {
	Street string `msg:"street" msgpack:"street"`
	City   string `msg:"city" msgpack:"city"`
	Zip    string `msg:"zip" msgpack:"zip"`
}
