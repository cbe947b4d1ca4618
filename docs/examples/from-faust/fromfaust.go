// Command fromfaust is the Faust agent of docs/coming-from-kafka-streams.md
// compiled from a spec. It has no Go logic of its own: the re-keying is an
// inline expression.
package main

//go:generate go tool streamgen generate
