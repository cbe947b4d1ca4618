// Package spec is streamgen's frontend: it parses a spec file (YAML, format
// version 1, described in docs/spec-reference.md), validates it, and resolves
// it into the immutable IR in ir.go that the generator consumes.
//
// The package carries no compatibility promise: its Go API may change in any
// release. The contract with users is the spec format itself (and its JSON
// Schema, SchemaJSON), not this package's types or functions.
//
// Errors are reported as Diagnostics: every problem found in one run, each
// with the file:line:col of the spec text it concerns, sorted by position.
// Follow-on errors are suppressed: once an element fails to resolve, checks
// that depend on it are skipped rather than reported again.
package spec
