#!/usr/bin/env bash
# Runs a command against a fresh single-node Kafka broker and stops the broker afterwards.
#
# Usage: scripts/with-kafka.sh <command> [args...]
#   e.g. scripts/with-kafka.sh go test ./...
#
# Fetches the jars if needed (scripts/kafka.sh fetch), starts a broker in a temporary
# directory, exports STREAMGEN_KAFKA_BROKERS (address) and STREAMGEN_KAFKA_DIR (its state
# directory) to the command, and exits with the command's exit status. The broker is
# stopped and its directory removed on any exit, Ctrl-C included. Set
# STREAMGEN_KAFKA_KEEP=1 to keep the directory (logs/server.log) for debugging.
#
# If STREAMGEN_KAFKA_BROKERS is already set, that broker is used and none is started.
#
# A schema registry (scripts/registry.sh: Apicurio, in memory) starts next to the broker,
# in parallel with it, for the tests of the avro, protobuf and jsonschema formats: one for
# the whole run, its URL in STREAMGEN_REGISTRY_URL. An already set STREAMGEN_REGISTRY_URL is
# used instead; STREAMGEN_NO_REGISTRY=1 starts none (those tests then skip, or fail under
# CI=true).
set -euo pipefail

[[ $# -gt 0 ]] || {
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}

if [[ -n ${STREAMGEN_KAFKA_BROKERS:-} ]]; then
	echo "with-kafka.sh: using STREAMGEN_KAFKA_BROKERS=$STREAMGEN_KAFKA_BROKERS" >&2
	exec "$@"
fi

kafka=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kafka.sh
registry=$(dirname "$kafka")/registry.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/streamgen-kafka.XXXXXX")
registry_pid=

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	# A registry still starting is waited for, so that stop finds its pid.
	[[ -z $registry_pid ]] || wait "$registry_pid" 2>/dev/null || true
	[[ ! -d $dir/registry ]] || bash "$registry" stop "$dir/registry" || true
	bash "$kafka" stop "$dir" || true
	if [[ -n ${STREAMGEN_KAFKA_KEEP:-} ]]; then
		echo "with-kafka.sh: kept broker directory $dir" >&2
	else
		rm -rf "$dir"
	fi
}
trap cleanup EXIT
# A signal ends the command too and becomes a normal exit, so the EXIT trap stops the
# broker (which runs in its own session and would otherwise outlive us).
child=
# shellcheck disable=SC2317 # called by the signal traps
on_signal() {
	if [[ -n $child ]]; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

if [[ -z ${STREAMGEN_REGISTRY_URL:-} && -z ${STREAMGEN_NO_REGISTRY:-} ]]; then
	bash "$registry" start "$dir/registry" >"$dir/registry.url" 2>"$dir/registry.err" &
	registry_pid=$!
fi
bash "$kafka" fetch
line=$(bash "$kafka" start "$dir")
export STREAMGEN_KAFKA_BROKERS=${line#STREAMGEN_KAFKA_BROKERS=}
export STREAMGEN_KAFKA_DIR=$dir
if [[ -n $registry_pid ]]; then
	if wait "$registry_pid"; then
		export STREAMGEN_REGISTRY_URL
		STREAMGEN_REGISTRY_URL=$(sed -n 's/^STREAMGEN_REGISTRY_URL=//p' "$dir/registry.url")
	else
		cat "$dir/registry.err" >&2
		echo "with-kafka.sh: the schema registry did not start: its tests skip (and fail under CI=true)" >&2
	fi
	registry_pid=
fi

# In the background so that a signal interrupts `wait` at once (bash runs traps only
# between commands); <&0 keeps our stdin, which a background job would otherwise lose.
"$@" <&0 &
child=$!
rc=0
wait "$child" || rc=$?
exit "$rc"
