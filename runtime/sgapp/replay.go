package sgapp

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/runtime/sgtest"
)

// ReplayOptions configure Replay. The zero value runs as a
// TopologyTestDriver test that sets statestore.cache.max.bytes to 0: one
// partition, in-memory stores, no record cache, no emit throttles (the
// driver sets those to 0 unless the test sets them), wall clock at 0.
type ReplayOptions struct {
	// Strict stops at the first malformed line instead of skipping it.
	Strict bool
	// Partitions is the partition count of every topic (default 1).
	Partitions int
	// Sequences treats {"sequence": n} lines as the start of independent
	// sequences, each run on a fresh driver, echoed in the output.
	Sequences bool
	// StateDir keeps stores on Pebble under this directory (default
	// memory). With Sequences, each sequence gets its own directory under
	// it, StateDir/seq-<n> (StateDir/seq-start for records before the
	// first marker), emptied before the sequence starts.
	StateDir string
	// CacheMaxBytes is the record cache, as a TopologyTestDriver test
	// sets statestore.cache.max.bytes (default 0: no cache). A test that
	// does not set it runs with StreamsConfig's default, 10 MiB
	// (10485760): TopologyTestDriver builds its cache from the
	// config and flushes it at the commit after every record, so it still
	// coalesces the updates one record makes to a key.
	CacheMaxBytes int64
	// WindowEmitInterval and OuterJoinEmitInterval are the emit throttles
	// TopologyTestDriver sets to 0 unless a test sets them (default 0;
	// Kafka's own default is 1000 ms), measured on the replay's
	// wall clock, which only {"advance_wall_clock": ms} lines move.
	WindowEmitInterval, OuterJoinEmitInterval time.Duration
	// WallClockStart is the wall clock's first reading in ms, as the
	// initialWallClockTime a TopologyTestDriver test passes (default 0;
	// the driver's own default, the current time, is not reproducible).
	// Wall-clock punctuations fire at it plus their interval and are
	// stamped with the wall clock.
	WallClockStart int64
}

