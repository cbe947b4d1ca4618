#!/usr/bin/env bash
# Runs a real schema registry for streamgen's format tests: Apicurio Registry (the
# Confluent-compatible API at /apis/ccompat/v7), in-memory storage, bound to 127.0.0.1.
# The ready-built server comes from Maven Central through the machine's ordinary Maven
# setup (io.apicurio:apicurio-registry-app:<version>:tar.gz:all); no Docker, no build.
#
# Usage: scripts/registry.sh <command> [dir]
#   fetch        download and unpack the server into the cache (a no-op when complete)
#   start [dir]  start a registry whose pid and log live in dir; prints
#                STREAMGEN_REGISTRY_URL=http://127.0.0.1:<port>/apis/ccompat/v7 on stdout and
#                writes it to dir/url. Starting a running registry prints its URL again.
#   stop [dir]   SIGTERM, then SIGKILL after 20 s
#   status [dir] prints running/stopped; exit status 0 when running, 3 when not
#   java         prints the java it runs with (see below)
#
# dir defaults to $STREAMGEN_REGISTRY_DIR, else ${TMPDIR:-/tmp}/streamgen-registry. Every
# start begins with an empty registry (its storage is in memory).
#
# The server needs Java 21 or newer; the broker and the conformance harness run on 17.
# The java used is, in order: $STREAMGEN_REGISTRY_JAVA; java on PATH or under $JAVA_HOME
# when it is 21+; the newest 21+ JDK under /usr/lib/jvm (where Debian and the Temurin
# packages install). Without one, start fails and names this variable.
#
# The registry picks free ports itself (port 0) and the script reads them from its log, so
# two registries never race for a port. Its management interface is bound to 127.0.0.1 too.
#
# Environment:
#   STREAMGEN_REGISTRY_VERSION        default 3.3.3
#   STREAMGEN_REGISTRY_CACHE          default ${XDG_CACHE_HOME:-~/.cache}/streamgen/registry-<version>
#   STREAMGEN_REGISTRY_START_TIMEOUT  seconds to wait for readiness (default 120)
#   STREAMGEN_REGISTRY_JAVA           the java binary (21+)
set -euo pipefail

version=${STREAMGEN_REGISTRY_VERSION:-3.3.3}
cache=${STREAMGEN_REGISTRY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamgen/registry-$version}
dist=$cache/dist
start_timeout=${STREAMGEN_REGISTRY_START_TIMEOUT:-120}

log() { echo "registry.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}

cmd_fetch() {
	if [[ -f $dist/.complete ]]; then
		return 0
	fi
	command -v mvn >/dev/null || die "mvn not found: install Maven to fetch the registry"
	mkdir -p "$cache"
	exec 9>"$cache/.fetch.lock"
	flock 9
	[[ -f $dist/.complete ]] && return 0
	local tmp
	tmp=$(mktemp -d "$cache/fetch.XXXXXX")
	log "fetching apicurio-registry-app $version (about 160 MB) into $cache"
	if ! mvn -B -q -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		"-Dartifact=io.apicurio:apicurio-registry-app:$version:tar.gz:all" "-DoutputDirectory=$tmp" \
		>"$cache/fetch.log" 2>&1; then
		rm -rf "$tmp"
		tail -n 30 "$cache/fetch.log" >&2
		die "maven could not resolve apicurio-registry-app $version (full log: $cache/fetch.log)"
	fi
	mkdir "$tmp/dist"
	tar xzf "$tmp/apicurio-registry-app-$version-all.tar.gz" -C "$tmp/dist"
	[[ -f $tmp/dist/quarkus-run.jar ]] || die "the registry archive has no quarkus-run.jar"
	touch "$tmp/dist/.complete"
	rm -rf "$dist"
	mv "$tmp/dist" "$dist"
	rm -rf "$tmp"
}

# java_major prints the major version of the java binary $1, or nothing.
java_major() {
	"$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}'
}

# find_java prints a java binary of version 21 or newer.
find_java() {
	local j v best="" bestv=0
	if [[ -n ${STREAMGEN_REGISTRY_JAVA:-} ]]; then
		echo "$STREAMGEN_REGISTRY_JAVA"
		return
	fi
	for j in "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
		[[ -n $j && -x $j ]] || continue
		v=$(java_major "$j")
		if [[ $v =~ ^[0-9]+$ ]] && ((v >= 21 && v > bestv)); then
			best=$j bestv=$v
		fi
	done
	[[ -n $best ]] || die "no Java 21 or newer found (the registry needs it; the rest of streamgen runs on 17): set STREAMGEN_REGISTRY_JAVA"
	echo "$best"
}

state_dir() { realpath -m -- "${1:-${STREAMGEN_REGISTRY_DIR:-${TMPDIR:-/tmp}/streamgen-registry}}"; }

# pid_of prints the registry's pid if it is alive and is the one started from dir.
pid_of() {
	local d=$1 pid
	[[ -f $d/registry.pid ]] || return 1
	pid=$(cat "$d/registry.pid")
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "STREAMGEN_REGISTRY_OWNER=$d" || return 1
	echo "$pid"
}

cmd_start() {
	local d java pid deadline url=""
	d=$(state_dir "${1:-}")
	if pid_of "$d" >/dev/null && [[ -f $d/url ]]; then
		echo "STREAMGEN_REGISTRY_URL=$(cat "$d/url")"
		return 0
	fi
	cmd_fetch
	java=$(find_java)
	mkdir -p "$d"
	rm -f "$d/url" "$d/registry.log"
	(
		cd "$dist"
		STREAMGEN_REGISTRY_OWNER=$d \
			QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT=0 \
			QUARKUS_MANAGEMENT_HOST=127.0.0.1 QUARKUS_MANAGEMENT_PORT=0 \
			exec "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar quarkus-run.jar \
			>"$d/registry.log" 2>&1
	) &
	pid=$!
	echo "$pid" >"$d/registry.pid"
	# A start that fails in any way leaves no registry behind.
	trap 'kill "$pid" 2>/dev/null || true' EXIT
	deadline=$((SECONDS + start_timeout))
	while ((SECONDS < deadline)); do
		kill -0 "$pid" 2>/dev/null || {
			tail -n 30 "$d/registry.log" >&2
			die "the registry exited during start (log: $d/registry.log)"
		}
		url=$(grep -o 'Listening on: http://127\.0\.0\.1:[0-9]*' "$d/registry.log" | head -n1 | sed 's/^Listening on: //' || true)
		if [[ -n $url ]] && curl -fs -o /dev/null "$url/apis/ccompat/v7/subjects"; then
			echo "$url/apis/ccompat/v7" >"$d/url"
			log "registry $url ready in $((SECONDS + start_timeout - deadline))s (pid $pid, java $(java_major "$java"))"
			echo "STREAMGEN_REGISTRY_URL=$url/apis/ccompat/v7"
			trap - EXIT
			return 0
		fi
		sleep 0.5
	done
	die "the registry was not ready after ${start_timeout}s (log: $d/registry.log)"
}

cmd_stop() {
	local d pid i
	d=$(state_dir "${1:-}")
	pid=$(pid_of "$d") || return 0
	kill "$pid" 2>/dev/null || true
	for i in $(seq 1 40); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$d/registry.pid" "$d/url"
}

cmd_status() {
	if pid_of "$(state_dir "${1:-}")" >/dev/null; then
		echo running
	else
		echo stopped
		return 3
	fi
}

case ${1:-} in
fetch) cmd_fetch ;;
start) cmd_start "${2:-}" ;;
stop) cmd_stop "${2:-}" ;;
status) cmd_status "${2:-}" ;;
java) find_java ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
