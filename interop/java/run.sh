#!/usr/bin/env bash
# Runs the Java side of the interop suite (building it first if needed):
#   run.sh produce|streams|consume BROKERS REGISTRY_URL [STATE_DIR] SCENARIO...
# (io.streamgen.interop.Main says what each does). REGISTRY_URL is "-" without a registry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/build.sh" >&2 # standard output is the consumer's alone
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 ${INTEROP_JAVA_OPTS:-} \
  -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" io.streamgen.interop.Main "$@"
