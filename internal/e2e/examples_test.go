package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// exampleCase is one example run end to end.
type exampleCase struct {
	name    string
	outputs []string // the topics the topology writes
	// subset lists output topics where run legitimately emits fewer
	// records than replay (see flushClosedWindows): per partition and key,
	// run's records must be replay's, in replay's order, and run must emit
	// every record replay emits for the lines during adds.
	subset []string
	// during runs while the application runs, after its input file is
	// produced. It may produce more records: those replay can read come
	// back as input lines (appended to replay's input), those it cannot
	// come back with the output run must print for them.
	during func(t *testing.T, p *proc, fileOutput []outRec) (more []line, moreOutput []outRec)
}

var exampleCases = []exampleCase{
	{name: "orders", outputs: []string{"processed-orders"}},
	{name: "ordercounts", outputs: []string{"order-counts"}},
	{name: "ordersummary", outputs: []string{"order-summaries"}},
	{name: "windows", outputs: []string{"tumbling-counts", "hopping-counts", "sliding-counts", "session-counts", "final-counts"},
		during: flushClosedWindows, subset: []string{"final-counts"}},
	{name: "joins", outputs: []string{"paid-orders", "enriched-orders", "orders-with-profile"}},
	{name: "deadletter", outputs: []string{"large-payments", "payments-dlq"}, during: produceUndecodablePayment},
}

// TestExamplesEndToEnd runs every example on the real broker and compares
// what `run` commits to its output topics with what `replay` computes
// in process from the same input: per topic, partition and key, the same
// records (value, timestamp, headers) in the same order.
//
// The inputs are designed so that Kafka's freedom (how partitions and
// tasks interleave) cannot change a per-key sequence: see alignedKeys and
// joinsInput. The record cache is off (--cache-bytes 0), as in replay
// (TopologyTestDriver semantics), so every update is visible.
func TestExamplesEndToEnd(t *testing.T) {
	kafkatest.Brokers(t)
	for _, ex := range exampleCases {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel() // lockTopics serialises the examples that share topic names
			runExample(t, ex)
		})
	}
}

