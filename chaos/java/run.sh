#!/usr/bin/env bash
# Runs the chaos/eos topology on Kafka Streams (io.streamgen.chaos.EosApp), building it first if
# needed. It takes the flags the chaos harness gives a streamgen instance (`run --brokers ...
# --standby-replicas N`), so `go run ./chaos/cmd/chaos -kstreams` plays the same schedule on it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/../../scripts/mvn-build.sh" "$here" >&2
exec java -XX:+UseSerialGC ${CHAOS_JAVA_OPTS:-} \
  -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" io.streamgen.chaos.EosApp "$@"