func replayCommand(app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o ReplayOptions
	fs.BoolVar(&o.Strict, "strict", false, "stop at the first malformed input line (default: report it on stderr and skip it)")
	fs.IntVar(&o.Partitions, "partitions", 1, "partitions of every topic")
	fs.BoolVar(&o.Sequences, "sequences", false, `input holds independent sequences, each started by {"sequence": n}`)
	fs.StringVar(&o.StateDir, "state-dir", "", "keep state stores on Pebble in this directory (default: in memory); with --sequences, in `dir`/seq-<n> per sequence, emptied first")
	fs.Int64Var(&o.CacheMaxBytes, "cache-bytes", 0, "record cache in `bytes`, Kafka's statestore.cache.max.bytes, flushed after every record (default 0: no cache, every update is forwarded; a TopologyTestDriver test that does not set it has 10485760)")
	fs.DurationVar(&o.WindowEmitInterval, "window-emit-interval", 0, "wall-clock throttle of emit-on-close windowed aggregations, Kafka's __emit.interval.ms.kstreams.windowed.aggregation__ (default 0, as TopologyTestDriver)")
	fs.DurationVar(&o.OuterJoinEmitInterval, "outer-join-emit-interval", 0, "wall-clock throttle of unmatched left/outer stream-stream join results, Kafka's __emit.interval.ms.kstreams.outer.join.spurious.results.fix__ (default 0, as TopologyTestDriver)")
	fs.Int64Var(&o.WallClockStart, "wall-clock-start", 0, "the wall clock's first reading in `ms` since the epoch, TopologyTestDriver's initialWallClockTime")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: %s replay [flags] < input.jsonl > output.jsonl

Reads input records as JSON lines on stdin, runs them through the topology
in process (the test driver, as Kafka Streams' TopologyTestDriver: commit
after every record; by default no record cache and no emit throttles), and
writes the output records as JSON lines on stdout, deterministically.

Line format: {"topic": "orders", "key": <json>, "value": <json or null>, "timestamp": <ms>}
optionally with "headers": {"name": "value"} and "partition": <n>.
A windowed key is {"key": <json>, "start": <ms>, "end": <ms>}.
{"advance_wall_clock": <ms>} moves the wall clock (it starts at
--wall-clock-start, default 0) forward,
as TopologyTestDriver.advanceWallClockTime: wall-clock punctuations and
emit throttles see it. {"sequence": <n>} starts a sequence (--sequences).

At the end (and at the end of each sequence) stderr gets a summary of the
records that were dropped or skipped, by reason, when there were any.

Flags:
`, app.ID)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := Replay(app, stdin, stdout, stderr, o); err != nil {
		fmt.Fprintf(stderr, "%s replay: %v\n", app.ID, err)
		return 1
	}
	return 0
}

// Replay runs input lines through the topology and writes output lines.
// Malformed lines are reported on stderr with their line number and skipped
// (or stop the run with Strict); a processing failure stops the run.
func Replay(app *App, in io.Reader, out, stderr io.Writer, o ReplayOptions) error {
	tp, err := app.Topology()
	if err != nil {
		return err
	}
	// Registry formats replay on the in-memory registry, as the test
	// driver runs them: real framing, no server.
	if err := sgtest.BindRegistry(app.Registry...); err != nil {
		return err
	}
	if o.Partitions <= 0 {
		o.Partitions = 1
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	r := &replayer{app: app, tp: tp, o: o, w: w, stderr: stderr}
	defer r.closeDriver()
	if !o.Sequences {
		// Made before the first line, so a topology the driver refuses
		// (topics not co-partitioned) fails even on empty input.
		if err := r.driver(); err != nil {
			return err
		}
	}
	err = sgreplay.EachLine(in, func(lineNo int, text []byte) error {
		err := r.line(text)
		var bad badLine
		if errors.As(err, &bad) && !o.Strict {
			fmt.Fprintf(stderr, "%s replay: line %d: %v (skipped)\n", app.ID, lineNo, err)
			r.malformed++
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return r.closeDriver()
}

// badLine is an input line that Strict decides about: skipped with a
// message, or the end of the run.
type badLine struct{ error }

func (b badLine) Unwrap() error { return b.error }

// replayer holds the state of one Replay: the driver of the current
// sequence, created on its first record.
type replayer struct {
	app    *App
	tp     *sgstream.Topology
	o      ReplayOptions
	w      *bufio.Writer
	stderr io.Writer
	d      *sgtest.Driver
	// seq is the current sequence's marker, nil before the first.
	seq *int
	// malformed counts the current sequence's input lines skipped as
	// malformed: the driver never saw them, so no task counted them.
	malformed int64
}

// line runs one non-empty input line.
func (r *replayer) line(text []byte) error {
	parsed, m, err := sgreplay.Parse(text, r.app)
	if err != nil {
		return badLine{err}
	}
	switch {
	case m != nil && m.Sequence != nil:
		if !r.o.Sequences {
			return badLine{fmt.Errorf("a sequence marker needs --sequences")}
		}
		if err := r.closeDriver(); err != nil {
			return err
		}
		r.seq = m.Sequence
		fmt.Fprintf(r.w, "{\"sequence\":%d}\n", *m.Sequence)
		return nil
	case m != nil:
		if err := r.driver(); err != nil {
			return err
		}
		if err := r.d.AdvanceWallClock(time.Duration(*m.AdvanceWallClock) * time.Millisecond); err != nil {
			return err
		}
	default:
		if err := r.driver(); err != nil {
			return err
		}
		rec := sgstream.RawRecord{Topic: parsed.Topic, Partition: parsed.Partition, Key: parsed.Key, Value: parsed.Value, Timestamp: parsed.Timestamp}
		for _, h := range parsed.Headers {
			rec.Headers = append(rec.Headers, sgstream.Header{Key: h.Key, Value: h.Value})
		}
		if err := r.d.Pipe(rec); err != nil {
			return err
		}
	}
	return writeOutputs(r.app, r.d, r.w, r.o.Partitions > 1)
}

// driver makes sure the current sequence has a driver.
func (r *replayer) driver() error {
	if r.d != nil {
		return nil
	}
	opts := []sgtest.Opt{
		sgtest.DefaultPartitions(r.o.Partitions),
		sgtest.ErrorPolicies(r.app.Deserialization, r.app.Processing, r.app.DeadLetterTopic),
		sgtest.InvalidTimestamps(r.app.InvalidTime),
		sgtest.CacheMaxBytes(r.o.CacheMaxBytes),
		sgtest.WindowEmitInterval(r.o.WindowEmitInterval),
		sgtest.OuterJoinEmitInterval(r.o.OuterJoinEmitInterval),
		sgtest.WallClockStart(r.o.WallClockStart),
	}
	if r.o.StateDir != "" {
		dir, err := r.stateDir()
		if err != nil {
			return err
		}
		opts = append(opts, sgtest.StateDir(dir))
	}
	d, err := sgtest.New(r.tp, opts...)
	if err != nil {
		return err
	}
	r.d = d
	return nil
}

// stateDir is the state directory of the current sequence: StateDir
// itself without Sequences, else a directory of its own under it, emptied
// so no state of an earlier run or of a sequence with the same number
// leaks in.
func (r *replayer) stateDir() (string, error) {
	if !r.o.Sequences {
		return r.o.StateDir, nil
	}
	name := "seq-start"
	if r.seq != nil {
		name = fmt.Sprintf("seq-%d", *r.seq)
	}
	dir := filepath.Join(r.o.StateDir, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("emptying state directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	return dir, nil
}

// closeDriver ends the current sequence: it writes its summary and closes
// its driver, if it has one (a sequence of malformed lines has none).
func (r *replayer) closeDriver() error {
	d := r.d
	r.d = nil
	var stats sgtest.Stats
	if d != nil {
		stats = d.Stats()
	}
	if s := summary(stats, r.malformed); s != "" {
		where := ""
		if r.seq != nil {
			where = fmt.Sprintf(" sequence %d:", *r.seq)
		}
		fmt.Fprintf(r.stderr, "%s replay:%s %s\n", r.app.ID, where, s)
	}
	r.malformed = 0
	if d == nil {
		return nil
	}
	return d.Close()
}

// writeOutputs prints the records the topology wrote to declared topics.
// Internal topics (repartition, changelog) are not output.
func writeOutputs(app *App, d *sgtest.Driver, w io.Writer, withPartition bool) error {
	for _, r := range d.OutputAll() {
		c := app.Codec(r.Topic)
		if c == nil {
			// Not declared in the spec: a repartition, changelog or
			// subscription topic, internal to the application.
			continue
		}
		var partition *int32
		if withPartition {
			p := r.Partition
			partition = &p
		}
		var headers []sgreplay.Header
		for _, h := range r.Headers {
			headers = append(headers, sgreplay.Header{Key: h.Key, Value: h.Value})
		}
		b, err := sgreplay.Format(c, r.Topic, partition, r.Key, r.Value, r.Timestamp, headers)
		if err != nil {
			return err
		}
		w.Write(b)
		w.Write([]byte{'\n'})
	}
	return nil
}
