package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kadmin"
	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/spec"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// binDir holds the example binaries, built once per test run.
var binDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "streamgen-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// repoRoot is the module root, two levels above this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return root
}

// examples are the example applications under test, built together.
var examples = []string{"orders", "ordercounts", "ordersummary", "windows", "joins", "deadletter"}

var (
	buildOnce sync.Once
	buildErr  error
)

// buildExample returns the path of the examples/<name> binary. The first
// call builds every example with one go command (they share the runtime's
// compilation and link in parallel) into a directory of this test run.
func buildExample(t testing.TB, name string) string {
	t.Helper()
	root := repoRoot(t)
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		args := []string{"build", "-o", binDir + string(filepath.Separator)}
		for _, ex := range examples {
			args = append(args, "./examples/"+ex)
		}
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := filepath.Join(binDir, name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("example %q: %v", name, err)
	}
	return bin
}

var (
	topicLocksMu sync.Mutex
	topicLocks   = map[string]*sync.Mutex{}
)

// lockTopics gives the test the examples' fixed topic names until it ends:
// tests that share a name run one after the other, others in parallel.
// recreateTopics calls it first, so its cleanup (which deletes the topics)
// runs before the names are released.
func lockTopics(t testing.TB, names ...string) {
	t.Helper()
	sorted := append([]string(nil), names...)
	sort.Strings(sorted) // one order for everyone: no deadlock
	for _, n := range sorted {
		topicLocksMu.Lock()
		m := topicLocks[n]
		if m == nil {
			m = &sync.Mutex{}
			topicLocks[n] = m
		}
		topicLocksMu.Unlock()
		m.Lock()
		t.Cleanup(m.Unlock)
	}
}

