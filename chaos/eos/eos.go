// Command eos is the exactly-once test application of the chaos harness
// (../README.md): Kafka Streams' EOS system-test topology compiled by
// streamgen. Its logic is all in streamgen.yaml; this file only asks for
// the generated code.
package main

//go:generate go tool streamgen generate
