#!/usr/bin/env bash
# Runs every fuzz target in the module for the given time each (default 5s).
# make test runs it briefly; make fuzz runs it longer.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-5s}
count=0
while IFS= read -r line; do
  pkg=${line%% *}
  target=${line#* }
  echo "fuzz: $pkg $target ($fuzztime)"
  go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"
  count=$((count + 1))
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
  dir=$(dirname "$f")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //' | while read -r fn; do
    echo "./${dir#./} $fn"
  done
done)
if [ "$count" -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
echo "fuzz: $count targets ran without a crash"
