// Command deadletter is example (f): payments whose bytes do not decode,
// or whose processing panics, are written to payments-dlq with the original
// bytes and error headers; good payments of 1000 or more go on to
// large-payments.
package main

//go:generate go tool streamgen generate

// IsLarge keeps payments of 1000 or more. A negative amount is a bug
// upstream: it panics, and the dead-letter policy catches it.
func IsLarge(key string, p *Payment) bool {
	if p.Amount < 0 {
		panic("negative payment amount")
	}
	return p.Amount >= 1000
}
