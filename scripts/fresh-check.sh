#!/usr/bin/env bash
# Runs .ci/run (CI=true) as a fresh machine would: in a clean clone of HEAD,
# with empty Go module and build caches, an empty GOPATH, an empty Maven
# repository and an empty broker/tool cache, all in one temporary directory.
# The user's own caches are neither read nor touched. Prints the wall time of
# each step (the `== step` lines of scripts/test.sh) and the total; exits with
# .ci/run's status.
#
#   bash scripts/fresh-check.sh          # the temporary directory is removed afterwards
#   bash scripts/fresh-check.sh -keep    # ... or kept, with the full log in it
#
# Commit first: the clone is of HEAD, not of the working tree. The first run
# downloads every Go module, Kafka Streams and its Maven plugins, and the
# Kafka broker: it needs the network, and takes long on a small machine.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
keep=false
[[ "${1:-}" == -keep ]] && keep=true
tmp="$(mktemp -d "${TMPDIR:-/tmp}/streamgen-fresh.XXXXXX")"
cleanup() {
  if $keep; then
    echo "fresh-check: kept $tmp (log: $tmp/log)"
  else
    chmod -R u+w "$tmp" 2>/dev/null || true
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

git clone -q --no-local "$repo" "$tmp/src"
mkdir -p "$tmp/gomodcache" "$tmp/gocache" "$tmp/gopath" "$tmp/m2" "$tmp/xdg"
export GOMODCACHE="$tmp/gomodcache" GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw" # so that the module cache can be removed
export XDG_CACHE_HOME="$tmp/xdg" STREAMGEN_KAFKA_CACHE="$tmp/xdg/streamgen/kafka"
export MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }-Dmaven.repo.local=$tmp/m2"
export CI=true

# timed copies each line through and, at every "== step" line and at the
# end, appends the previous step's seconds to $tmp/times.
timed() {
  local cur="start" t0=$SECONDS line
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [[ "$line" == "== "* ]]; then
      printf '%6ds  %s\n' $((SECONDS - t0)) "$cur" >> "$tmp/times"
      cur="${line#== }" t0=$SECONDS
    fi
  done
  printf '%6ds  %s\n' $((SECONDS - t0)) "$cur" >> "$tmp/times"
}

start=$SECONDS
status=0
(cd "$tmp/src" && .ci/run) 2>&1 | tee "$tmp/log" | timed || status=$?
echo
echo "fresh-check: time per step (cold caches under $tmp)"
cat "$tmp/times"
printf '%6ds  total, exit status %d\n' $((SECONDS - start)) "$status"
exit "$status"
