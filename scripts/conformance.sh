#!/usr/bin/env bash
# The differential conformance suite: every scenario of conformance/scenarios
# runs through Kafka Streams' TopologyTestDriver (conformance/java, built
# with Maven from Maven Central) and through the generated Go app's replay,
# and the outputs are compared record for record. Ends with one line:
#   conformance: <S> scenarios, <N> sequences, <D> differences
# Arguments go to conformance/compare (e.g. -quick, -scenarios 'ss-*').
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=${CGO_ENABLED:-0}
exec go run ./conformance/compare "$@"
