#!/usr/bin/env bash
# Runs a real single-node Apache Kafka broker (KRaft, broker+controller in one JVM) for
# streamgen's integration tests. Jars come from Maven Central through the machine's
# ordinary Maven setup; the version is pinned in scripts/kafka/VERSION.
#
# Usage: scripts/kafka.sh <command> [dir]
#   fetch          download the broker jars into the cache (a no-op when already complete)
#   start [dir]    format (first time) and start a broker whose state lives in dir; prints
#                  STREAMGEN_KAFKA_BROKERS=127.0.0.1:<port> on stdout and writes the address
#                  to dir/brokers. Starting a running broker only prints its address again.
#                  A dir that already holds a broker keeps its ports, cluster id and data.
#   stop [dir]     SIGTERM, then SIGKILL after STREAMGEN_KAFKA_STOP_TIMEOUT s (default 30)
#   kill9 [dir]    SIGKILL the broker (crash without controlled shutdown); keeps its data
#   restart [dir]  stop (if running) and start again on the same ports and data
#   status [dir]   prints running/stopped; exit status 0 when running, 3 when not
#   classpath      prints the java class path of the cached jars (for tools and checkers)
#   logs [dir]     prints the path of the broker's server.log
#   tool NAME ARGS runs one of Kafka's own command-line tools from the cached jars, with the
#                  name of its bin/ script (the .sh dropped): kafka-topics, kafka-console-producer,
#                  kafka-console-consumer, kafka-consumer-groups, kafka-streams-application-reset,
#                  kafka-streams-groups, ... (`tool` alone lists them). ARGS go to the tool as they
#                  are, e.g. tool kafka-topics --bootstrap-server 127.0.0.1:9092 --list
#
# dir defaults to $STREAMGEN_KAFKA_DIR, else ${TMPDIR:-/tmp}/streamgen-kafka.
#
# Environment:
#   STREAMGEN_KAFKA_VERSION        overrides scripts/kafka/VERSION (for trying another 4.x)
#   STREAMGEN_KAFKA_CACHE          jar cache; default ${XDG_CACHE_HOME:-~/.cache}/streamgen/kafka-<version>
#   STREAMGEN_KAFKA_START_TIMEOUT  seconds to wait for readiness (default 120: 2-core machines are slow)
#   STREAMGEN_KAFKA_HEAP           JVM max heap (default 512m)
#   STREAMGEN_KAFKA_JVM_OPTS       extra JVM options (word-split), appended after the defaults
#   STREAMGEN_KAFKA_EXTRA_PROPS    file whose lines are appended to server.properties at first start
#   STREAMGEN_KAFKA_SECURE         1 at first start: add a SASL_SSL listener with SCRAM-SHA-512 (see below)
#
# Secure mode (STREAMGEN_KAFKA_SECURE=1 when dir is new) adds a second listener, SASL_SSL with
# SCRAM-SHA-512, next to the PLAINTEXT one (which tests keep for admin work). The first start
# generates a throwaway CA and a broker certificate for 127.0.0.1 with openssl into dir/tls
# (dir/tls/ca.pem is what a client trusts) and creates the SCRAM user `streamgen` with a random
# password at format time. It writes dir/secure-brokers (host:port of SASL_SSL), dir/sasl-user and
# dir/sasl-password (mode 600). Nothing of it lives outside dir.
#
# The broker binds to 127.0.0.1 only. Topics are NOT auto-created
# (auto.create.topics.enable=false): tests must create their topics, which catches code
# that relies on auto-creation and would fail against a production cluster.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
kdir=$here/kafka

version=${STREAMGEN_KAFKA_VERSION:-$(tr -d ' \t\r\n' <"$kdir/VERSION")}
cache=${STREAMGEN_KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamgen/kafka-$version}
libs=$cache/libs
start_timeout=${STREAMGEN_KAFKA_START_TIMEOUT:-120}
stop_timeout=${STREAMGEN_KAFKA_STOP_TIMEOUT:-30}
heap=${STREAMGEN_KAFKA_HEAP:-512m}

