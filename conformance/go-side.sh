#!/usr/bin/env bash
# The default Go side of the conformance suite (compare's -go-cmd): go-side.sh NAME.
# Generates scenario NAME into conformance/.run/NAME next to a copy of its funcs.go without
# the `conformance` build tag (a dot-directory: `go build ./...` never looks there, and the
# generator type-checks user functions in the output package), builds it, and runs its
# replay command with the sequence file on stdin and the outputs on stdout.
set -euo pipefail
name="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
src="conformance/scenarios/$name"
dst="conformance/.run/$name"
rm -rf "$dst"
mkdir -p "$dst"
cp "$src/streamgen.yaml" "$dst/"
# The scenario's own funcs.go, or the shared one its scenario.json names ("funcs": "x" is
# conformance/scenarios/_funcs/x.go).
funcs="$src/funcs.go"
shared=$(sed -n 's/^ *"funcs": *"\([a-z0-9-]*\)".*/\1/p' "$src/scenario.json")
[[ -n $shared ]] && funcs="conformance/scenarios/_funcs/$shared.go"
if [[ -f "$funcs" ]]; then
  sed '1{/^\/\/go:build/d}' "$funcs" > "$dst/funcs.go"
fi
# One generator binary for every scenario of a run; the Go build cache makes
# this cheap after the first. Signatures are checked by the Go compiler here.
mkdir -p bin
go build -o bin/streamgen ./cmd/streamgen
bin/streamgen generate -typecheck=false -spec "$dst/streamgen.yaml" >&2
go build -o "$dst/app" "./$dst"
# The record cache of the scenario (scenario.json's cache_bytes, or compare's -cache-bytes),
# which compare passes in STREAMGEN_CONFORMANCE_CACHE_BYTES.
exec "$dst/app" replay --sequences --strict --cache-bytes "${STREAMGEN_CONFORMANCE_CACHE_BYTES:-0}"
