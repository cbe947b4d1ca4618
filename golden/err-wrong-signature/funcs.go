//go:build goldenfail

// This file is only type-checked by the golden test (build tag goldenfail):
// its Shout takes an int where the topology passes a string, and NotEmpty
// is missing, so generation must fail with both reported at the spec lines.
package errwrongsig

func Shout(key string, value int) string { return "" }
