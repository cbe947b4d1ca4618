package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/serdes"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The bad-input tests run the deadletter example (payments ≥ 1000 go to
// large-payments; IsLarge panics on a negative amount) under exactly-once
// on the real broker, with good payments interleaved with the four kinds
// of bad input a stream application meets, and each error policy chosen
// at run time with the run flags.

// badKind is a kind of bad input.
type badKind int

const (
	badBytes     badKind = iota // value bytes no msgpack decoder reads
	badSchema                   // valid msgpack of another record (an Order)
	badTimestamp                // a good payment with a negative timestamp
	badPanic                    // a payment whose processing panics
	badKinds
)

// badMessage is the start of the __streams.errors.message header (and of
// the fail policy's error) for each kind. The wrong schema names the field
// path of the value that does not decode.
var badMessage = map[badKind]string{
	badBytes:     "streamgen: deserialization failed: value: streamgen: decode at offset 0: want map, got invalid byte 0xc1",
	badSchema:    "streamgen: deserialization failed: value: streamgen: decode amount at offset ",
	badTimestamp: "streamgen: invalid timestamp: extracted timestamp -1 is negative",
	badPanic:     "streamgen: processing failed: panic: negative payment amount",
}

// badException is the __streams.errors.exception header for each kind:
// Kafka's exception class for the failures Kafka has one for.
var badException = map[badKind]string{
	badBytes:     "org.apache.kafka.common.errors.SerializationException",
	badSchema:    "org.apache.kafka.common.errors.SerializationException",
	badTimestamp: "org.apache.kafka.streams.errors.StreamsException",
	badPanic:     "streamgen.Panic",
}

// badInputPartitions is the partition count of payments: the bad records
// land in both, so the headers' partitions are checked too.
const badInputPartitions = 2

// inputRec is a produced payment, good or bad, with where it landed.
type inputRec struct {
	key       string
	value     []byte
	ts        int64
	bad       bool
	kind      badKind
	partition int32
	offset    int64
}

// paymentBytes encodes a Payment as the generated serde does: a map of
// field ids (1 order_id, 2 amount).
func paymentBytes(orderID string, amount float64) []byte {
	b := serdes.AppendMapHeader(nil, 2)
	b = append(b, 1)
	b = serdes.AppendString(b, orderID)
	b = append(b, 2)
	return serdes.AppendFloat64(b, amount)
}

// orderBytes encodes an Order of the orders example (1 id, 2 user_id,
// 3 amount): valid msgpack whose field 2 is a string where a Payment has
// its float64 amount.
func orderBytes(id, user string, amount float64) []byte {
	b := serdes.AppendMapHeader(nil, 3)
	b = append(b, 1)
	b = serdes.AppendString(b, id)
	b = append(b, 2)
	b = serdes.AppendString(b, user)
	b = append(b, 3)
	return serdes.AppendFloat64(b, amount)
}

// badInput is the input: good payments (all large, so every one must
// come out on large-payments) with nBad bad records of the four kinds
// interleaved, round robin over the partitions. The first bad record of
// each partition is of the wrong schema, so the fail policy's error always
// carries a field path.
func badInput(nGood, nBad int) []inputRec {
	var out []inputRec
	every := nGood / nBad
	bad := 0
	for i := 0; i < nGood; i++ {
		id := fmt.Sprintf("o%d", i+1)
		out = append(out, inputRec{key: fmt.Sprintf("g%d", i+1), value: paymentBytes(id, float64(1000+i)), ts: t0 + int64(len(out))*second})
		if (i+1)%every == 0 && bad < nBad {
			kind := []badKind{badSchema, badSchema, badBytes, badTimestamp, badPanic, badBytes, badTimestamp, badPanic}[bad%8]
			r := inputRec{key: fmt.Sprintf("b%d", bad+1), ts: t0 + int64(len(out))*second, bad: true, kind: kind}
			switch kind {
			case badBytes:
				r.value = []byte{0xc1}
			case badSchema:
				r.value = orderBytes(fmt.Sprintf("x%d", bad), "u1", 12.5)
			case badTimestamp:
				r.value, r.ts = paymentBytes(fmt.Sprintf("t%d", bad), 5000), -1
			case badPanic:
				r.value = paymentBytes(fmt.Sprintf("p%d", bad), -5)
			}
			out = append(out, r)
			bad++
		}
	}
	for i := range out {
		out[i].partition = int32(i % badInputPartitions)
	}
	return out
}

