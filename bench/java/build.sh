#!/usr/bin/env bash
# Builds the Kafka Streams benchmark program into target/classes and writes its runtime
# classpath to target/classpath.txt. Idempotent: does nothing when the sources, pom and
# Kafka version are unchanged since the last build. Tries Maven offline first (the local
# repository usually has everything) and goes online only when that fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version=4.4.0
if [[ -f "$root/scripts/kafka/VERSION" ]]; then
  version="$(tr -d '[:space:]' < "$root/scripts/kafka/VERSION")"
fi
cd "$here"
stamp="$( (echo "$version"; cat pom.xml; find src -type f | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1)"
if [[ -f target/stamp && -f target/classpath.txt && "$(cat target/stamp)" == "$stamp" ]]; then
  exit 0
fi
args=(-q -B "-Dkafka.version=$version" compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt)
if ! mvn -o "${args[@]}" > target.offline.log 2>&1; then
  mvn "${args[@]}"
fi
rm -f target.offline.log
echo "$stamp" > target/stamp
