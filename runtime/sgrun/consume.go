package sgrun

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumeFlags are the consume command's settings.
type consumeFlags struct {
	connFlags
	topics        []string
	fromText      string
	from          fromSpec
	isolation     string
	max           int
	timeout       time.Duration
	follow        bool
	raw, strict   bool
	readCommitted bool
}

const consumeUsage = `usage: %s consume [flags] topic...

Prints the records of the topics on Kafka as JSON lines on stdout, in the
replay format, decoded with each topic's serdes and formats from the spec,
with the partition and offset each was read at:
  {"topic": "orders", "key": <json>, "value": <json or null>, "timestamp": <ms>, "partition": <n>, "offset": <n>}
and "headers" when the record has any. produce and replay read such lines
unchanged (they ignore "offset"). No consumer group is joined and nothing
is committed. Without --follow it stops at the end each partition had when
it started. A record that does not decode is reported on stderr with its
topic, partition, offset and field path and skipped (the exit code is then
1), or stops the command under --strict.

Flags:
`

// Consume is a generated binary's consume command: topics on a real
// broker to JSON lines. Generated code sets App.Consume = sgrun.Consume.
func Consume(app *sgapp.App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return toolMain(stderr, func() (*consumeFlags, error) { return parseConsumeFlags(app, args, stderr) },
		func(ctx context.Context, f *consumeFlags) error { return consumeCommand(ctx, app, f, stdout, stderr) })
}

func parseConsumeFlags(app *sgapp.App, args []string, stderr io.Writer) (*consumeFlags, error) {
	fs := flag.NewFlagSet("consume", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &consumeFlags{}
	addConnFlags(fs, &f.connFlags, "consume")
	fs.StringVar(&f.fromText, "from", "start", "where to start in every partition: start, end, offset:<n> (clamped to what the partition holds) or timestamp:<epoch ms or RFC 3339> (the first record at or after it)")
	fs.StringVar(&f.isolation, "isolation", "read_committed", "read_committed (records of committed transactions only) or read_uncommitted")
	fs.IntVar(&f.max, "max", 0, "stop after this many records in all (0: no limit)")
	fs.DurationVar(&f.timeout, "timeout", 0, "stop when no record arrived for this long (0: no limit); without --follow, not reaching the end in time is an error")
	fs.BoolVar(&f.follow, "follow", false, "keep waiting for new records (until SIGINT/SIGTERM, --max or --timeout) instead of stopping at the end")
	fs.BoolVar(&f.raw, "raw", false, "print key and value bytes as they are, as base64 strings (null for null), without the serdes; any topic, declared or not")
	fs.BoolVar(&f.strict, "strict", false, "stop at the first record that does not decode (default: report it on stderr and skip it)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, consumeUsage, app.ID)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if f.topics = fs.Args(); len(f.topics) == 0 {
		return nil, fmt.Errorf("streamgen: consume: name at least one topic")
	}
	if f.from, err = parseFrom(f.fromText); err != nil {
		return nil, fmt.Errorf("streamgen: consume: --from %q: %v", f.fromText, err)
	}
	switch f.isolation {
	case "read_committed":
		f.readCommitted = true
	case "read_uncommitted":
	default:
		return nil, fmt.Errorf("streamgen: consume: --isolation %q: want read_committed or read_uncommitted", f.isolation)
	}
	if f.max < 0 || f.timeout < 0 {
		return nil, fmt.Errorf("streamgen: consume: --max and --timeout must not be negative")
	}
	if !f.raw {
		for _, t := range f.topics {
			if app.Codec(t) == nil {
				return nil, fmt.Errorf("streamgen: consume: topic %q is not declared in the spec (declared: %s); --raw prints any topic's bytes",
					t, strings.Join(app.TopicNames(), ", "))
			}
		}
	}
	return f, f.finish(true)
}

// fromKind is the form of --from.
type fromKind int

const (
	fromStart fromKind = iota
	fromEnd
	fromOffset
	fromTimestamp
)

// fromSpec is a parsed --from: n is the offset or the epoch milliseconds.
type fromSpec struct {
	kind fromKind
	n    int64
}

// parseFrom reads --from: start, end, offset:<n>, timestamp:<ms> or
// timestamp:<RFC 3339>.
func parseFrom(s string) (fromSpec, error) {
	switch s {
	case "start":
		return fromSpec{kind: fromStart}, nil
	case "end":
		return fromSpec{kind: fromEnd}, nil
	}
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "offset":
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n < 0 {
			return fromSpec{}, fmt.Errorf("offset:<n> wants a non-negative integer, got %q", arg)
		}
		return fromSpec{kind: fromOffset, n: n}, nil
	case "timestamp":
		if ms, err := strconv.ParseInt(arg, 10, 64); err == nil {
			return fromSpec{kind: fromTimestamp, n: ms}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, arg)
		if err != nil {
			return fromSpec{}, fmt.Errorf("timestamp:<t> wants epoch milliseconds or RFC 3339 (2026-03-02T10:00:00Z), got %q", arg)
		}
		return fromSpec{kind: fromTimestamp, n: t.UnixMilli()}, nil
	}
	return fromSpec{}, fmt.Errorf("want start, end, offset:<n> or timestamp:<epoch ms or RFC 3339>")
}

