// Package golden holds the generator's golden cases: one directory per case
// with a spec (streamgen.yaml), the user's Go functions and the generated Go
// files, compiled and vetted with the module; or, for a case that must fail,
// the expected diagnostics in stderr.txt.
//
// golden_test.go is also the repository's one freshness check: TestGolden
// walks every streamgen.yaml in the repository (goldens, examples, docs
// examples, chaos, bench, gen/testdata; conformance scenarios must generate)
// and compares the committed generated files with the generator's output.
// `make generate` (go test ./golden -run TestGolden -update) rewrites them
// all. No test of this package imports a generated package, so that
// regeneration builds even when a runtime or generator change has left the
// committed generated code uncompilable; the check that links golden/full
// to compare describe with the runtime lives in golden/runtimedescribe.
package golden
