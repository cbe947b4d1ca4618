#!/usr/bin/env bash
# The interop suite (make interop): every scenario of interop/scenarios on a real Kafka
# broker and, when a scenario uses a registry format (avro, protobuf, jsonschema), a real
# schema registry; arguments go to `go run ./interop/run` (-scenarios GLOB, -quick, -keep).
# Uses STREAMGEN_KAFKA_BROKERS and STREAMGEN_REGISTRY_URL when set, else starts (and stops)
# its own broker (scripts/with-kafka.sh) and registry (scripts/registry.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z ${STREAMGEN_REGISTRY_URL:-} ]] &&
	grep -lqE '"(avro|protobuf|jsonschema)"' interop/scenarios/*/scenario.json 2>/dev/null; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/streamgen-registry.XXXXXX")
	trap 'bash scripts/registry.sh stop "$dir"; rm -rf "$dir"' EXIT
	line=$(bash scripts/registry.sh start "$dir")
	export STREAMGEN_REGISTRY_URL=${line#STREAMGEN_REGISTRY_URL=}
fi
bash scripts/with-kafka.sh go run ./interop/run "$@"
