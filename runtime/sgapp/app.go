// Package sgapp is the command line of a generated application: the
// standard commands every streamgen binary has (replay, describe, and run,
// produce and consume, which package sgrun provides through App.Run,
// App.Produce and App.Consume). Generated code fills an
// App and calls Main. sgapp links no Kafka client.
package sgapp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/streamgen/streamgen/runtime/sgquery"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// App is what generated code knows about the application.
type App struct {
	// ID is the application id.
	ID string
	// Build wires the topology (generated).
	Build func(b *sgstream.Builder)
	// Topics are the codecs of every topic declared in the spec, inputs and
	// outputs, for replay and the typed driver.
	Topics []sgreplay.TopicCodec
	// Stores are the queryable stores (interactive queries: `run
	// --query-addr`), generated for every table and aggregation.
	Stores []sgquery.Store
	// Registry are the serdes of the topic sides in a registry format
	// (avro, protobuf, jsonschema): run, produce and consume bind them to
	// the schema registry before records flow, replay to an in-memory one.
	Registry []serdes.RegistryBinder
	// Guarantee is "at_least_once" or "exactly_once_v2".
	Guarantee string
	// CommitInterval is the spec's commit interval, 0 for the default.
	CommitInterval time.Duration
	// StandbyReplicas is the spec's standby replicas per task (the run
	// command's --standby-replicas default).
	StandbyReplicas int
	// Error policies from the spec.
	Deserialization sgstream.Policy
	Processing      sgstream.Policy
	DeadLetterTopic string
	InvalidTime     sgstream.TimestampPolicy
	// OnStart are the spec's app.on_start functions: run once by `run`
	// before processing starts.
	OnStart []func(ctx context.Context) error
	// Run starts the application on Kafka: generated code sets sgrun.Run,
	// the run command (nil in builds without an engine). It is injected so
	// that sgapp, and the replay and describe commands, link no Kafka
	// client.
	Run func(app *App, args []string, stdout, stderr io.Writer) int
	// Produce and Consume are the produce and consume commands (JSON lines
	// to and from a topic on a real broker): generated code sets
	// sgrun.Produce and sgrun.Consume. Injected like Run, for the same
	// reason; nil in builds without an engine.
	Produce, Consume Command
}

// Command is a command that needs a Kafka client, which sgapp does not
// link: it gets the command's arguments and the standard streams and
// returns the exit code.
type Command func(app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Topology builds the app's topology structure.
func (a *App) Topology() (*sgstream.Topology, error) { return sgstream.NewTopology(a.ID, a.Build) }

// Codec returns the codec of a declared topic, or nil.
func (a *App) Codec(topic string) sgreplay.TopicCodec {
	for _, c := range a.Topics {
		if c.Name() == topic {
			return c
		}
	}
	return nil
}

const usage = `usage: %s <command> [flags]

Commands:
  run        run the application on Kafka (see run -h)
  produce    write JSON lines (the replay format) to their topics on Kafka (see produce -h)
  consume    print the records of topics on Kafka as JSON lines (see consume -h)
  replay     read input records as JSON lines on stdin, write output records as JSON lines on stdout
  describe   print the topology (--format text|mermaid|dot)
  help       show this help
`

// Main runs the command in args and returns the exit code.
func Main(app *App, args []string) int {
	return MainIO(app, args, os.Stdin, os.Stdout, os.Stderr)
}

// MainIO is Main with explicit standard streams, for tests.
func MainIO(app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	prog := app.ID
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, prog)
		return 2
	}
	switch args[0] {
	case "replay":
		return replayCommand(app, args[1:], stdin, stdout, stderr)
	case "describe":
		return describeCommand(app, args[1:], stdout, stderr)
	case "run":
		if app.Run == nil {
			fmt.Fprintf(stderr, "%s: this build has no Kafka engine linked\n", prog)
			return 2
		}
		return app.Run(app, args[1:], stdout, stderr)
	case "produce", "consume":
		cmd := app.Produce
		if args[0] == "consume" {
			cmd = app.Consume
		}
		if cmd == nil {
			fmt.Fprintf(stderr, "%s: this build has no Kafka engine linked\n", prog)
			return 2
		}
		return cmd(app, args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintf(stdout, usage, prog)
		return 0
	}
	fmt.Fprintf(stderr, "%s: unknown command %q\n", prog, args[0])
	fmt.Fprintf(stderr, usage, prog)
	return 2
}

// Logger makes the application's structured logger at level, writing
// JSON or text lines to w.
func Logger(w io.Writer, level string, json bool) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	if json {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// TopicNames lists the declared topics, sorted.
func (a *App) TopicNames() []string {
	names := make([]string, len(a.Topics))
	for i, c := range a.Topics {
		names[i] = c.Name()
	}
	sort.Strings(names)
	return names
}

// TopicCodec is the replay codec of a topic (see package sgreplay).
type TopicCodec = sgreplay.TopicCodec
