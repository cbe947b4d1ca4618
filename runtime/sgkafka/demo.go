package sgkafka

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// createDeclaredTopics creates the spec's topics on the embedded broker:
// every topic with a codec and every external topic of the topology, with
// the topology's partition count (1 when the spec gives none).
func createDeclaredTopics(ctx context.Context, brokers []string, app *sgapp.App, tp *sgstream.Topology) error {
	want := map[string]int{}
	for _, c := range app.Topics {
		want[c.Name()] = 1
	}
	for _, ts := range tp.Topics() {
		if ts.Role != sgstream.TopicExternal && ts.Role != sgstream.TopicGlobal {
			continue
		}
		n := ts.Partitions
		if n <= 0 {
			n = 1
		}
		want[ts.Name] = n
	}
	if app.DeadLetterTopic != "" {
		if _, ok := want[app.DeadLetterTopic]; !ok {
			want[app.DeadLetterTopic] = 1
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return fmt.Errorf("streamgen: embedded kafka: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var names []string
	for name, n := range want {
		resp, err := adm.CreateTopic(ctx, int32(n), 1, nil, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("streamgen: embedded kafka: creating topic %q: %w", name, err)
		}
		names = append(names, name)
	}
	return waitTopics(ctx, adm, names)
}

// replayLine is the replay format's line (sgapp's replay command).
type replayLine struct {
	Topic     string            `json:"topic"`
	Key       json.RawMessage   `json:"key"`
	Value     json.RawMessage   `json:"value"`
	Timestamp *int64            `json:"timestamp"`
	Partition *int32            `json:"partition,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// produceInput produces the records of a replay-format file to their
// topics, partitioned as Kafka's default partitioner would (or as the line
// says), and waits until all are acknowledged.
func produceInput(ctx context.Context, brokers []string, sec []kgo.Opt, app *sgapp.App, tp *sgstream.Topology, path string) (int, error) {
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
	adm := kadm.NewClient(cl)
	parts := map[string]int32{}
	partitionsOf := func(topic string) (int32, error) {
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
	var (
		mu      sync.Mutex
		prodErr error
		n       int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var l replayLine
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return n, fmt.Errorf("streamgen: --input %s:%d: not a replay record: %v", path, lineNo, err)
		}
		if l.Topic == "" || l.Timestamp == nil {
			return n, fmt.Errorf("streamgen: --input %s:%d: a record needs \"topic\" and \"timestamp\"", path, lineNo)
		}
		c := app.Codec(l.Topic)
		if c == nil {
			return n, fmt.Errorf("streamgen: --input %s:%d: topic %q is not declared in the spec", path, lineNo, l.Topic)
		}
		k, v, err := c.EncodeJSON(l.Key, l.Value)
		if err != nil {
			return n, fmt.Errorf("streamgen: --input %s:%d: topic %q: %v", path, lineNo, l.Topic, err)
		}
		np, err := partitionsOf(l.Topic)
		if err != nil {
			return n, fmt.Errorf("streamgen: --input %s:%d: %v", path, lineNo, err)
		}
		var p int32
		switch {
		case l.Partition != nil:
			p = *l.Partition
			if p < 0 || p >= np {
				return n, fmt.Errorf("streamgen: --input %s:%d: topic %q has %d partitions, record asks for partition %d", path, lineNo, l.Topic, np, p)
			}
		case k != nil:
			p = sgpartition.Partition(k, np)
		}
		r := &kgo.Record{Topic: l.Topic, Partition: p, Key: k, Value: v, Timestamp: time.UnixMilli(*l.Timestamp)}
		keys := make([]string, 0, len(l.Headers))
		for h := range l.Headers {
			keys = append(keys, h)
		}
		sort.Strings(keys)
		for _, h := range keys {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h, Value: []byte(l.Headers[h])})
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
	l := replayLine{Topic: r.Topic, Key: key, Value: value, Timestamp: &ts}
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