// produceInput writes the records in order, one at a time, so each one's
// partition and offset are known, and returns them with their offsets.
func produceInput(t *testing.T, recs []inputRec) []inputRec {
	t.Helper()
	cl := newProducer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range recs {
		r := &kgo.Record{Topic: "payments", Partition: recs[i].partition, Key: []byte(recs[i].key), Value: recs[i].value,
			Timestamp: time.UnixMilli(recs[i].ts)}
		if recs[i].bad {
			r.Headers = []kgo.RecordHeader{{Key: "trace", Value: []byte("t-" + recs[i].key)}}
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("producing %s: %v", recs[i].key, err)
		}
		recs[i].offset = r.Offset
	}
	return recs
}

// badInputSetup recreates the example's topics (payments with two
// partitions) and produces the input.
func badInputSetup(t *testing.T, appID string, nGood, nBad int) (bin string, recs []inputRec) {
	bin = buildExample(t, "deadletter")
	recreateTopics(t, map[string]int32{"payments": badInputPartitions, "large-payments": badInputPartitions, "payments-dlq": 1}, appID)
	recs = produceInput(t, badInput(nGood, nBad))
	// The broker keeps a producer's negative timestamp; check it, or the
	// test would prove nothing about negative timestamps.
	stored := map[string]int64{}
	for _, g := range readCommitted(t, "payments") {
		stored[string(g.Key)] = g.Timestamp.UnixMilli()
	}
	for _, r := range recs {
		if stored[r.key] != r.ts {
			t.Fatalf("the broker stored %s with timestamp %d, want %d", r.key, stored[r.key], r.ts)
		}
	}
	return bin, recs
}

// runBadInput runs the example under exactly-once until it is idle and
// returns the process (exited).
func runBadInput(t *testing.T, bin, appID, stateDir string, policyFlags ...string) (*proc, error) {
	t.Helper()
	args := append([]string{"run", "--brokers", strings.Join(kafkatest.Brokers(t), ","), "--application-id", appID,
		"--state-dir", stateDir, "--guarantee", "exactly_once_v2", "--cache-bytes", "0", "--until-idle", "3s"}, policyFlags...)
	p := startProc(t, appID, bin, args...)
	return p, p.wait(3 * time.Minute)
}

// totals reads the engine's closing "totals" log line.
func totals(t *testing.T, p *proc) (skipped, deadLettered int64) {
	t.Helper()
	ls := p.logsWith("totals")
	if len(ls) != 1 {
		t.Fatalf("%d totals log lines, want 1", len(ls))
	}
	return ls[0].int("skipped"), ls[0].int("dead_lettered")
}

// checkGoodOnce checks that large-payments holds every good payment exactly
// once, with the bytes it was produced with, and nothing else.
func checkGoodOnce(t *testing.T, recs []inputRec) {
	t.Helper()
	want := map[string]string{}
	for _, r := range recs {
		if !r.bad {
			want[r.key] = string(r.value)
		}
	}
	seen := map[string]int{}
	for _, r := range readCommitted(t, "large-payments") {
		k := string(r.Key)
		seen[k]++
		v, ok := want[k]
		if !ok {
			t.Errorf("large-payments holds %q, which is not a good payment", k)
			continue
		}
		if string(r.Value) != v {
			t.Errorf("large-payments %q = %x, want %x", k, r.Value, v)
		}
	}
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("good payment %q is on large-payments %d times, want exactly once", k, seen[k])
		}
	}
	t.Logf("large-payments: %d good payments, each exactly once", len(want))
}

// checkDeadLetters checks that payments-dlq holds exactly the bad records,
// each once, with its original key, value, timestamp and headers plus the
// error headers naming where it came from and why.
func checkDeadLetters(t *testing.T, recs []inputRec) {
	t.Helper()
	want := map[string]inputRec{}
	for _, r := range recs {
		if r.bad {
			want[r.key] = r
		}
	}
	got := readCommitted(t, "payments-dlq")
	if len(got) != len(want) {
		t.Errorf("payments-dlq holds %d records, want the %d bad ones", len(got), len(want))
	}
	seen := map[string]bool{}
	for _, g := range got {
		k := string(g.Key)
		r, ok := want[k]
		if !ok || seen[k] {
			t.Errorf("payments-dlq holds %q (bad: %v, seen before: %v)", k, ok, seen[k])
			continue
		}
		seen[k] = true
		if string(g.Value) != string(r.value) || g.Timestamp.UnixMilli() != r.ts {
			t.Errorf("dead letter %q = %x@%d, want the original %x@%d", k, g.Value, g.Timestamp.UnixMilli(), r.value, r.ts)
		}
		if err := checkDeadLetterHeaders(g.Headers, wantDeadLetter(r)); err != nil {
			t.Errorf("dead letter %q (%s[%d]@%d): %v; headers = %q", k, "payments", r.partition, r.offset, err, g.Headers)
		}
	}
	t.Logf("payments-dlq: %d bad records, each once, headers checked", len(seen))
}

