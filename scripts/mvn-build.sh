#!/usr/bin/env bash
# mvn-build.sh DIR builds the Maven project in DIR (the Kafka Streams side of the benchmarks,
# bench/java, or of the conformance suite, conformance/java) into DIR/target/classes against
# the Kafka version of scripts/kafka/VERSION, and writes its runtime classpath to
# DIR/target/classpath.txt. Idempotent: does nothing when the sources, pom and Kafka version
# are unchanged since the last build. Tries Maven offline first (the local repository usually
# has everything) and goes online only when that fails. Everything Maven prints goes to
# standard error: a caller's standard output may be a protocol (conformance's `run.sh list` is
# one scenario name a line), and Maven 3.8 prints ANSI colour resets to standard output even
# with -q, which on a cold machine glued themselves to the first scenario name.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version=4.4.0
if [[ -f "$root/scripts/kafka/VERSION" ]]; then
  version="$(tr -d '[:space:]' < "$root/scripts/kafka/VERSION")"
fi
cd "$1"
stamp="$( (echo "$version"; cat pom.xml; find src -type f | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1)"
if [[ -f target/stamp && -f target/classpath.txt && "$(cat target/stamp)" == "$stamp" ]]; then
  exit 0
fi
args=(-q -B -Dstyle.color=never "-Dkafka.version=$version" compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt)
if ! mvn -o "${args[@]}" > target.offline.log 2>&1; then
  mvn "${args[@]}" >&2
fi
rm -f target.offline.log
echo "$stamp" > target/stamp
