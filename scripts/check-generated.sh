#!/usr/bin/env bash
# Fails when any generated Go file is stale. The one freshness check of the
# repository is the golden driver, TestGolden in golden/golden_test.go: it
# regenerates every streamgen.yaml in memory (goldens, examples, docs, chaos,
# bench, gen/testdata; conformance scenarios must generate) and compares with
# the committed files. This wrapper runs it alone (-short: without compiling
# gen/testdata/alltypes, which `go test ./...` does) and prints the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! go test -count=1 -short -run '^TestGolden$' ./golden; then
  echo "check-generated: generated files are stale or fail to generate; run: make generate" >&2
  exit 1
fi
echo "check-generated: generated files fresh"
