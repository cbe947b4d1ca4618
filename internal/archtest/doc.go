// Package archtest holds the test that keeps the package layout honest:
// imports point one way, from the generator to the spec and from generated
// code to the runtime, never back. It has no non-test code.
package archtest
