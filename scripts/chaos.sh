#!/usr/bin/env bash
# The exactly-once chaos harness (chaos/README.md, docs/chaos.md) on a broker of its own.
#
# Usage: scripts/chaos.sh [chaos flags...]     e.g. scripts/chaos.sh -runs 20 -seed 42
#        scripts/chaos.sh -broker-faults 1     kill -9 and restart the broker mid-run too
#
# Starts (or reuses, when it is already running) a single-node broker through scripts/kafka.sh
# in STREAMGEN_CHAOS_KAFKA_DIR (default ${TMPDIR:-/tmp}/streamgen-chaos-kafka), runs
# `go run ./chaos/cmd/chaos` against it and stops the broker afterwards. Safe to run again:
# every run recreates its topics. The last line printed is the summary:
#   chaos: <R> runs, <K> kills, <I> input records, <L> lost, <D> duplicated, <F> failed runs
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${STREAMGEN_CHAOS_KAFKA_DIR:-${TMPDIR:-/tmp}/streamgen-chaos-kafka}
bash scripts/kafka.sh fetch
line=$(bash scripts/kafka.sh start "$dir")
brokers=${line#STREAMGEN_KAFKA_BROKERS=}
trap 'bash scripts/kafka.sh stop "$dir" || true' EXIT
mkdir -p bin
go build -o bin/chaos ./chaos/cmd/chaos
bin/chaos -brokers "$brokers" -broker-dir "$dir" "$@"
