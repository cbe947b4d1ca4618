// Package golden holds the generator's golden cases: one directory per case
// with a spec (streamgen.yaml), the user's Go functions and the generated Go
// files, compiled and vetted with the module; or, for a case that must fail,
// the expected diagnostics in stderr.txt. golden_test.go checks them and
// rewrites them with `go test ./golden -update`. The examples/ directories
// are checked the same way, in place.
package golden
