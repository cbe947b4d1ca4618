# Entry points for users and CI. Every target is safe to run on a fresh clone:
# scripts install what they need (Go modules, Kafka jars via Maven) and cache it.
GO ?= go
export CGO_ENABLED ?= 0

.PHONY: demo test generate check-generated build vet fuzz conformance bench bench-inproc kafka-fetch chaos interop

## demo: generate the orders example and run it end to end on the embedded broker
demo:
	bash scripts/demo.sh

## test: every test (unit, golden, fuzz smoke, integration on a real Kafka broker, conformance subset)
test:
	bash scripts/test.sh

## generate: regenerate the generated files of every streamgen.yaml in the repository (the golden driver)
generate:
	$(GO) test ./golden -run '^TestGolden$$' -count=1 -update

## check-generated: fail when generated files are stale
check-generated:
	bash scripts/check-generated.sh

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...

## fuzz: run every fuzz target longer than make test does (FUZZTIME, default 60s each)
fuzz:
	bash scripts/fuzz.sh $${FUZZTIME:-60s}

## conformance: the full differential suite against Kafka Streams
conformance:
	bash scripts/conformance.sh

## bench: streamgen side by side with Kafka Streams, Faust and the raw client on one local broker;
## prints the ratios, writes docs/benchmarks.md and bench/results.json (ARGS='-records 1000000' scales up)
bench:
	bash scripts/bench.sh $(ARGS)

## bench-inproc: the in-process benchmarks (serdes side by side with msgpack/v5 and tinylib/msgp, stores, operators)
bench-inproc:
	$(GO) test -run '^$$' -bench . -benchmem ./bench/... ./runtime/sgstream/ ./runtime/sgstate/

## interop: Java producer -> streamgen app -> Java consumer, and the same topology in Kafka Streams,
## per format on a real broker and registry; ends with `interop: <S> scenarios, <N> records, <D> differences`
interop:
	bash scripts/interop.sh $(ARGS)

## chaos: exactly-once under kill -9 (CHAOS_FLAGS, e.g. "-runs 20" or "-broker-faults 1"); ends with the summary line
chaos:
	bash scripts/chaos.sh $(CHAOS_FLAGS)

kafka-fetch:
	bash scripts/kafka.sh fetch