// span is the offsets consume reads in one partition: from start up to
// (not including) end, the end the partition had when consume started.
type span struct{ start, end int64 }

// spans finds the start and end offsets of every partition of the topics.
func spans(ctx context.Context, adm *kadm.Client, f *consumeFlags) (map[string]map[int32]span, error) {
	starts, err := adm.ListStartOffsets(ctx, f.topics...)
	if err != nil {
		return nil, err
	}
	list := adm.ListEndOffsets
	if f.readCommitted {
		list = adm.ListCommittedOffsets // the last stable offset
	}
	ends, err := list(ctx, f.topics...)
	if err != nil {
		return nil, err
	}
	var at kadm.ListedOffsets
	if f.from.kind == fromTimestamp {
		if at, err = adm.ListOffsetsAfterMilli(ctx, f.from.n, f.topics...); err != nil {
			return nil, err
		}
	}
	out := map[string]map[int32]span{}
	for _, t := range f.topics {
		if err := listedErr(t, starts, ends, at); err != nil {
			return nil, err
		}
		out[t] = map[int32]span{}
		for p, s := range starts[t] {
			e := ends[t][p].Offset
			sp := span{start: s.Offset, end: e}
			switch f.from.kind {
			case fromEnd:
				sp.start = e
			case fromOffset:
				sp.start = min(max(f.from.n, s.Offset), e)
			case fromTimestamp:
				sp.start = min(max(at[t][p].Offset, s.Offset), e)
			}
			out[t][p] = sp
		}
	}
	return out, nil
}

// listedErr reports a topic that is missing or failed in any listing.
func listedErr(topic string, lists ...kadm.ListedOffsets) error {
	for _, l := range lists {
		if l == nil {
			continue
		}
		ps, ok := l[topic]
		if !ok {
			return fmt.Errorf("topic %q does not exist", topic)
		}
		for p, o := range ps {
			if o.Err != nil {
				if p < 0 {
					return fmt.Errorf("topic %q does not exist", topic)
				}
				return fmt.Errorf("topic %q partition %d: %w", topic, p, o.Err)
			}
		}
	}
	return nil
}

func consumeCommand(ctx context.Context, app *sgapp.App, f *consumeFlags, stdout, stderr io.Writer) error {
	sec, err := f.securityOpts()
	if err != nil {
		return err
	}
	if _, err := f.bindRegistry(ctx, app, false, writesNone, nil); err != nil {
		return err
	}
	iso := kgo.ReadUncommitted()
	if f.readCommitted {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(splitList(f.brokers)...), kgo.FetchIsolationLevel(iso),
		kgo.KeepControlRecords(), kgo.FetchMaxWait(500 * time.Millisecond)}, sec...)...)
	if err != nil {
		return fmt.Errorf("streamgen: consume: %w", err)
	}
	defer cl.Close()
	sp, err := spans(ctx, kadm.NewClient(cl), f)
	if err != nil {
		return fmt.Errorf("streamgen: consume: %w", err)
	}
	var codecs sgreplay.Codecs = app
	if f.raw {
		codecs = rawCodecs{}
	}
	c := &consumer{cl: cl, f: f, codecs: codecs, spans: sp, out: bufio.NewWriter(stdout), stderr: stderr}
	err = c.run(ctx)
	if ferr := c.out.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	fmt.Fprintf(stderr, "consumed %d records from %s\n", c.n, strings.Join(f.topics, ", "))
	if err == nil && c.bad > 0 {
		err = fmt.Errorf("%d record(s) did not decode (reported above)", c.bad)
	}
	if err != nil {
		return fmt.Errorf("streamgen: consume: %w", err)
	}
	return nil
}