// deadLetterWant is what a dead letter's headers must say: where its
// input record was, its trace header, and its error.
type deadLetterWant struct {
	topic     string
	partition int32
	offset    int64
	trace     string
	exception string
	message   string // the message's start
	panicked  bool   // the stack trace starts at the panicking IsLarge
}

// wantDeadLetter is what the dead letter of the bad payment r says.
func wantDeadLetter(r inputRec) deadLetterWant {
	return deadLetterWant{topic: "payments", partition: r.partition, offset: r.offset, trace: "t-" + r.key,
		exception: badException[r.kind], message: badMessage[r.kind], panicked: r.kind == badPanic}
}

// checkDeadLetterHeaders checks a dead letter's headers: the original
// trace header first, then KIP-1034's six in Kafka's order and encoding,
// then the legacy streamgen.error.* four.
func checkDeadLetterHeaders(hs []kgo.RecordHeader, w deadLetterWant) error {
	keys := make([]string, len(hs))
	h := map[string]string{}
	for i, x := range hs {
		keys[i], h[x.Key] = x.Key, string(x.Value)
	}
	wantKeys := []string{"trace", "__streams.errors.exception", "__streams.errors.message", "__streams.errors.stacktrace",
		"__streams.errors.topic", "__streams.errors.partition", "__streams.errors.offset",
		"streamgen.error.topic", "streamgen.error.partition", "streamgen.error.offset", "streamgen.error.message"}
	partition, offset := strconv.Itoa(int(w.partition)), strconv.FormatInt(w.offset, 10)
	msg := h["__streams.errors.message"]
	switch {
	case !slices.Equal(keys, wantKeys):
		return fmt.Errorf("header keys %q, want %q", keys, wantKeys)
	case h["trace"] != w.trace:
		return errors.New("original trace header lost")
	case h["__streams.errors.exception"] != w.exception:
		return fmt.Errorf("exception %q, want %q", h["__streams.errors.exception"], w.exception)
	case !strings.HasPrefix(msg, w.message) || strings.Contains(msg, "\n"):
		return fmt.Errorf("message %q, want one line starting %q", msg, w.message)
	case !strings.HasPrefix(h["__streams.errors.stacktrace"], w.exception+": "+msg+"\n"):
		return errors.New("stack trace does not start with \"exception: message\"")
	case w.panicked && !panicFrameFirst.MatchString(h["__streams.errors.stacktrace"]):
		return errors.New("panic's stack trace does not start at the panicking IsLarge, with no directory")
	case h["__streams.errors.topic"] != w.topic || h["__streams.errors.partition"] != partition || h["__streams.errors.offset"] != offset:
		return errors.New("__streams.errors topic, partition or offset do not name the input record")
	case h["streamgen.error.topic"] != w.topic || h["streamgen.error.partition"] != partition ||
		h["streamgen.error.offset"] != offset || h["streamgen.error.message"] != msg:
		return errors.New("legacy streamgen.error.* headers differ")
	}
	return nil
}

// panicFrameFirst matches a panic's stack trace whose first frame is the
// panicking IsLarge (its package is main in the e2e build), in Java's shape
// with the file's base name only.
var panicFrameFirst = regexp.MustCompile("^[^\n]*\n\tat [^\n(]*\\.IsLarge\\(deadletter\\.go:[0-9]+\\)\n")

func countBad(recs []inputRec) int64 {
	var n int64
	for _, r := range recs {
		if r.bad {
			n++
		}
	}
	return n
}

// TestBadInputDeadLetter: under the example's own policies (everything
// dead_letter), the N bad records end in payments-dlq, exactly once each,
// and every good payment in large-payments exactly once.
func TestBadInputDeadLetter(t *testing.T) {
	kafkatest.Brokers(t)
	appID := uniqueID("badinput-dlq")
	bin, recs := badInputSetup(t, appID, 80, 8)
	p, err := runBadInput(t, bin, appID, t.TempDir())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkDeadLetters(t, recs)
	checkGoodOnce(t, recs)
	if skipped, dl := totals(t, p); skipped != 0 || dl != countBad(recs) {
		t.Errorf("totals: skipped %d, dead-lettered %d; want 0, %d", skipped, dl, countBad(recs))
	}
}

