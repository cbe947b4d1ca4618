package main

import "strconv"

// Total is "qty x price = total", or "qty x ?" without a price (the missing
// side of a left join of primitive values arrives as 0 here, and no price
// in the input is 0), as the twin's joiner.
func Total(_ string, qty int64, price int64) string {
	q := strconv.FormatInt(qty, 10)
	if price == 0 {
		return q + " x ?"
	}
	return q + " x " + strconv.FormatInt(price, 10) + " = " + strconv.FormatInt(qty*price, 10)
}
