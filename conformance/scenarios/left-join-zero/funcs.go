//go:build conformance

package main

import "strconv"

// Priced is "plays*price", "plays*?" without a price: the left join's
// missing side is nil, a price of 0 is a price.
func Priced(key string, plays int64, price *int64) string {
	return strconv.FormatInt(plays, 10) + "*" + optional(price)
}

// Paired is "left|right" with "?" for a missing side.
func Paired(key string, left, right *int64) string {
	return optional(left) + "|" + optional(right)
}

func optional(v *int64) string {
	if v == nil {
		return "?"
	}
	return strconv.FormatInt(*v, 10)
}