// consumer is one run of the consume command.
type consumer struct {
	cl     *kgo.Client
	f      *consumeFlags
	codecs sgreplay.Codecs
	spans  map[string]map[int32]span
	out    *bufio.Writer
	stderr io.Writer
	n, bad int
	left   int // partitions not at their end yet (without --follow)
}

// run assigns the partitions at their start offsets and prints records
// until the ends are reached (or --follow's stops).
func (c *consumer) run(ctx context.Context) error {
	assign := map[string]map[int32]kgo.Offset{}
	for t, ps := range c.spans {
		assign[t] = map[int32]kgo.Offset{}
		for p, s := range ps {
			assign[t][p] = kgo.NewOffset().At(s.start)
			if s.start < s.end {
				c.left++
			}
		}
	}
	if !c.f.follow && c.left == 0 {
		return nil
	}
	c.cl.AddConsumePartitions(assign)
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if c.f.timeout > 0 {
			pctx, cancel = context.WithTimeout(ctx, c.f.timeout)
		}
		fs := c.cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil // SIGINT/SIGTERM: a clean stop
		}
		if pctx.Err() != nil && fs.NumRecords() == 0 {
			return c.timedOut()
		}
		if err := fetchErr(fs); err != nil {
			return err
		}
		stop, err := c.records(fs)
		if err != nil || stop {
			return err
		}
		c.out.Flush()
	}
}

// timedOut is --timeout passing without a record: the end under --follow,
// an error when partitions were still short of their end.
func (c *consumer) timedOut() error {
	if c.f.follow {
		return nil
	}
	var short []string
	for t, ps := range c.spans {
		for p, s := range ps {
			if s.start < s.end {
				short = append(short, fmt.Sprintf("%s[%d] at %d of %d", t, p, s.start, s.end))
			}
		}
	}
	sort.Strings(short)
	return fmt.Errorf("no record for %s (--timeout) before the end of %s", c.f.timeout, strings.Join(short, ", "))
}

// fetchErr is the first error of a fetch that is not the client stopping.
func fetchErr(fs kgo.Fetches) error {
	var err error
	fs.EachError(func(t string, p int32, e error) {
		if err == nil && !errors.Is(e, context.Canceled) && !errors.Is(e, context.DeadlineExceeded) {
			err = fmt.Errorf("topic %q partition %d: %w", t, p, e)
		}
	})
	return err
}

// records prints the records of one fetch; stop says consume is done.
func (c *consumer) records(fs kgo.Fetches) (stop bool, err error) {
	for it := fs.RecordIter(); !it.Done(); {
		r := it.Next()
		s := c.spans[r.Topic][r.Partition]
		if !c.f.follow && r.Offset >= s.end {
			continue // arrived after consume started
		}
		if s.start < s.end && r.Offset+1 >= s.end {
			c.left--
		}
		s.start = r.Offset + 1
		c.spans[r.Topic][r.Partition] = s
		if !r.Attrs.IsControl() {
			if err := c.print(r); err != nil {
				return true, err
			}
		}
		if c.f.max > 0 && c.n >= c.f.max {
			return true, nil
		}
	}
	return !c.f.follow && c.left == 0, nil
}

// print writes one record's line, or reports (under --strict: returns) a
// record that does not decode.
func (c *consumer) print(r *kgo.Record) error {
	b, err := recordLine(c.codecs.Codec(r.Topic), r, true, true)
	if err != nil {
		err = fmt.Errorf("topic %q partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
		if c.f.strict {
			return err
		}
		c.bad++
		fmt.Fprintf(c.stderr, "streamgen: consume: %v\n", err)
		return nil
	}
	c.n++
	c.out.Write(b)
	return c.out.WriteByte('\n')
}

// recordLine renders a record as a replay-format line (without the
// newline), with its partition and its offset when asked: consume prints
// both, run --print the partition of multi-partition topics.
func recordLine(c sgreplay.TopicCodec, r *kgo.Record, partition, offset bool) ([]byte, error) {
	key, value, err := c.DecodeJSON(r.Key, r.Value)
	if err != nil {
		return nil, err
	}
	ts := r.Timestamp.UnixMilli()
	l := sgreplay.Line{Topic: r.Topic, Key: key, Value: value, Timestamp: &ts}
	if partition {
		l.Partition = &r.Partition
	}
	if offset {
		l.Offset = &r.Offset
	}
	if len(r.Headers) > 0 {
		l.Headers = map[string]string{}
		for _, h := range r.Headers {
			l.Headers[h.Key] = string(h.Value)
		}
	}
	return sgreplay.MarshalJSON(l)
}
