package sgapp

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/runtime/sgtest"
)

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// Strict stops at the first malformed line instead of skipping it.
	Strict bool
	// Partitions is the partition count of every topic (default 1).
	Partitions int
	// Sequences treats {"sequence": n} lines as the start of independent
	// sequences, each run on a fresh driver, echoed in the output.
	Sequences bool
	// StateDir keeps stores on Pebble under this directory (default memory).
	StateDir string
}

func replayCommand(app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o ReplayOptions
	fs.BoolVar(&o.Strict, "strict", false, "stop at the first malformed input line (default: report it on stderr and skip it)")
	fs.IntVar(&o.Partitions, "partitions", 1, "partitions of every topic")
	fs.BoolVar(&o.Sequences, "sequences", false, `input holds independent sequences, each started by {"sequence": n}`)
	fs.StringVar(&o.StateDir, "state-dir", "", "keep state stores on Pebble in this directory (default: in memory)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: %s replay [flags] < input.jsonl > output.jsonl

Reads input records as JSON lines on stdin, runs them through the topology
in process (the test driver: commit after every record, no cache), and
writes the output records as JSON lines on stdout, deterministically.

Line format: {"topic": "orders", "key": <json>, "value": <json or null>, "timestamp": <ms>}
optionally with "headers": {"name": "value"} and "partition": <n>.
A windowed key is {"key": <json>, "start": <ms>, "end": <ms>}.

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
	if o.Partitions <= 0 {
		o.Partitions = 1
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	var d *sgtest.Driver
	newDriver := func() error {
		if d != nil {
			if err := d.Close(); err != nil {
				return err
			}
		}
		opts := []sgtest.Opt{
			sgtest.DefaultPartitions(o.Partitions),
			sgtest.ErrorPolicies(app.Deserialization, app.Processing, app.DeadLetterTopic),
			sgtest.InvalidTimestamps(app.InvalidTime),
		}
		if o.StateDir != "" {
			opts = append(opts, sgtest.StateDir(o.StateDir))
		}
		d, err = sgtest.New(tp, opts...)
		return err
	}
	if err := newDriver(); err != nil {
		return err
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		parsed, seq, err := sgreplay.Parse(text, app)
		if err != nil {
			if o.Strict {
				return fmt.Errorf("line %d: %w", lineNo, err)
			}
			fmt.Fprintf(stderr, "%s replay: line %d: %v (skipped)\n", app.ID, lineNo, err)
			continue
		}
		if seq != nil {
			if !o.Sequences {
				err := fmt.Errorf("a sequence marker needs --sequences")
				if o.Strict {
					return fmt.Errorf("line %d: %w", lineNo, err)
				}
				fmt.Fprintf(stderr, "%s replay: line %d: %v (skipped)\n", app.ID, lineNo, err)
				continue
			}
			if err := newDriver(); err != nil {
				return err
			}
			fmt.Fprintf(w, "{\"sequence\":%d}\n", *seq)
			continue
		}
		rec := sgstream.RawRecord{Topic: parsed.Topic, Partition: parsed.Partition, Key: parsed.Key, Value: parsed.Value, Timestamp: parsed.Timestamp}
		for _, h := range parsed.Headers {
			rec.Headers = append(rec.Headers, sgstream.Header{Key: h.Key, Value: h.Value})
		}
		if err := d.Pipe(rec); err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		if err := writeOutputs(app, d, w, o.Partitions > 1); err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	return nil
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
