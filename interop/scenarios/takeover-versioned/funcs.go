package main

import "strconv"

// Total is "qty x price = total", or "qty x ?" without a price (the
// missing side of the left join is nil), as the twin's joiner.
func Total(_ string, qty int64, price *int64) string {
	q := strconv.FormatInt(qty, 10)
	if price == nil {
		return q + " x ?"
	}
	return q + " x " + strconv.FormatInt(*price, 10) + " = " + strconv.FormatInt(qty**price, 10)
}
