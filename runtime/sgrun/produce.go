package sgrun

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceFlags are the produce command's settings.
type produceFlags struct {
	connFlags
	raw  bool
	file string // "" or "-" for stdin
}

const produceUsage = `usage: %s produce [flags] [file.jsonl]

Produces the records of a JSON-lines file (stdin when no file or "-" is
given) to their topics on Kafka, one record per line, in the replay format:
  {"topic": "orders", "key": <json>, "value": <json or null>, "timestamp": <ms>}
optionally with "headers": {"name": "value"} and "partition": <n>; an
"offset" (as consume prints it) is ignored. Key and value are encoded with
the topic's serdes and formats from the spec; a record goes to the partition
its line names, else to the one Kafka's default partitioner picks for its
key. The producer is idempotent (acks=all). The first bad line stops the
command (records before it are produced); errors name the line. A count of
the records produced per topic and partition goes to stderr.

Flags:
`

// Produce is a generated binary's produce command: JSON lines in the
// replay format to their topics on a real broker. Generated code sets
// App.Produce = sgrun.Produce.
func Produce(app *sgapp.App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return toolMain(stderr, func() (*produceFlags, error) { return parseProduceFlags(app, args, stderr) },
		func(ctx context.Context, f *produceFlags) error { return produceCommand(ctx, app, f, stdin, stderr) })
}

// toolMain runs produce or consume: until SIGINT/SIGTERM, exit 2 for bad
// flags (0 for -h), 1 with the security hints for a failure, never a panic.
func toolMain[F interface{ conn() *connFlags }](stderr io.Writer, parse func() (F, error), run func(context.Context, F) error) (code int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer recoverTool(stderr, &code)
	f, err := parse()
	if err != nil {
		return flagExit(err, stderr)
	}
	if err := run(ctx, f); err != nil {
		fmt.Fprintln(stderr, explainSecurityError(err, f.conn()))
		return 1
	}
	return 0
}

// recoverTool turns a panic into exit code 1 and a message: no panic
// reaches a user of the binary's commands.
func recoverTool(stderr io.Writer, code *int) {
	if r := recover(); r != nil {
		fmt.Fprintf(stderr, "streamgen: internal error: %v\n", r)
		*code = 1
	}
}

// flagExit is the exit code of a flag parsing failure: 0 for -h, else 2.
func flagExit(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, err)
	return 2
}

func parseProduceFlags(app *sgapp.App, args []string, stderr io.Writer) (*produceFlags, error) {
	fs := flag.NewFlagSet("produce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &produceFlags{}
	addConnFlags(fs, &f.connFlags, "produce")
	fs.BoolVar(&f.raw, "raw", false, "key and value are base64 strings of the bytes to produce, as consume --raw prints them (no serdes; any topic)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, produceUsage, app.ID)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch fs.NArg() {
	case 0:
	case 1:
		f.file = fs.Arg(0)
	default:
		return nil, fmt.Errorf("streamgen: produce: want at most one file, got %q", fs.Args())
	}
	if err := f.finish(true); err != nil {
		return nil, err
	}
	return f, nil
}

func produceCommand(ctx context.Context, app *sgapp.App, f *produceFlags, stdin io.Reader, stderr io.Writer) error {
	sec, err := f.securityOpts()
	if err != nil {
		return err
	}
	bindWrites, err := f.bindRegistry(ctx, app, false, writesNone, nil)
	if err != nil {
		return err
	}
	in, name := stdin, "stdin"
	if f.file != "" && f.file != "-" {
		fh, err := os.Open(f.file)
		if err != nil {
			return fmt.Errorf("streamgen: produce: %w", err)
		}
		defer fh.Close()
		in, name = fh, f.file
	}
	codecs := writingCodecs(app, bindWrites)
	if f.raw {
		codecs = rawCodecs{}
	}
	st, err := produceLines(ctx, splitList(f.brokers), sec, codecs, in, name)
	st.report(stderr, name)
	if err != nil {
		return fmt.Errorf("streamgen: produce: %w", err)
	}
	return nil
}

// produceStats counts the acknowledged records per topic and partition.
type produceStats struct {
	mu     sync.Mutex
	counts map[string]map[int32]int
	n      int
	err    error // the first produce error
}

func (s *produceStats) done(r *kgo.Record, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("topic %q partition %d: %w", r.Topic, r.Partition, err)
		}
		return
	}
	if s.counts[r.Topic] == nil {
		s.counts[r.Topic] = map[int32]int{}
	}
	s.counts[r.Topic][r.Partition]++
	s.n++
}

// report writes the counts to w: one line in all, one per topic.
func (s *produceStats) report(w io.Writer, from string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(w, "produced %d records from %s\n", s.n, from)
	topics := make([]string, 0, len(s.counts))
	for t := range s.counts {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		parts := make([]int32, 0, len(s.counts[t]))
		total := 0
		for p, n := range s.counts[t] {
			parts = append(parts, p)
			total += n
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d: %d", p, s.counts[t][p])
		}
		fmt.Fprintf(w, "  %s: %d (partition %s)\n", t, total, b.String())
	}
}