func runExample(t *testing.T, ex exampleCase) {
	brokers := kafkatest.Brokers(t)
	start := time.Now()
	phase := func(what string) { t.Logf("%6.2fs %s", time.Since(start).Seconds(), what) }
	bin := buildExample(t, ex.name)
	phase("built")
	topics := declaredTopics(t, ex.name)
	var parts int32
	for _, n := range topics {
		if parts != 0 && n != parts {
			t.Fatalf("example %s: topics of different partition counts; replay --partitions cannot mirror them", ex.name)
		}
		parts = n
	}
	appID := uniqueID(ex.name)
	recreateTopics(t, topics, appID)
	phase("topics")
	input, err := filepath.Abs(filepath.Join("testdata", ex.name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	fileOutput := parseOutput(t, "replay", replay(t, bin, input, parts))
	if len(fileOutput) == 0 {
		t.Fatal("replay printed nothing: the input exercises nothing")
	}
	args := []string{"run", "--brokers", strings.Join(brokers, ","), "--application-id", appID,
		"--state-dir", t.TempDir(), "--cache-bytes", "0", "--input", input, "--print", strings.Join(ex.outputs, ","),
		"--until-idle", "3s"}
	p := startProc(t, ex.name, bin, args...)
	var more []line
	var moreOutput []outRec
	if ex.during != nil {
		p.waitLog(60*time.Second, "input produced", func(l logLine) bool { return l.Msg == "input produced" })
		more, moreOutput = ex.during(t, p, fileOutput)
	}
	if err := p.wait(2 * time.Minute); err != nil {
		t.Fatalf("run: %v", err)
	}
	phase("ran")
	t.Cleanup(func() { phase("cleaned up") })
	want := fileOutput
	if len(more) > 0 {
		b, err := os.ReadFile(input)
		if err != nil {
			t.Fatal(err)
		}
		all := filepath.Join(t.TempDir(), "input.jsonl")
		if err := os.WriteFile(all, append(b, encodeLines(more)...), 0o644); err != nil {
			t.Fatal(err)
		}
		want = parseOutput(t, "replay", replay(t, bin, all, parts))
	}
	want = append(want, moreOutput...)
	got := parseOutput(t, "run --print", p.output())
	for topic := range byTopic(want) {
		if !contains(ex.outputs, topic) {
			t.Fatalf("replay writes %q, which the test does not print: add it to the outputs", topic)
		}
	}
	for _, topic := range ex.outputs {
		if len(byTopic(want)[topic]) == 0 {
			t.Errorf("replay writes nothing to %q: the input does not exercise it", topic)
		}
	}
	var exact, wantExact []outRec
	for _, topic := range ex.outputs {
		if contains(ex.subset, topic) {
			checkSubset(t, topic, byTopic(want)[topic], byTopic(got)[topic], byTopic(fileOutput)[topic])
			continue
		}
		exact = append(exact, byTopic(got)[topic]...)
		wantExact = append(wantExact, byTopic(want)[topic]...)
	}
	if d := diffSequences(wantExact, exact); d != "" {
		t.Fatalf("run differs from replay: %s", d)
	}
	t.Logf("%s: %d records on %d topics checked against replay", ex.name, len(got), len(ex.outputs))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkSubset checks, per partition and key, that run's records are
// replay's in replay's order with some left out, and that run has every
// record replay emitted after the input file (for the lines during added).
func checkSubset(t *testing.T, topic string, want, got, fileWant []outRec) {
	t.Helper()
	w, g := sequences(want), sequences(got)
	for k, gs := range g {
		ws := w[k]
		i := 0
		for _, r := range gs {
			for i < len(ws) && ws[i] != r {
				i++
			}
			if i == len(ws) {
				t.Fatalf("%s: run emitted %s, which is not replay's next record for %s\nreplay: %v\nrun: %v", topic, r, k, ws, gs)
			}
			i++
		}
	}
	fromFile := map[string]int{}
	for _, r := range fileWant {
		fromFile[r.String()]++
	}
	have := map[string]bool{}
	for _, r := range got {
		have[r.String()] = true
	}
	late := 0
	for _, r := range want {
		if s := r.String(); fromFile[s] > 0 {
			fromFile[s]--
		} else {
			late++
			if !have[s] {
				t.Errorf("%s: run did not emit %s, which replay emits for the records added after the file", topic, s)
			}
		}
	}
	if late == 0 {
		t.Errorf("%s: the added records make replay emit nothing: the check is vacuous", topic)
	}
	t.Logf("%s: run emitted %d of replay's %d records, each as replay did, %d of them for the added records", topic, len(got), len(want), late)
}

// flushClosedWindows makes final-counts comparable. Emit-on-close checks
// for closed windows at most once per second of wall-clock time per task
// on Kafka (Kafka Streams' emit throttle), while replay checks after every
// record. The input file is processed in well under a second, so by the
// next check stream time has moved on, and windows that closed meanwhile
// have also left the store (final-store keeps size + grace: a one-minute
// window is gone a minute after it closes) and are never emitted. Kafka
// Streams behaves the same way. What is deterministic: every window run
// emits carries replay's final count, and a record that arrives after the
// throttle interval closes and emits the windows still kept.
//
// So, once the file's records are processed and the throttle interval has
// passed, this sends one click per partition at the end of the minute of
// the file's last click: its check emits the windows of that last minute,
// on both paths.
func flushClosedWindows(t *testing.T, p *proc, fileOutput []outRec) ([]line, []outRec) {
	want := len(byTopic(fileOutput)["tumbling-counts"])
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := p.output()
		out = out[:bytes.LastIndexByte(out, '\n')+1] // whole lines only
		got := len(byTopic(parseOutput(t, "run --print", out))["tumbling-counts"])
		if got >= want {
			break
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("run printed %d of replay's %d tumbling counts", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The last check of each task happened before its last output.
	time.Sleep(1200 * time.Millisecond)
	var last int64
	for _, l := range windowsInput() {
		last = max(last, l.Timestamp)
	}
	flushAt := (last/minute + 1) * minute
	var flush []line
	for part := int32(0); part < 2; part++ {
		for i := 1; ; i++ {
			page := fmt.Sprintf("page-%d", i)
			if partitionOf(page, 2) == part {
				flush = append(flush, line{Topic: "clicks", Key: page, Value: "user-flush", Timestamp: flushAt})
				break
			}
		}
	}
	cl := newProducer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, l := range flush {
		r := &kgo.Record{Topic: l.Topic, Partition: partitionOf(l.Key.(string), 2), Key: []byte(l.Key.(string)),
			Value: []byte(l.Value.(string)), Timestamp: time.UnixMilli(l.Timestamp)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return flush, nil
}

// produceUndecodablePayment writes bytes no Payment decodes from (0xc1 is
// never used by msgpack) after the input file's records; the dead-letter
// policy must forward them with the error headers.
func produceUndecodablePayment(t *testing.T, p *proc, _ []outRec) ([]line, []outRec) {
	cl := newProducer(t)
	n := len(deadLetterInput())
	ts := t0 + time.Hour.Milliseconds()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := &kgo.Record{Topic: "payments", Partition: 0, Key: []byte("p-bad"), Value: []byte{0xc1}, Timestamp: time.UnixMilli(ts)}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if r.Offset != int64(n) {
		t.Fatalf("undecodable payment at offset %d, want %d (after the input)", r.Offset, n)
	}
	exception := "org.apache.kafka.common.errors.SerializationException"
	msg := "streamgen: deserialization failed: value: " + decodeErrorOf0xc1
	return nil, []outRec{{
		Topic: "payments-dlq", Key: jsonString(base64.StdEncoding.EncodeToString([]byte("p-bad"))),
		Value: jsonString(base64.StdEncoding.EncodeToString([]byte{0xc1})), Timestamp: ts,
		Headers: map[string]string{
			"__streams.errors.exception":  exception,
			"__streams.errors.message":    msg,
			"__streams.errors.stacktrace": exception + ": " + msg + "\nCaused by: " + decodeErrorOf0xc1 + "\n",
			"__streams.errors.topic":      "payments", "__streams.errors.partition": "0",
			"__streams.errors.offset": fmt.Sprint(n),
			"streamgen.error.topic":   "payments", "streamgen.error.partition": "0",
			"streamgen.error.offset":  fmt.Sprint(n),
			"streamgen.error.message": msg,
		},
	}}
}

// decodeErrorOf0xc1 is how the Payment serde describes the byte 0xc1.
const decodeErrorOf0xc1 = "streamgen: decode at offset 0: want map, got invalid byte 0xc1"

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