// declaredTopics reads the example's spec: every declared topic with its
// partition count (1 when the spec leaves it open).
func declaredTopics(t testing.TB, example string) map[string]int32 {
	t.Helper()
	prog, err := spec.ParseFile(filepath.Join(repoRoot(t), "examples", example, "streamgen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, tp := range prog.Topics {
		n := int32(tp.Partitions)
		if n <= 0 {
			n = 1
		}
		out[tp.Name] = n
	}
	return out
}

func uniqueID(prefix string) string {
	var b [4]byte
	rand.Read(b[:])
	return prefix + "-e2e-" + hex.EncodeToString(b[:])
}

// recreateTopics deletes the topics if they exist (a previous, interrupted
// run may have left them with records) and creates them empty. They are
// deleted again when the test ends, with every topic of appID. The test
// holds the topic names (lockTopics) until then.
func recreateTopics(t testing.TB, topics map[string]int32, appID string) {
	t.Helper()
	names := slices.Sorted(maps.Keys(topics))
	lockTopics(t, names...)
	freshTopics(t, topics)
	t.Cleanup(func() {
		cl := admin(t)
		deleteTopics(t, cl, names...)
		if appID != "" {
			deleteTopics(t, cl, topicsWithPrefix(t, cl, appID+"-")...)
		}
	})
}

// freshTopics deletes the topics if they exist and creates them empty; the
// test must hold their names (recreateTopics does, for the whole test).
func freshTopics(t testing.TB, topics map[string]int32) {
	t.Helper()
	names := slices.Sorted(maps.Keys(topics))
	adm := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	deleteTopics(t, adm, names...)
	for _, name := range names {
		for {
			resp, err := adm.CreateTopic(ctx, topics[name], 1, kafkatest.Retained(), name)
			if err == nil {
				err = resp.Err
			}
			if err == nil {
				break
			}
			// A topic deleted a moment ago may still be on its way out.
			if !errors.Is(err, kerr.TopicAlreadyExists) || ctx.Err() != nil {
				t.Fatalf("creating topic %q: %v", name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitLeaders(t, ctx, adm, topics)
}

// admin returns an admin client whose metadata answers are fresh: franz-go
// caches metadata for MetadataMinAge (5 s by default), which would make a
// deleted topic look alive that long.
func admin(t testing.TB) *kadm.Client {
	t.Helper()
	return kadm.NewClient(kafkatest.Client(t, kgo.MetadataMinAge(50*time.Millisecond)))
}

func waitLeaders(t testing.TB, ctx context.Context, adm *kadm.Client, topics map[string]int32) {
	t.Helper()
	if err := kadmin.WaitLed(ctx, adm, topics, 50*time.Millisecond); err != nil {
		t.Fatalf("topics %v have no leaders: %v", slices.Sorted(maps.Keys(topics)), err)
	}
}

func topicsWithPrefix(t testing.TB, adm *kadm.Client, prefix string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tds, err := adm.ListTopics(ctx)
	if err != nil {
		t.Logf("listing topics: %v", err)
		return nil
	}
	var out []string
	for _, n := range tds.Names() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// deleteTopics deletes the topics that exist and waits until they are gone
// from the metadata.
func deleteTopics(t testing.TB, adm *kadm.Client, names ...string) {
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resps, err := adm.DeleteTopics(ctx, names...)
	if err != nil {
		t.Logf("deleting topics %v: %v", names, err)
		return
	}
	for _, r := range resps {
		if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			t.Logf("deleting topic %q: %v", r.Topic, r.Err)
		}
	}
	for ctx.Err() == nil {
		md, err := adm.Metadata(ctx, names...)
		gone := err == nil
		for _, n := range names {
			if td, ok := md.Topics[n]; gone && ok && td.Err == nil {
				gone = false
			}
		}
		if gone {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is a running `<bin> run`, its stdout kept and its JSON log lines
// parsed as they come.
type proc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd

	mu     sync.Mutex
	stdout bytes.Buffer
	logs   []logLine
	stderr []string // every stderr line, for failure reports

	done    chan struct{}
	waitErr error
}

// logLine is one slog JSON line of the engine.
type logLine struct {
	Time  time.Time
	Msg   string
	Attrs map[string]any
}

func (l logLine) int(key string) int64 {
	switch v := l.Attrs[key].(type) {
	case float64:
		return int64(v)
	case string:
		var n int64
		fmt.Sscan(v, &n)
		return n
	}
	return -1
}

func (l logLine) str(key string) string {
	s, _ := l.Attrs[key].(string)
	return s
}

// startProc runs bin with args (the run command's, with JSON logs added).
// The process is killed when the test ends if it is still running.
func startProc(t testing.TB, name, bin string, args ...string) *proc {
	t.Helper()
	args = append(args, "--log-format", "json")
	p := &proc{t: t, name: name, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout = &lockedWriter{mu: &p.mu, w: &p.stdout}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			line := sc.Text()
			var m map[string]any
			p.mu.Lock()
			p.stderr = append(p.stderr, line)
			if json.Unmarshal([]byte(line), &m) == nil {
				l := logLine{Attrs: m}
				l.Msg, _ = m["msg"].(string)
				if ts, ok := m["time"].(string); ok {
					l.Time, _ = time.Parse(time.RFC3339Nano, ts)
				}
				p.logs = append(p.logs, l)
			}
			p.mu.Unlock()
		}
		io.Copy(io.Discard, errPipe)
	}()
	go func() {
		<-scanned
		err := p.cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			p.dumpStderr(60)
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *proc) dumpStderr(last int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := p.stderr
	if len(lines) > last {
		lines = lines[len(lines)-last:]
	}
	p.t.Logf("last %d stderr lines of %s:\n%s", len(lines), p.name, strings.Join(lines, "\n"))
}

// wait waits for the process to exit and returns its error (nil for exit 0).
func (p *proc) wait(timeout time.Duration) error {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("%s did not exit within %s", p.name, timeout)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop(timeout time.Duration) {
	p.t.Helper()
	if err := p.terminate(timeout); err != nil {
		p.t.Fatal(err)
	}
}

// terminate is stop for other goroutines than the test's: it returns what
// went wrong.
func (p *proc) terminate(timeout time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM %s: %v", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %s of SIGTERM", p.name, timeout)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waitErr != nil {
		return fmt.Errorf("%s after SIGTERM: %v", p.name, p.waitErr)
	}
	return nil
}

// kill9 kills the process with SIGKILL and waits until it is gone.
func (p *proc) kill9() {
	p.t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		p.t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	<-p.done
}

func (p *proc) output() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.stdout.Bytes())
}

// logsWith returns the log lines whose message is msg.
func (p *proc) logsWith(msg string) []logLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []logLine
	for _, l := range p.logs {
		if l.Msg == msg {
			out = append(out, l)
		}
	}
	return out
}

// waitLog waits until a log line satisfies pred and returns it; it fails
// the test if the process exits first or the timeout passes.
func (p *proc) waitLog(timeout time.Duration, what string, pred func(logLine) bool) logLine {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	seen := 0
	for {
		p.mu.Lock()
		for ; seen < len(p.logs); seen++ {
			if pred(p.logs[seen]) {
				l := p.logs[seen]
				p.mu.Unlock()
				return l
			}
		}
		p.mu.Unlock()
		if p.exited() {
			// The last lines may have arrived with the exit.
			p.mu.Lock()
			more := seen < len(p.logs)
			p.mu.Unlock()
			if !more {
				p.t.Fatalf("%s exited (%v) before logging %s", p.name, p.waitErr, what)
			}
			continue
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not log %s within %s", p.name, what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isRunning matches the engine's move to RUNNING.
func isRunning(l logLine) bool { return l.Msg == "state change" && l.str("to") == "RUNNING" }

// replay runs `<bin> replay --partitions n --strict` on the input file.
func replay(t testing.TB, bin, input string, partitions int32) []byte {
	t.Helper()
	in, err := os.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "replay", "--strict", "--partitions", fmt.Sprint(partitions))
	cmd.Stdin = in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s replay: %v\n%s", filepath.Base(bin), err, stderr.String())
	}
	return stdout.Bytes()
}

// outRec is one output line of run --print or replay.
type outRec struct {
	Topic     string            `json:"topic"`
	Key       json.RawMessage   `json:"key"`
	Value     json.RawMessage   `json:"value"`
	Timestamp int64             `json:"timestamp"`
	Partition *int32            `json:"partition,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// groupKey names the sequence a record belongs to: topic, partition, key.
func (r outRec) groupKey() string {
	p := int32(-1)
	if r.Partition != nil {
		p = *r.Partition
	}
	return fmt.Sprintf("%s[%d] %s", r.Topic, p, r.Key)
}

func (r outRec) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

func parseOutput(t testing.TB, what string, data []byte) []outRec {
	t.Helper()
	var out []outRec
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r outRec
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s line %d: %v: %s", what, i+1, err, line)
		}
		// Canonical JSON for byte comparison.
		r.Key = canonical(t, r.Key)
		r.Value = canonical(t, r.Value)
		if st, ok := r.Headers["__streams.errors.stacktrace"]; ok {
			r.Headers["__streams.errors.stacktrace"] = userFrames(st)
		}
		out = append(out, r)
	}
	return out
}

// userFrames cuts a dead letter's stack trace after the task's Process
// frame: the frames below it are the engine's (the replay driver's or the
// Kafka worker's), which differ between replay and run by design.
func userFrames(stack string) string {
	const process = "/runtime/sgstream.(*task).Process("
	i := strings.Index(stack, process)
	if i < 0 {
		return stack
	}
	end := strings.IndexByte(stack[i:], '\n')
	if end < 0 {
		return stack
	}
	return stack[:i+end+1]
}

func canonical(t testing.TB, m json.RawMessage) json.RawMessage {
	if m == nil {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(m))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON %s: %v", m, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sequences groups records by topic, partition and key, in order.
func sequences(recs []outRec) map[string][]string {
	out := map[string][]string{}
	for _, r := range recs {
		k := r.groupKey()
		out[k] = append(out[k], r.String())
	}
	return out
}

// diffSequences compares two outputs per topic, partition and key, in
// order, and describes the first differences ("" when equal).
func diffSequences(want, got []outRec) string {
	w, g := sequences(want), sequences(got)
	both := maps.Clone(w)
	maps.Copy(both, g) // for its keys
	var sb strings.Builder
	n := 0
	for _, k := range slices.Sorted(maps.Keys(both)) {
		ws, gs := w[k], g[k]
		if strings.Join(ws, "\n") == strings.Join(gs, "\n") {
			continue
		}
		n++
		if n > 8 {
			continue
		}
		fmt.Fprintf(&sb, "%s:\n  replay (%d):\n    %s\n  run (%d):\n    %s\n", k, len(ws), strings.Join(ws, "\n    "), len(gs), strings.Join(gs, "\n    "))
	}
	if n > 8 {
		fmt.Fprintf(&sb, "... and %d more keys differ\n", n-8)
	}
	if n > 0 {
		return fmt.Sprintf("%d of %d keys differ (replay %d records, run %d records):\n%s", n, len(both), len(want), len(got), sb.String())
	}
	return ""
}

func byTopic(recs []outRec) map[string][]outRec {
	out := map[string][]outRec{}
	for _, r := range recs {
		out[r.Topic] = append(out[r.Topic], r)
	}
	return out
}

// newProducer returns a client that writes to the partitions it is told
// (Kafka's default partitioner is applied by the callers through
// sgpartition, as the examples' --input does).
func newProducer(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return kafkatest.Client(t, append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5 * time.Millisecond)}, opts...)...)
}

// readCommitted reads every committed record of topic up to its current
// end (last stable offset).
func readCommitted(t testing.TB, topic string) []*kgo.Record {
	t.Helper()
	adm := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset of %s[%d]: %v", o.Topic, o.Partition, o.Err)
		}
		if o.Offset > 0 {
			parts[o.Partition] = kgo.NewOffset().AtStart()
			want[o.Partition] = o.Offset
		}
	})
	if len(parts) == 0 {
		return nil
	}
	cl := kafkatest.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	var out []*kgo.Record
	pos := map[int32]int64{}
	for {
		done := true
		for p, end := range want {
			if pos[p] < end {
				done = false
			}
		}
		if done {
			break
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v (at %v, want %v)", topic, ctx.Err(), pos, want)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("reading %s[%d]: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() && r.Offset < want[r.Partition] {
				out = append(out, r)
			}
		})
	}
	return out
}
