// Package e2e holds the acceptance tests of generated applications on a real
// Kafka broker: every example's `run` against its `replay`, three instances
// of one application in a group under exactly-once, a kill -9 restart
// that restores only the changelog tail, and the produce and consume
// commands; the registry formats' tests (testdata/registryapp) also need
// the real schema registry, which scripts/with-kafka.sh starts. It has no
// non-test code.
//
// The examples' topic names are fixed by their specs, so these tests run one
// after another (never t.Parallel) and each recreates the topics it uses.
// Run them with a broker:
//
//	scripts/with-kafka.sh go test ./internal/e2e/
//
// The figures of docs/benchmarks-runtime.md come from
//
//	STREAMGEN_E2E_MEASURE=1 scripts/with-kafka.sh go test ./internal/e2e/ -run TestMeasure -v -timeout 30m
package e2e
