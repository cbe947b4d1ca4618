#!/usr/bin/env bash
# Fails when any generated Go file is stale: every directory holding a
# streamgen.yaml outside golden/ is checked with `streamgen check` (golden/
# has its own test). Prints the command that fixes it.
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
done < <(find examples conformance/scenarios docs -name streamgen.yaml -not -path '*/testdata/*' 2>/dev/null | sort)
exit $status
