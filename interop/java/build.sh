#!/usr/bin/env bash
# Builds the Java side of the interop suite: compiles it into target/classes and writes its
# runtime classpath to target/classpath.txt (scripts/mvn-build.sh: idempotent, offline first,
# Maven's output on standard error, since run.sh's standard output is the consumer's lines).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../../scripts/mvn-build.sh" "$here"
