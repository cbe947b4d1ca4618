#!/usr/bin/env bash
# make demo: generate the orders example, build it, and run it end to end on
# the embedded broker (franz-go's kfake, in process): sample orders are
# produced, the topology runs with exactly-once and Pebble state in a
# temporary folder, and the processed output is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=${CGO_ENABLED:-0}
echo "== generating the orders example (go generate)"
(cd examples/orders && go generate)
echo "== building"
mkdir -p bin
go build -o bin/orders ./examples/orders
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
echo "== running on the embedded broker (exactly-once, Pebble state in a temporary folder)"
bin/orders run --embedded --state-dir "$state" \
  --input examples/orders/testdata/input.jsonl \
  --print processed-orders --until-idle 2s --log-level warn
