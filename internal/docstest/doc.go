// Package docstest keeps the user guide honest. Its tests check that
// docs/spec-reference.md names every key of spec/schema.json, that the
// runnable specs under docs/examples are freshly generated, build, and
// replay their committed input to their committed output, that the
// guide's relative links point at files that exist, that every spec is in
// streamgen fmt's layout, that the guide names only subcommands, flags and
// metrics the code has, and that README.md's walkthrough (streamgen init
// in an empty directory outside the module) works as written.
//
// To refresh an example's expected output after a deliberate change, run
//
//	go test ./internal/docstest -run TestExamplesReplay -update
//
// and review the diff of docs/examples/*/output.jsonl before committing.
package docstest
