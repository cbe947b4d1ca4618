#!/usr/bin/env bash
# Runs the harness (building it first if needed): run.sh list | run.sh run DIR (NAME IN OUT)...
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/build.sh" >&2 # standard output is the harness's alone
exec java -XX:+UseSerialGC ${CONFORMANCE_JAVA_OPTS:-} -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" \
  io.streamgen.conformance.Harness "$@"
