package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

func membership(static bool) string {
	if static {
		return "Both systems run as static group members (streamgen `--group-instance-id`, Kafka Streams\n  `group.instance.id`, the same id before and after the crash, default session timeouts), so the\n  successor takes the dead member's place without waiting for its session to time out."
	}
	return "Neither system uses static membership: the dead member is evicted (LeaveGroup on its behalf), so\n  neither waits out the 45 s session timeout."
}

// manyNote says how manystores' input differs, when it runs.
func manyNote(c *config) string {
	if !slices.Contains(c.scenarios, manyStores) {
		return ""
	}
	return fmt.Sprintf(" (manystores: the same records in %d partitions)", c.manyParts)
}

// markdown is docs/benchmarks.md.
func (r *report) markdown() string {
	c := r.cfg
	var b strings.Builder
	b.WriteString(`# Benchmarks: streamgen next to Kafka Streams and the raw client

Written by ` + "`make bench`" + ` (scripts/bench.sh runs bench/harness); do not edit by hand, run it again.
The raw figures of the same run are in [bench/results.json](../bench/results.json); the in-process
benchmarks (no broker) are ` + "`make bench-inproc`" + `, the engine's own figures
[benchmarks-runtime.md](benchmarks-runtime.md). Causes, profiles and later partial runs are in
[bench/findings.md](../bench/findings.md).

**Read the ratios, not the numbers.** Every figure comes from one run on one machine against one local
broker, where the broker (a JVM), the system under test and the harness share the cores with whatever
else runs there. Absolute rates elsewhere will differ; which system is faster, and by about how much,
is what one run on one machine can show.

`)
	fmt.Fprintf(&b, "## This run\n\n")
	fmt.Fprintf(&b, "- command: `%s`\n", c.command)
	fmt.Fprintf(&b, "- date: %s, %.0f minutes\n", r.started.UTC().Format("2006-01-02 15:04 MST"), r.finished.Sub(r.started).Minutes())
	fmt.Fprintf(&b, "- machine: %s\n", machine())
	fmt.Fprintf(&b, "- load average (1, 5, 15 min) at the start %s, at the end %s: other work shared the cores\n", r.loadStart, r.loadEnd)
	if c.brokerNote != "" {
		fmt.Fprintf(&b, "- broker: %s\n", c.brokerNote)
	}
	order := "drawn uniformly from"
	if c.sequential {
		order = "in turn (record i has key i mod keys) from"
	}
	fmt.Fprintf(&b, "- input: %d records per input topic (the joins read two), keys %s %d (%d distinct in %s), %d-byte random values (%.0f bytes per record with the key), event time 1 ms apart, %d partitions%s\n",
		c.records, order, c.keys, r.distinctKeys("streamcount"), src1, c.valueSize, r.bytesPerRec, c.partitions, manyNote(c))
	fmt.Fprintf(&b, "- settings, the same for both systems: one stream thread (streamgen `--workers 1`), record cache %d MiB, commit interval %v under at_least_once and %v under exactly_once_v2 (both systems' defaults), state on disk (Pebble / RocksDB) with changelogs\n",
		c.cacheBytes>>20, c.alosCommit, c.eosCommit)
	if len(c.javaOpts) > 0 {
		fmt.Fprintf(&b, "- Kafka Streams JVM options: `%s`\n", strings.Join(c.javaOpts, " "))
	} else {
		fmt.Fprintf(&b, "- Kafka Streams: %s with the JVM's default options (no heap limit, default collector and JIT)\n", c.streamsVer)
	}
	for _, x := range r.results {
		if x.System == sysFaust {
			fmt.Fprintf(&b, "- Faust: faust-streaming 0.15.3 from PyPI, RocksDB table store (rocksdict), streamcount only, counting the first %d records of the same input (its rate needs no more)\n", c.faustRecords)
			break
		}
	}
	b.WriteString("\n## Side by side\n\n")
	b.WriteString(r.table())
	if v := c.variant; v.name != "" {
		fmt.Fprintf(&b, "- variant %s: our side run again after each of its runs with extra flags `%s` and environment `%s`\n",
			v.system(), strings.Join(v.args, " "), v.env.String())
	}
	b.WriteString("\n## Targets (issue #17)\n\n")
	b.WriteString(r.targets())
	b.WriteString(`
## How it is measured

- **Inputs are loaded once**, before any system runs; every run reads them from the start under a new
  application id, so all systems see the same records. The scenarios are those of Kafka Streams'
  SimpleBenchmark (bench/scenarios/*/streamgen.yaml and bench/java): streamprocess (foreach),
  streamprocesswithsink (peek, to), streamprocesswithstatestore (a processor that gets and puts every
  key in a key-value store), streamprocesswithwindowstore (a processor that fetches the key's last second
  from a window store of 1 s windows kept 3 s, then puts the record), streamcount (groupByKey, count),
  streamcountwindowed (hopping windows of 1 s advancing by 500 ms, count), streamtablejoin (a stream
  left-joins a table built from the second topic), streamstreamjoin (left join within 10 s) and
  tabletablejoin (left join of two tables built from the two topics); then issue 17's manystores: a
  count, a one-minute tumbling-window count and a reduce keeping the latest value, each grouped by the
  input's key, over an input of ` + fmt.Sprint(c.manyParts) + ` partitions (the same records), so that one instance holds
  three stores (each with its changelog) per partition, both systems at their store defaults. The
  limit copies the input of the other scenarios, so manystores has no ratio to it.
- **Counting**, as SimpleBenchmark does with its latch: a peek (or the foreach) right after each source
  counts input records and prints a line at the first and at the expected count. **records/s** is the
  expected count divided by the time between the first and the last record processed (start-up is not
  in it; it is in *first record*). *2nd half* compares the rates over the second half of the records
  only, past start-up and the JVM's JIT warm-up, which at the default sizes weighs on Kafka Streams.
  MB/s counts key and value bytes. The joins count both inputs.
- **first record** is the time from starting the process (a JVM start for Kafka Streams) to the first
  record processed: group join, assignment, topic creation and restoration included.
- **disk bytes/key** is the sum of the file sizes in the state directory after the clean stop, divided
  by the distinct keys of the scenario's input(s) (counted as they are loaded): at a few thousand keys
  per store, the files every store has whatever it holds weigh on it, and a window store holds only
  the windows within its retention. ` + "`-keys N -sequential-keys`" + ` with
  ` + "`-records`" + ` ≥ N gives exactly N keys of state (drawn uniformly, N records hold about 63 % of N);
  10 M keys need a longer ` + "`-timeout`" + ` than the default.
- **variant** (` + "`-variant NAME -variant-args '--flag value' -variant-env KEY=VALUE`" + `): our side of
  every scenario is run a second time, right after its default run, with the extra flags (after the
  harness's own, so a repeated flag takes the variant's value) and environment, and reported as system
  streamgen+NAME next to the default run, e.g. a store memory budget.
- **a loaded machine**: during each run the harness reads the CPU time of the whole machine (/proc/stat)
  and subtracts its own, the broker's (when scripts/bench.sh started it) and the system under test's; what
  remains, per second of the run, is the cores other work kept busy. Runs above ` + fmt.Sprintf("%.2f", loadedCores) + ` of a core are
  named under the table as from a loaded machine: the load average cannot tell them, since the run and
  the broker load the cores themselves.
- **peak RSS** is the child's VmHWM from /proc just before it is stopped; **CPU s** is its user + system
  time from rusage, clean shutdown included.
- **limit**: the same counting in a franz-go client with no stream processing at all: consume for
  streamprocess, consume→produce (acks=all, idempotent; in transactions of one commit interval with the
  consumed offsets under exactly_once_v2) for every other scenario, which all write (a sink, changelogs
  or both). Each limit is measured before the scenarios and again after them, and the faster of the two
  is reported: measured only first, on a freshly started broker, the copy came out slower than the
  applications measured after it.
- **latency** (streamprocesswithsink and the limit's copy): the application starts with its group's
  offsets at the end of the input, 20 000 records are produced at 2 000 per second stamped with the
  current time, which both systems carry to the sink, and a read-committed consumer of the sink takes
  its receive time minus that timestamp (under exactly_once_v2 this includes the wait for the commit).
- **resume**: the count application counts one record for each of ` + fmt.Sprint(c.resumeKeys) + ` distinct keys
  under exactly_once_v2, is killed with SIGKILL one commit interval after the last record, 1000 more
  records arrive, and it starts again on the same state directory; resume is the time from that start to
  the first record processed. ` + membership(c.static) + `
- Not matched on purpose: Kafka Streams caches the stores of the two processor scenarios (as
  SimpleBenchmark does), streamgen never caches stores declared for a processor (docs/semantics.md).
`)
	if c.findings != "" {
		if f, err := os.ReadFile(c.findings); err == nil {
			b.WriteString("\n")
			b.Write(f)
		}
	}
	if r.finished.IsZero() {
		r.finished = time.Now()
	}
	return b.String()
}