// TestBadInputContinue: with every policy overridden to skip the record,
// the good payments come out once, nothing goes to the dead-letter topic,
// and the engine counts the N skipped records.
func TestBadInputContinue(t *testing.T) {
	kafkatest.Brokers(t)
	appID := uniqueID("badinput-continue")
	bin, recs := badInputSetup(t, appID, 80, 8)
	p, err := runBadInput(t, bin, appID, t.TempDir(),
		"--on-deserialization-error", "continue", "--on-processing-error", "continue", "--invalid-timestamp", "skip")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkGoodOnce(t, recs)
	if n := len(readCommitted(t, "payments-dlq")); n != 0 {
		t.Errorf("payments-dlq holds %d records under continue, want 0", n)
	}
	if skipped, dl := totals(t, p); skipped != countBad(recs) || dl != 0 {
		t.Errorf("totals: skipped %d, dead-lettered %d; want %d, 0", skipped, dl, countBad(recs))
	}
}

// failLine matches the fail policy's error: where the record is, then why.
var failLine = regexp.MustCompile(`^topic "payments" partition (\d+) offset (\d+): (streamgen: .*)$`)

// TestBadInputFailThenDeadLetter: under fail the application stops at the
// first bad record with an error naming topic, partition, offset and the
// field path; its offset and the bad records after it are not committed.
// Restarted with dead_letter, it delivers everything: every good payment
// once (across both runs), every bad record in the dead-letter topic.
func TestBadInputFailThenDeadLetter(t *testing.T) {
	kafkatest.Brokers(t)
	appID := uniqueID("badinput-fail")
	bin, recs := badInputSetup(t, appID, 80, 8)
	stateDir := t.TempDir()
	p, err := runBadInput(t, bin, appID, stateDir,
		"--on-deserialization-error", "fail", "--on-processing-error", "fail", "--invalid-timestamp", "fail")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("run under fail exited with %v, want exit status 1", err)
	}
	var m []string
	p.mu.Lock()
	for _, l := range p.stderr {
		if mm := failLine.FindStringSubmatch(l); mm != nil && m == nil {
			m = mm
		}
	}
	p.mu.Unlock()
	if m == nil {
		t.Fatal(`stderr has no error "topic "payments" partition P offset O: ..."`)
	}
	part, _ := strconv.Atoi(m[1])
	off, _ := strconv.ParseInt(m[2], 10, 64)
	var first *inputRec
	for i := range recs {
		if recs[i].bad && recs[i].partition == int32(part) {
			first = &recs[i]
			break
		}
	}
	if first == nil || first.offset != off {
		t.Fatalf("fail stopped at payments[%d]@%d, want the first bad record of that partition (%+v)", part, off, first)
	}
	if !strings.HasPrefix(m[3], badMessage[badSchema]) {
		t.Fatalf("fail error %q, want the decode error with its field path %q", m[3], badMessage[badSchema])
	}
	t.Logf("fail: %s", m[0])
	// Nothing past a bad record is committed: per partition, the group's
	// committed offset is at most the first bad record's.
	committed := committedOffsets(t, appID)
	for partition := int32(0); partition < badInputPartitions; partition++ {
		for _, r := range recs {
			if r.bad && r.partition == partition {
				if c, ok := committed[partition]; ok && c > r.offset {
					t.Fatalf("after fail, payments[%d] committed at %d, past the bad record at %d", partition, c, r.offset)
				}
				break
			}
		}
	}
	if n := len(readCommitted(t, "payments-dlq")); n != 0 {
		t.Fatalf("payments-dlq holds %d records after fail, want 0", n)
	}

	// A restart under the example's dead_letter policies, same state.
	p2, err := runBadInput(t, bin, appID, stateDir)
	if err != nil {
		t.Fatalf("restart with dead_letter: %v", err)
	}
	checkDeadLetters(t, recs)
	checkGoodOnce(t, recs)
	if _, dl := totals(t, p2); dl != countBad(recs) {
		t.Errorf("restart dead-lettered %d, want %d", dl, countBad(recs))
	}
}

// committedOffsets returns the group's committed offsets of payments.
func committedOffsets(t *testing.T, group string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := admin(t).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("committed offsets of %s: %v", group, err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == "payments" && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out
}