// produceLines produces the records of the replay-format lines of in (name
// is its name in errors) to their topics, partitioned as Kafka's default
// partitioner would (or as the line says), idempotently, and waits until
// all are acknowledged. Lines are read by sgreplay.Parse, as the replay
// command reads them. The first bad line stops it; what was sent before
// is still flushed. The stats count what the broker acknowledged.
func produceLines(ctx context.Context, brokers []string, sec []kgo.Opt, codecs sgreplay.Codecs, in io.Reader, name string) (*produceStats, error) {
	st := &produceStats{counts: map[string]map[int32]int{}}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, sec...)...)
	if err != nil {
		return st, err
	}
	defer cl.Close()
	partitionsOf := topicPartitions(ctx, kadm.NewClient(cl))
	lineErr := sgreplay.EachLine(in, func(lineNo int, text []byte) error {
		r, err := inputRecord(text, codecs, partitionsOf)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", name, lineNo, err)
		}
		cl.Produce(ctx, r, st.done)
		return nil
	})
	flushErr := cl.Flush(ctx)
	switch {
	case lineErr != nil:
		return st, lineErr
	case flushErr != nil:
		return st, flushErr
	case st.err != nil:
		return st, fmt.Errorf("producing: %w", st.err)
	}
	return st, nil
}

// produceInput is run --input: the records of a replay-format file,
// produced before the engine starts.
func produceInput(ctx context.Context, brokers []string, sec []kgo.Opt, codecs sgreplay.Codecs, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("streamgen: --input: %w", err)
	}
	defer f.Close()
	st, err := produceLines(ctx, brokers, sec, codecs, f, path)
	if err != nil {
		return st.n, fmt.Errorf("streamgen: --input %w", err)
	}
	return st.n, nil
}

// inputRecord turns one replay line into the record to produce, on the
// partition the line names or Kafka's default partitioner picks.
func inputRecord(text []byte, codecs sgreplay.Codecs, partitionsOf func(topic string) (int32, error)) (*kgo.Record, error) {
	rec, m, err := sgreplay.Parse(text, codecs)
	if err != nil {
		return nil, err
	}
	if m != nil {
		return nil, fmt.Errorf("%s means nothing on Kafka (it is for the replay command)", m)
	}
	np, err := partitionsOf(rec.Topic)
	if err != nil {
		return nil, err
	}
	var p int32
	switch {
	case rec.Partition >= 0:
		p = rec.Partition
		if p >= np {
			return nil, fmt.Errorf("topic %q has %d partitions, record asks for partition %d", rec.Topic, np, p)
		}
	case rec.Key != nil:
		p = sgpartition.Partition(rec.Key, np)
	}
	r := &kgo.Record{Topic: rec.Topic, Partition: p, Key: rec.Key, Value: rec.Value, Timestamp: time.UnixMilli(rec.Timestamp)}
	for _, h := range rec.Headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return r, nil
}

// topicPartitions looks partition counts up once per topic.
func topicPartitions(ctx context.Context, adm *kadm.Client) func(topic string) (int32, error) {
	parts := map[string]int32{}
	return func(topic string) (int32, error) {
		if n, ok := parts[topic]; ok {
			return n, nil
		}
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return 0, err
		}
		td, ok := md.Topics[topic]
		if !ok || td.Err != nil || len(td.Partitions) == 0 {
			return 0, fmt.Errorf("topic %q does not exist", topic)
		}
		parts[topic] = int32(len(td.Partitions))
		return parts[topic], nil
	}
}

// writingCodecs are the codecs produce and run --input write with:
// the app's, binding each topic's registry sides at its first line
// (bindWrites, from bindRegistry; nil when the app has none).
func writingCodecs(app *sgapp.App, bindWrites func(topic string) error) sgreplay.Codecs {
	if bindWrites == nil {
		return app
	}
	return &bindingCodecs{Codecs: app, bind: bindWrites, bound: map[string]error{}}
}

// bindingCodecs are produce's codecs of an app with registry-format
// sides: the first line naming a topic binds that topic's sides for
// writing (its schemas looked up, or registered), so a file that seeds
// one topic needs only that topic's schemas registered, and a missing one
// stops the command at that line.
type bindingCodecs struct {
	sgreplay.Codecs
	bind  func(topic string) error
	bound map[string]error // by topic: the binding's outcome
}

func (c *bindingCodecs) Codec(topic string) sgreplay.TopicCodec {
	tc := c.Codecs.Codec(topic)
	if tc == nil {
		return nil
	}
	return bindingCodec{TopicCodec: tc, c: c}
}

// bindingCodec is one topic's codec of bindingCodecs.
type bindingCodec struct {
	sgreplay.TopicCodec
	c *bindingCodecs
}

func (b bindingCodec) EncodeJSON(key, value json.RawMessage) (k, v []byte, err error) {
	topic := b.Name()
	err, done := b.c.bound[topic]
	if !done {
		err = b.c.bind(topic)
		b.c.bound[topic] = err
	}
	if err != nil {
		// The line's error names the topic already: say the side.
		return nil, nil, errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("topic %q ", topic)))
	}
	return b.TopicCodec.EncodeJSON(key, value)
}
