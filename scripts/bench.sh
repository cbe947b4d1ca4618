#!/usr/bin/env bash
# make bench: streamgen side by side with Kafka Streams, Faust and the raw client, on one local
# broker, in one run. Builds the harness (bench/harness), the generated scenario applications
# (bench/scenarios) and the Kafka Streams program (bench/java, Maven), installs faust-streaming
# from PyPI into a virtualenv in the cache (once), starts a broker unless STREAMGEN_KAFKA_BROKERS
# is set, and runs the harness, which prints the table and writes bench/results.json and
# docs/benchmarks.md.
#
# Usage: scripts/bench.sh [harness flags]   e.g. -records 1000000 -scenarios streamcount
#   (go run ./bench/harness -h lists them; defaults finish in minutes on 2 cores)
#
# Environment:
#   STREAMGEN_KAFKA_BROKERS  use this broker instead of starting one
#   STREAMGEN_KAFKA_DIR      that broker's directory (scripts/kafka.sh), so that its CPU is not
#                            counted as other work on the machine
#   STREAMGEN_BENCH_WORK     keep state directories and logs here (default: a temporary directory)
#   STREAMGEN_BENCH_FAUST=0  skip Faust
# The broker runs with the JVM's normal JIT and G1 (scripts/kafka.sh's test defaults save CPU at
# the cost of broker speed, which would flatter nobody) and a 1 GiB heap.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/streamgen
work=${STREAMGEN_BENCH_WORK:-}
if [[ -z $work ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/streamgen-bench.XXXXXX")
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/bin"
log() { echo "bench.sh: $*" >&2; }

log "building the harness and the scenario applications"
go build -o "$work/bin/harness" ./bench/harness
go build -o "$work/bin/" ./bench/scenarios/...

log "building the Kafka Streams program"
bench/java/build.sh
javacp="$root/bench/java/target/classes:$(cat bench/java/target/classpath.txt)"

faust_py= faust_missing=
if [[ ${STREAMGEN_BENCH_FAUST:-1} != 0 ]]; then
	venv=$cache/faust-venv
	if ! "$venv/bin/python" -c 'import faust, rocksdict' 2>/dev/null; then
		log "installing faust-streaming into $venv"
		mkdir -p "$cache"
		if python3 -m venv "$venv" >"$cache/faust-install.log" 2>&1 &&
			"$venv/bin/pip" install -q 'faust-streaming==0.15.3' 'rocksdict==0.3.29' >>"$cache/faust-install.log" 2>&1; then
			:
		else
			faust_missing="installing faust-streaming from PyPI failed: $(tail -n 1 "$cache/faust-install.log")"
			log "$faust_missing"
		fi
	fi
	if "$venv/bin/python" -c 'import faust' 2>/dev/null; then
		faust_py=$venv/bin/python
	fi
else
	faust_missing="skipped (STREAMGEN_BENCH_FAUST=0)"
fi

broker_note="an existing broker (STREAMGEN_KAFKA_BROKERS)"
# The broker's CPU is the benchmark's own, not other work on the machine: its pid
# is known for a broker started here, or one whose directory STREAMGEN_KAFKA_DIR names.
broker_pid=$(cat "${STREAMGEN_KAFKA_DIR:-/nonexistent}/broker.pid" 2>/dev/null || echo 0)
if [[ -z ${STREAMGEN_KAFKA_BROKERS:-} ]]; then
	export STREAMGEN_KAFKA_JVM_OPTS=${STREAMGEN_KAFKA_JVM_OPTS:--XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseG1GC}
	export STREAMGEN_KAFKA_HEAP=${STREAMGEN_KAFKA_HEAP:-1g}
	kdir="$work/kafka"
	bash scripts/kafka.sh fetch
	line=$(bash scripts/kafka.sh start "$kdir")
	export STREAMGEN_KAFKA_BROKERS=${line#STREAMGEN_KAFKA_BROKERS=}
	# shellcheck disable=SC2064 # expand now: the trap must stop this broker
	trap "bash scripts/kafka.sh stop '$kdir' || true; rm -rf '$work'" EXIT
	[[ -n ${STREAMGEN_BENCH_WORK:-} ]] && trap "bash scripts/kafka.sh stop '$kdir' || true" EXIT
	broker_pid=$(cat "$kdir/broker.pid" 2>/dev/null || echo 0)
	broker_note="Kafka $(tr -d ' \n' <scripts/kafka/VERSION), single node (KRaft) on 127.0.0.1 started by scripts/kafka.sh with heap $STREAMGEN_KAFKA_HEAP and JVM options \`$STREAMGEN_KAFKA_JVM_OPTS\` (the normal tiered JIT and G1 in place of the test broker's C1-only JIT and serial collector)"
fi

"$work/bin/harness" -bin-dir "$work/bin" -java-classpath "$javacp" \
	-faust-python "$faust_py" -faust-script "$root/bench/faust/count.py" -faust-missing "$faust_missing" \
	-work-dir "$work" -json bench/results.json -md docs/benchmarks.md -findings bench/findings.md \
	-command "make bench${*:+ ARGS='$*'}" -broker-note "$broker_note" -broker-pid "$broker_pid" \
	-kafka-streams-version "$(tr -d ' \n' <scripts/kafka/VERSION)" "$@"
