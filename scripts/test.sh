#!/usr/bin/env bash
# The whole test suite: what `make test` and CI run. Under CI=true nothing
# that needs a broker or a tool is skipped: a missing one fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=${CGO_ENABLED:-0}
step() { printf '\n== %s\n' "$*"; }

step "modules"
go mod download

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' | grep -v '^conformance/java/') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi

step "specs are formatted (streamgen fmt -d on every streamgen.yaml)"
go run ./cmd/streamgen fmt -d $(git ls-files '*streamgen.yaml')

step "build and vet"
go build ./...
go vet ./...

step "generated files are fresh"
bash scripts/check-generated.sh

step "chromium (headless browser for the live page's test)"
# Under CI=true a Chromium that cannot be installed fails the run; elsewhere
# the browser tests skip without it.
if ! bash scripts/chromium.sh; then
  [ "${CI:-}" = true ] && exit 1
  echo "chromium not installed: the browser tests will skip" >&2
fi

step "go test (real Kafka broker for the integration tests)"
bash scripts/with-kafka.sh go test -count=1 -timeout 20m ./...

step "fuzz smoke"
bash scripts/fuzz.sh 5s smoke

if [ -f scripts/conformance.sh ]; then
  step "conformance (quick subset against Kafka Streams)"
  bash scripts/conformance.sh -quick
fi
