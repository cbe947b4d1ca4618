#!/usr/bin/env bash
# Fails when any generated Go file is stale: every example and docs spec is
# checked with `streamgen check` (golden/ has its own test; conformance
# scenarios are generated fresh on every run). Prints the command that fixes it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
go build -o bin/streamgen ./cmd/streamgen
status=0
checked=0
while IFS= read -r specfile; do
  dir=$(dirname "$specfile")
  checked=$((checked + 1))
  if ! (cd "$dir" && "$root/bin/streamgen" check -spec streamgen.yaml); then
    echo "stale: $dir: run (cd $dir && go generate), or make generate" >&2
    status=1
  fi
done < <(find examples docs chaos bench/scenarios -name streamgen.yaml -not -path '*/testdata/*' 2>/dev/null | sort)
if [ "$checked" -eq 0 ]; then
  echo "check-generated: no spec found under examples/ or docs/" >&2
  exit 1
fi
[ "$status" -eq 0 ] && echo "check-generated: $checked specs, generated files fresh"
exit $status
