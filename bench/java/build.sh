#!/usr/bin/env bash
# Builds the Kafka Streams benchmark program into target/classes and writes its runtime
# classpath to target/classpath.txt (scripts/mvn-build.sh: idempotent, offline first).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../../scripts/mvn-build.sh" "$here"
