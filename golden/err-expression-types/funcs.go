//go:build goldenfail

// This file is only type-checked by the golden test (build tag goldenfail).
// The spec's expressions use a package missing from imports: and return an
// int where the topology wants an int64; generation must report both at
// the spec lines, not as errors in generated code.
package errexprtypes
