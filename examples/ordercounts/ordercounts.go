// Command ordercounts is example (b): the number of orders per user, kept
// in a table backed by the changelog of store order-counts-store and
// written to order-counts on every update.
package main

//go:generate go tool streamgen generate
