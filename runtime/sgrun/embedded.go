package sgrun

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgkafka"
	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The demo conveniences of the run command: `--embedded` runs against an
// in-process broker, `--input` produces a replay-format file before the
// engine starts, `--print` prints committed output as replay lines.

// newEmbeddedCluster starts the in-process broker and returns its
// addresses and its stop function. kfake.go sets it; a binary built with
// the streamgen_nokfake tag leaves it nil and has no --embedded.
var newEmbeddedCluster func() (addrs []string, stop func(), err error)

// startEmbedded starts the embedded broker with the spec's topics created.
func startEmbedded(ctx context.Context, app *sgapp.App, tp *sgstream.Topology, log *slog.Logger) (stop func(), addrs []string, err error) {
	if newEmbeddedCluster == nil {
		return nil, nil, fmt.Errorf("%w: --embedded: this binary was built without the embedded broker (tag streamgen_nokfake)", sgkafka.ErrConfig)
	}
	addrs, stop, err = newEmbeddedCluster()
	if err != nil {
		return nil, nil, fmt.Errorf("streamgen: embedded kafka: %w", err)
	}
	log.Info("embedded kafka started", "brokers", strings.Join(addrs, ","))
	if err := sgkafka.CreateTopics(ctx, addrs, declaredTopics(app, tp)); err != nil {
		stop()
		return nil, nil, err
	}
	return stop, addrs, nil
}

// declaredTopics are the topics to create on the embedded broker: every
// topic with a codec and every external topic of the topology, with the
// topology's partition count (1 when the spec gives none), and the
// dead-letter topic.
func declaredTopics(app *sgapp.App, tp *sgstream.Topology) map[string]int {
	want := map[string]int{}
	for _, c := range app.Topics {
		want[c.Name()] = 1
	}
	for _, ts := range (*engine.Handle)(tp).Topology().Topics() {
		if ts.Role != engine.TopicExternal && ts.Role != engine.TopicGlobal {
			continue
		}
		want[ts.Name] = max(ts.Partitions, 1)
	}
	if app.DeadLetterTopic != "" {
		if _, ok := want[app.DeadLetterTopic]; !ok {
			want[app.DeadLetterTopic] = 1
		}
	}
	return want
}

// produceInput produces the records of a replay-format file to their
// topics, partitioned as Kafka's default partitioner would (or as the line
// says), and waits until all are acknowledged. Lines are read by
// sgreplay.Parse, as the replay command reads them.
func produceInput(ctx context.Context, brokers []string, sec []kgo.Opt, app *sgapp.App, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("streamgen: --input: %w", err)
	}
	defer f.Close()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, sec...)...)
	if err != nil {
		return 0, fmt.Errorf("streamgen: --input: %w", err)
	}
	defer cl.Close()
	partitionsOf := topicPartitions(ctx, kadm.NewClient(cl))
	var (
		mu      sync.Mutex
		prodErr error
		n       int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for lineNo := 1; sc.Scan(); lineNo++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		r, err := inputRecord(text, app, partitionsOf)
		if err != nil {
			return n, fmt.Errorf("streamgen: --input %s:%d: %v", path, lineNo, err)
		}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if prodErr == nil {
					prodErr = err
				}
				mu.Unlock()
			}
		})
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("streamgen: --input %s: %w", path, err)
	}
	if err := cl.Flush(ctx); err != nil {
		return n, fmt.Errorf("streamgen: --input: %w", err)
	}
	if prodErr != nil {
		return n, fmt.Errorf("streamgen: --input: producing: %w", prodErr)
	}
	return n, nil
}

// inputRecord turns one replay line into the record to produce, on the
// partition the line names or Kafka's default partitioner picks.
func inputRecord(text []byte, app *sgapp.App, partitionsOf func(topic string) (int32, error)) (*kgo.Record, error) {
	rec, m, err := sgreplay.Parse(text, app)
	if err != nil {
		return nil, err
	}
	if m != nil {
		return nil, fmt.Errorf("%s means nothing to --input (it is for the replay command)", m)
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

// printer prints the committed records of some topics as replay-format
// JSON lines while the engine runs.
type printer struct {
	cl     *kgo.Client
	app    *sgapp.App
	out    io.Writer
	topics []string
	multi  map[string]bool // topics with more than one partition print "partition"
	pos    map[string]map[int32]int64
	stop   chan struct{}
	done   chan error
	mu     sync.Mutex
}

func startPrinter(ctx context.Context, brokers []string, sec []kgo.Opt, app *sgapp.App, topics []string, out io.Writer) (*printer, error) {
	for _, t := range topics {
		if app.Codec(t) == nil {
			return nil, fmt.Errorf("streamgen: --print: topic %q is not declared in the spec", t)
		}
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), kgo.FetchMaxWait(200 * time.Millisecond)}, sec...)...)
	if err != nil {
		return nil, fmt.Errorf("streamgen: --print: %w", err)
	}
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("streamgen: --print: %w", err)
	}
	p := &printer{cl: cl, app: app, out: out, topics: topics, multi: map[string]bool{}, pos: map[string]map[int32]int64{},
		stop: make(chan struct{}), done: make(chan error, 1)}
	for _, t := range topics {
		td, ok := md.Topics[t]
		if !ok || td.Err != nil {
			cl.Close()
			return nil, fmt.Errorf("streamgen: --print: topic %q does not exist", t)
		}
		p.multi[t] = len(td.Partitions) > 1
	}
	go func() { p.done <- p.loop() }()
	return p, nil
}

func (p *printer) loop() error {
	w := bufio.NewWriter(p.out)
	defer w.Flush()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.stop
		cancel()
	}()
	for {
		fs := p.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil
		}
		var err error
		fs.EachRecord(func(r *kgo.Record) {
			p.mu.Lock()
			if p.pos[r.Topic] == nil {
				p.pos[r.Topic] = map[int32]int64{}
			}
			p.pos[r.Topic][r.Partition] = r.Offset + 1
			p.mu.Unlock()
			if r.Attrs.IsControl() || err != nil {
				return
			}
			err = p.print(w, r)
		})
		if err != nil {
			return err
		}
		w.Flush()
	}
}

func (p *printer) print(w io.Writer, r *kgo.Record) error {
	c := p.app.Codec(r.Topic)
	key, value, err := c.DecodeJSON(r.Key, r.Value)
	if err != nil {
		return fmt.Errorf("streamgen: --print: decoding %q partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	ts := r.Timestamp.UnixMilli()
	l := sgreplay.Line{Topic: r.Topic, Key: key, Value: value, Timestamp: &ts}
	if p.multi[r.Topic] {
		part := r.Partition
		l.Partition = &part
	}
	if len(r.Headers) > 0 {
		l.Headers = map[string]string{}
		for _, h := range r.Headers {
			l.Headers[h.Key] = string(h.Value)
		}
	}
	b, err := sgreplay.MarshalJSON(l)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// drain waits until everything committed to the printed topics so far has
// been printed, then stops the printer.
func (p *printer) drain() error {
	defer p.cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(p.cl).ListCommittedOffsets(ctx, p.topics...)
	if err != nil {
		close(p.stop)
		<-p.done
		return fmt.Errorf("streamgen: --print: %w", err)
	}
	for {
		caught := true
		p.mu.Lock()
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err == nil && o.Offset > 0 && p.pos[o.Topic][o.Partition] < o.Offset {
				caught = false
			}
		})
		p.mu.Unlock()
		if caught || ctx.Err() != nil {
			break
		}
		select {
		case err := <-p.done:
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
	close(p.stop)
	return <-p.done
}