# JVM options for a test broker on a small, busy machine. C1-only JIT and the serial
# collector halve the CPU a start costs (measured: ~10 s -> ~4.7 s of CPU to readiness),
# which on 2 shared cores is most of the wall time; a test broker's throughput needs are
# modest. STREAMGEN_KAFKA_JVM_OPTS comes last, so it can override any of these.
jvm_opts=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true)
read -r -a extra_jvm_opts <<<"${STREAMGEN_KAFKA_JVM_OPTS:-}"
jvm_opts+=("${extra_jvm_opts[@]}")

log() { echo "kafka.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}

# The marker records what the libs were resolved from, so editing pom.xml or VERSION
# refetches instead of silently running stale jars.
fetch_stamp() {
	echo "version=$version"
	echo "pom=$(cksum <"$kdir/pom.xml" | cut -d' ' -f1)"
}

fetched() { [[ -f $libs/.complete ]] && [[ "$(cat "$libs/.complete")" == "$(fetch_stamp)" ]]; }

cmd_fetch() {
	if fetched; then
		log "kafka $version jars already in $libs"
		return 0
	fi
	command -v mvn >/dev/null || die "mvn not found: install Maven to fetch the Kafka jars"
	mkdir -p "$cache"
	# Parallel fetches (two with-kafka.sh runs on a cold cache) take turns, so one never
	# replaces the libs dir under a broker the other has just started.
	exec 9>"$cache/.fetch.lock"
	flock 9
	if fetched; then
		log "kafka $version jars already in $libs"
		return 0
	fi
	local tmp
	tmp=$(mktemp -d "$cache/libs.tmp.XXXXXX")
	log "fetching kafka $version jars into $libs"
	if ! mvn -B -q -f "$kdir/pom.xml" -Dkafka.version="$version" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" >"$cache/fetch.log" 2>&1; then
		rm -rf "$tmp"
		tail -n 30 "$cache/fetch.log" >&2
		die "maven could not resolve kafka $version (full log: $cache/fetch.log)"
	fi
	[[ -f $tmp/kafka_2.13-$version.jar && -f $tmp/kafka-clients-$version.jar ]] ||
		die "resolved jars lack kafka_2.13/kafka-clients $version"
	chmod 755 "$tmp"
	fetch_stamp >"$tmp/.complete"
	# Swap in whole so a concurrent or interrupted fetch never leaves a half-filled libs dir.
	rm -rf "$libs"
	mv "$tmp" "$libs"
	log "fetched $(find "$libs" -name '*.jar' | wc -l) jars"
}

need_libs() {
	[[ -f $libs/.complete ]] || cmd_fetch
	command -v java >/dev/null || die "java not found: install a JDK (17+) to run the test broker"
}

state_dir() {
	local d=${1:-${STREAMGEN_KAFKA_DIR:-${TMPDIR:-/tmp}/streamgen-kafka}}
	realpath -m -- "$d"
}

# pid_of prints the broker's pid if it is alive and really is our broker (guards against a
# recycled pid after a crash).
pid_of() {
	local d=$1 pid
	[[ -f $d/broker.pid ]] || return 1
	pid=$(cat "$d/broker.pid")
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$d/server.properties" || return 1
	echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port picks a port that nothing listens on, below the kernel's ephemeral range so
# outgoing connections can't take it between our check and the broker's bind. A race with
# another process is still possible; start retries with new ports when the bind fails.
free_port() {
	local lo p i
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	((lo > 12000)) || lo=32768
	for i in $(seq 1 200); do
		p=$((10000 + RANDOM % (lo - 10000)))
		if ! port_open "$p" && [[ " ${taken_ports:-} " != *" $p "* ]]; then
			taken_ports="${taken_ports:-} $p"
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

random_cluster_id() {
	# Also used for directory ids. A Kafka Uuid is 16 random bytes in URL-safe base64 without padding. Kafka refuses ids
	# starting with '-' (they look like flags), so draw again then.
	local id
	while :; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
		[[ $id != -* ]] && echo "$id" && return 0
	done
}

is_secure() { [[ -f $1/secure ]]; }

# make_tls generates the secure mode's CA and broker certificate. The broker reads its key and
# chain as a PEM keystore (Kafka's ssl.keystore.type=PEM), so no keytool or store password.
make_tls() {
	local t=$1/tls
	command -v openssl >/dev/null || die "openssl not found: secure mode needs it to make certificates"
	mkdir -p "$t"
	(
		cd "$t"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 7 \
			-subj "/CN=streamgen test CA" -addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign"
		openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=127.0.0.1"
		printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >broker.ext
		openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out broker.pem \
			-days 7 -extfile broker.ext
		cat broker.key broker.pem >broker-keystore.pem
		chmod 600 ca.key broker.key broker-keystore.pem
	) >"$1/logs/tls.log" 2>&1 || {
		cat "$1/logs/tls.log" >&2
		die "generating certificates in $t failed"
	}
	echo streamgen >"$1/sasl-user"
	(umask 077 && head -c 24 /dev/urandom | base64 | tr -d '+/=\n' >"$1/sasl-password")
}

# write_config writes server.properties. Listeners are a list: secure mode adds a SASL_SSL one
# with its own settings (and storage format --add-scram for its SCRAM user).
write_config() {
	local d=$1 port=$2 cport=$3
	local listeners=("PLAINTEXT://127.0.0.1:$port" "CONTROLLER://127.0.0.1:$cport")
	local advertised=("PLAINTEXT://127.0.0.1:$port")
	local protocols=("PLAINTEXT:PLAINTEXT" "CONTROLLER:PLAINTEXT")
	local sport=
	if [[ ${STREAMGEN_KAFKA_SECURE:-} == 1 ]]; then
		touch "$d/secure"
		make_tls "$d"
		sport=$(free_port)
		while [[ $sport == "$port" || $sport == "$cport" ]]; do sport=$(free_port); done
		listeners+=("SASL_SSL://127.0.0.1:$sport")
		advertised+=("SASL_SSL://127.0.0.1:$sport")
		protocols+=("SASL_SSL:SASL_SSL")
		echo "127.0.0.1:$sport" >"$d/secure-brokers"
	fi
	local IFS=,
	cat >"$d/server.properties" <<EOF
# Generated by scripts/kafka.sh: single-node KRaft broker for tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listeners=${listeners[*]}
advertised.listeners=${advertised[*]}
listener.security.protocol.map=${protocols[*]}
log.dirs=$d/data

# One broker: every internal topic must live with one replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
default.replication.factor=1
min.insync.replicas=1
# Fewer internal partitions than the default 50: created lazily on first group/transaction,
# and 50 of them take seconds on a small machine.
offsets.topic.num.partitions=10
transaction.state.log.num.partitions=10

# Tests create their topics explicitly; auto-creation would hide missing-topic bugs.
auto.create.topics.enable=false
num.partitions=1
group.initial.rebalance.delay.ms=0

# Sized for a 2-core machine.
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=33554432
EOF
	if [[ -n $sport ]]; then
		cat >>"$d/server.properties" <<EOF

# Secure mode: SASL_SSL with SCRAM-SHA-512; credentials live in the metadata log (format --add-scram).
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PEM
ssl.keystore.location=$d/tls/broker-keystore.pem
ssl.client.auth=none
EOF
	fi
	if [[ -n ${STREAMGEN_KAFKA_EXTRA_PROPS:-} ]]; then
		printf '\n# From %s\n' "$STREAMGEN_KAFKA_EXTRA_PROPS" >>"$d/server.properties"
		cat "$STREAMGEN_KAFKA_EXTRA_PROPS" >>"$d/server.properties"
	fi
	cat >"$d/log4j2.properties" <<EOF
# Generated by scripts/kafka.sh.
appender.file.type=File
appender.file.name=file
appender.file.fileName=$d/logs/server.log
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
logger.statechange.name=state.change.logger
logger.statechange.level=WARN
logger.request.name=kafka.request.logger
logger.request.level=WARN
EOF
}

prop() { sed -n "s/^$2=//p" "$1/server.properties" | head -n 1; }

broker_addr() {
	local adv
	adv=$(prop "$1" advertised.listeners)
	adv=${adv%%,*}
	echo "${adv#*://}"
}

# format_storage does what `kafka-storage format` does for a single static-quorum node.
# The real formatter costs a JVM start (2-3 s of CPU, 10+ s on a busy 2-core machine), so
# its output is kept as a template: bootstrap.checkpoint holds only the feature levels of
# this Kafka version, and meta.properties is plain text we can write with fresh ids.
# Extra properties might change what format writes, so with those we always run it.
format_storage() {
	local d=$1
	[[ -f $d/data/meta.properties ]] && return 0
	local cid t0=$SECONDS tmpl=$libs/.bootstrap.checkpoint
	cid=$(random_cluster_id)
	echo "$cid" >"$d/cluster.id"
	local scram=()
	if is_secure "$d"; then
		scram=(--add-scram "SCRAM-SHA-512=[name=$(cat "$d/sasl-user"),password=$(cat "$d/sasl-password")]")
	fi
	if [[ -z ${STREAMGEN_KAFKA_EXTRA_PROPS:-} && ${#scram[@]} -eq 0 && -f $tmpl ]]; then
		mkdir -p "$d/data"
		cp "$tmpl" "$d/data/bootstrap.checkpoint"
		cat >"$d/data/meta.properties" <<EOF
#
#Written by scripts/kafka.sh from a kafka-storage format template
node.id=1
directory.id=$(random_cluster_id)
version=1
cluster.id=$cid
EOF
		return 0
	fi
	java "${jvm_opts[@]}" -cp "$libs/*" -Dlog4j2.configurationFile="$d/log4j2.properties" \
		kafka.tools.StorageTool format --cluster-id "$cid" --config "$d/server.properties" "${scram[@]}" \
		>"$d/logs/format.log" 2>&1 || {
		cat "$d/logs/format.log" >&2
		die "formatting KRaft storage in $d/data failed"
	}
	log "formatted $d/data (cluster id $cid) in $((SECONDS - t0))s"
	if [[ -z ${STREAMGEN_KAFKA_EXTRA_PROPS:-} && ${#scram[@]} -eq 0 && -f $d/data/bootstrap.checkpoint ]]; then
		cp "$d/data/bootstrap.checkpoint" "$tmpl.$$" && mv -f "$tmpl.$$" "$tmpl"
	fi
}

launch() {
	local d=$1
	# setsid: the broker outlives the shell that started it and doesn't get the terminal's
	# Ctrl-C; the inner bash records its own pid, which exec hands over to java.
	# shellcheck disable=SC2016 # $$ and $@ belong to the inner bash
	setsid bash -c 'echo $$ >"$1/broker.pid"; shift; exec "$@"' _ "$d" \
		java -Xms128m -Xmx"$heap" "${jvm_opts[@]}" \
		-Dlog4j2.configurationFile="$d/log4j2.properties" -Dkafka.logs.dir="$d/logs" \
		-cp "$libs/*" kafka.Kafka "$d/server.properties" \
		</dev/null >>"$d/logs/stdout.log" 2>&1 &
	local i
	for i in $(seq 1 50); do
		[[ -s $d/broker.pid ]] && return 0
		sleep 0.1
	done
	die "broker did not start"
}

# kafkawait asks the broker for metadata with franz-go until it lists itself, which in
# KRaft means registered and unfenced: a port that merely accepts connections is not
# enough. Built from the repo (Go build cache makes this fast after the first time).
build_waiter() {
	local d=$1
	command -v go >/dev/null || return 1
	(cd "$root" && go build -o "$d/kafkawait" ./internal/kafkatest/cmd/kafkawait) >"$d/logs/kafkawait-build.log" 2>&1
}

wait_ready() {
	local d=$1 pid=$2 addr=$3 builder=$4 deadline=$((SECONDS + start_timeout))
	local t0=$SECONDS
	while ! port_open "${addr##*:}"; do
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 2
		sleep 0.2
	done
	log "port ${addr##*:} open after $((SECONDS - t0))s"
	local have_waiter=0
	if wait "$builder"; then
		have_waiter=1
	else
		log "could not build kafkawait (see $d/logs/kafkawait-build.log); waiting for the log line instead"
	fi
	while :; do
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 2
		if ((have_waiter)); then
			"$d/kafkawait" -brokers "$addr" -timeout 5s >>"$d/logs/kafkawait.log" 2>&1 && return 0
		else
			tail -c "+$log_offset" "$d/logs/server.log" 2>/dev/null | grep -q 'Kafka Server started' && return 0
			sleep 0.5
		fi
	done
}

cmd_start() {
	local d pid addr log_offset
	d=$(state_dir "${1:-}")
	if pid=$(pid_of "$d"); then
		echo "STREAMGEN_KAFKA_BROKERS=$(broker_addr "$d")"
		return 0
	fi
	need_libs
	mkdir -p "$d/logs"
	local t0=$SECONDS
	for _ in 1 2 3; do
		local fresh=0
		if [[ ! -f $d/server.properties ]]; then
			fresh=1
			write_config "$d" "$(free_port)" "$(free_port)"
			format_storage "$d"
		fi
		addr=$(broker_addr "$d")
		local builder
		build_waiter "$d" &
		builder=$!
		# Only log lines written by this launch count for readiness (restarts append).
		log_offset=$(($(stat -c %s "$d/logs/server.log" 2>/dev/null || echo 0) + 1))
		launch "$d"
		pid=$(cat "$d/broker.pid")
		local rc=0
		wait_ready "$d" "$pid" "$addr" "$builder" || rc=$?
		if ((rc == 0)); then
			echo "$addr" >"$d/brokers"
			log "broker $addr ready in $((SECONDS - t0))s (pid $pid, dir $d, kafka $version)"
			echo "STREAMGEN_KAFKA_BROKERS=$addr"
			return 0
		fi
		wait "$builder" 2>/dev/null || true
		if ((rc == 2)); then
			tail -n 40 "$d/logs/server.log" >&2 || true
			cmd_stop "$d" >/dev/null 2>&1 || true
			die "broker not ready after ${start_timeout}s (logs in $d/logs)"
		fi
		# The JVM exited. A port taken between our check and the bind is retried with new
		# ports, but only for a broker we just created: a restart must keep its address.
		if ((fresh)) && grep -q -i 'address already in use' "$d/logs/server.log" "$d/logs/stdout.log" 2>/dev/null; then
			log "port taken, retrying with new ports"
			rm -rf "$d/server.properties" "$d/data" "$d/cluster.id" "$d/tls" "$d/secure" "$d/secure-brokers"
			continue
		fi
		tail -n 40 "$d/logs/stdout.log" "$d/logs/server.log" >&2 || true
		if grep -q -i 'address already in use' "$d/logs/server.log" "$d/logs/stdout.log" 2>/dev/null; then
			die "the ports in $d/server.properties are taken now; remove $d to start a new broker"
		fi
		die "broker exited during startup (logs in $d/logs)"
	done
	die "could not find free ports after 3 attempts"
}

signal_and_wait() {
	local pid=$1 sig=$2 timeout=$3 i
	kill "-$sig" "$pid" 2>/dev/null || return 0
	for ((i = 0; i < timeout * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# end_broker DIR SIGNAL DONE ends DIR's broker: with TERM it asks first and
# kills after stop_timeout, with KILL it crashes it at once (cmd_kill9, for
# recovery tests); DONE is the verb of the final log line.
end_broker() {
	local d pid signal=$2
	d=$(state_dir "$1")
	if ! pid=$(pid_of "$d"); then
		log "no broker running in $d"
		return 0
	fi
	if [[ $signal == TERM ]] && ! signal_and_wait "$pid" TERM "$stop_timeout"; then
		log "broker $pid ignored SIGTERM for ${stop_timeout}s; killing it"
		signal=KILL
	fi
	if [[ $signal == KILL ]]; then
		signal_and_wait "$pid" KILL 30 || die "broker $pid survived SIGKILL"
	fi
	rm -f "$d/broker.pid"
	log "$3 broker in $d"
}

cmd_stop() { end_broker "${1:-}" TERM stopped; }

cmd_kill9() { end_broker "${1:-}" KILL killed; }

cmd_restart() {
	local d
	d=$(state_dir "${1:-}")
	[[ -f $d/server.properties ]] || die "no broker was ever started in $d"
	cmd_stop "$d"
	cmd_start "$d"
}

cmd_status() {
	local d pid
	d=$(state_dir "${1:-}")
	if pid=$(pid_of "$d"); then
		echo "running pid=$pid brokers=$(broker_addr "$d") dir=$d"
		return 0
	fi
	echo "stopped dir=$d"
	return 3
}

# tools maps the bin/ script names of a Kafka distribution to their main classes in the jars
# cmd_fetch resolves (kafka-tools and kafka_2.13), so users never download Kafka to run them.
tools() {
	cat <<'EOF'
kafka-acls org.apache.kafka.tools.AclCommand
kafka-broker-api-versions org.apache.kafka.tools.BrokerApiVersionsCommand
kafka-cluster org.apache.kafka.tools.ClusterTool
kafka-configs org.apache.kafka.tools.ConfigCommand
kafka-console-consumer org.apache.kafka.tools.consumer.ConsoleConsumer
kafka-console-producer org.apache.kafka.tools.ConsoleProducer
kafka-console-share-consumer org.apache.kafka.tools.consumer.ConsoleShareConsumer
kafka-consumer-groups org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
kafka-consumer-perf-test org.apache.kafka.tools.ConsumerPerformance
kafka-delegation-tokens org.apache.kafka.tools.DelegationTokenCommand
kafka-delete-records org.apache.kafka.tools.DeleteRecordsCommand
kafka-features org.apache.kafka.tools.FeatureCommand
kafka-get-offsets org.apache.kafka.tools.GetOffsetShell
kafka-groups org.apache.kafka.tools.GroupsCommand
kafka-leader-election org.apache.kafka.tools.LeaderElectionCommand
kafka-log-dirs org.apache.kafka.tools.LogDirsCommand
kafka-metadata-quorum org.apache.kafka.tools.MetadataQuorumCommand
kafka-producer-perf-test org.apache.kafka.tools.ProducerPerformance
kafka-reassign-partitions org.apache.kafka.tools.reassign.ReassignPartitionsCommand
kafka-share-groups org.apache.kafka.tools.consumer.group.ShareGroupCommand
kafka-storage kafka.tools.StorageTool
kafka-streams-application-reset org.apache.kafka.tools.StreamsResetter
kafka-streams-groups org.apache.kafka.tools.streams.StreamsGroupCommand
kafka-topics org.apache.kafka.tools.TopicCommand
kafka-transactions org.apache.kafka.tools.TransactionsCommand
EOF
}

# cmd_tool runs a Kafka tool with warnings and errors on standard error, as the bin/ scripts'
# tools-log4j2 configuration does, so a tool's standard output stays its own (records, tables).
cmd_tool() {
	local name=${1:-} class
	if [[ -z $name ]]; then
		tools | awk '{print $1}'
		return 0
	fi
	shift
	class=$(tools | awk -v n="${name%.sh}" '$1 == n {print $2}')
	[[ -n $class ]] || die "unknown tool $name (scripts/kafka.sh tool lists them)"
	need_libs
	local conf=$cache/tools-log4j2.properties
	if [[ ! -f $conf ]]; then
		printf '%s\n' "# Written by scripts/kafka.sh for its tools." "appender.stderr.type=Console" \
			"appender.stderr.name=stderr" "appender.stderr.target=SYSTEM_ERR" \
			"appender.stderr.layout.type=PatternLayout" "appender.stderr.layout.pattern=[%d] %p %m (%c)%n" \
			"rootLogger.level=WARN" "rootLogger.appenderRef.stderr.ref=stderr" >"$conf.$$"
		mv -f "$conf.$$" "$conf"
	fi
	exec java "${jvm_opts[@]}" -Xmx256m -Dlog4j2.configurationFile="$conf" -cp "$libs/*" "$class" "$@"
}

case ${1:-} in
fetch) cmd_fetch ;;
start) cmd_start "${2:-}" ;;
stop) cmd_stop "${2:-}" ;;
kill9) cmd_kill9 "${2:-}" ;;
restart) cmd_restart "${2:-}" ;;
status) cmd_status "${2:-}" ;;
classpath)
	need_libs
	echo "$libs/*"
	;;
logs) echo "$(state_dir "${2:-}")/logs/server.log" ;;
tool)
	shift
	cmd_tool "$@"
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
