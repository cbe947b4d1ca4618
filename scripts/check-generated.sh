#!/usr/bin/env bash
# Fails when any generated Go file is stale: every example and docs spec is
# checked with `streamgen check` (golden/ has its own test; conformance
# scenarios are generated fresh on every run). Prints the command that fixes it.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/streamgen ./cmd/streamgen
status=0
while IFS= read -r specfile; do
  dir=$(dirname "$specfile")
  if ! (cd "$dir" && ../$(printf '%s' "$dir" | sed 's#[^/]*#..#g')/bin/streamgen check -spec streamgen.yaml); then
    echo "stale: $dir — run: (cd $dir && go generate) or: make generate" >&2
    status=1
  fi
XX
exit $status
