//go:build conformance

package main

import (
	"strconv"
)

// User functions of the scenario. Each has a twin in conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java
// that must compute exactly the same thing.

func label(i *Info) string {
	if i == nil {
		return "null"
	}
	return i.Label
}

func OrderProduct(value *Order) string { return value.Product }

func OrderWithProduct(key string, order *Order, product *Info) string {
	return strconv.FormatInt(order.Qty, 10) + "x" + label(product)
}
