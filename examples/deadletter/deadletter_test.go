package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// TestTypedDriverDeadLetters checks the spec's dead_letter policies, which
// the generated NewTestDriver applies: a payment whose processing panics
// and one whose bytes do not decode go to payments-dlq with their original
// key, value, timestamp and headers plus the error headers, and the
// application goes on to pass the next large payment.
func TestTypedDriverDeadLetters(t *testing.T) {
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	trace := sgstream.Header{Key: "trace", Value: []byte("t-3")}
	must(d.PipePayments("p1", &Payment{OrderID: "o1", Amount: 1500}, 1_000))
	must(d.PipePayments("p2", &Payment{OrderID: "o2", Amount: 10}, 2_000))
	must(d.PipePayments("p3", &Payment{OrderID: "o3", Amount: -5}, 3_000, trace)) // IsLarge panics
	// Bytes no Payment decodes from, piped raw through the embedded driver.
	must(d.Pipe(sgstream.RawRecord{Topic: "payments", Partition: -1, Key: []byte("p4"), Value: []byte{0xc1}, Timestamp: 4_000}))
	must(d.PipePayments("p5", &Payment{OrderID: "o5", Amount: 1000}, 5_000))

	large, err := d.ReadLargePayments()
	must(err)
	wantLarge := []sgstream.Record[string, *Payment]{
		{Key: "p1", Value: &Payment{OrderID: "o1", Amount: 1500}, Timestamp: 1_000},
		{Key: "p5", Value: &Payment{OrderID: "o5", Amount: 1000}, Timestamp: 5_000},
	}
	if !reflect.DeepEqual(large, wantLarge) {
		t.Fatalf("large-payments:\n got %+v\nwant %+v", large, wantLarge)
	}

	dlq, err := d.ReadPaymentsDlq()
	must(err)
	if len(dlq) != 2 {
		t.Fatalf("payments-dlq has %d records, want 2: %+v", len(dlq), dlq)
	}
	// The panic: the original bytes still decode to the payment.
	p3 := dlq[0]
	if string(p3.Key) != "p3" || p3.Timestamp != 3_000 {
		t.Fatalf("first dead letter = %q@%d, want p3@3000", p3.Key, p3.Timestamp)
	}
	if v, err := serdes.Msgpack[Payment]().Decode(p3.Value); err != nil || *v != (Payment{OrderID: "o3", Amount: -5}) {
		t.Fatalf("first dead letter value = %+v, %v; want the original payment", v, err)
	}
	panicMsg := "streamgen: processing failed: panic: negative payment amount"
	checkErrorHeaders(t, p3.Headers, []sgstream.Header{trace}, "2", sgstream.ExceptionPanic, panicMsg)
	if st := header(p3.Headers, sgstream.HeaderErrorsStacktrace); !strings.HasPrefix(st, sgstream.ExceptionPanic+": "+panicMsg+"\n\tat github.com/streamgen/streamgen/examples/deadletter.IsLarge(deadletter.go:") {
		t.Fatalf("first dead letter stack trace = %q, want it to start at IsLarge", st)
	}

	// The undecodable record: bytes as piped; the message names the cause.
	p4 := dlq[1]
	if string(p4.Key) != "p4" || !reflect.DeepEqual(p4.Value, []byte{0xc1}) || p4.Timestamp != 4_000 {
		t.Fatalf("second dead letter = %q:%x@%d, want p4:c1@4000", p4.Key, p4.Value, p4.Timestamp)
	}
	msg := header(p4.Headers, sgstream.HeaderErrorsMessage)
	if !strings.HasPrefix(msg, "streamgen: deserialization failed: value: ") {
		t.Fatalf("second dead letter message = %q, want a deserialization message", msg)
	}
	checkErrorHeaders(t, p4.Headers, nil, "3", sgstream.ExceptionSerialization, msg)
}

// checkErrorHeaders checks a dead letter's headers: the original ones
// (orig), then Kafka Streams' KIP-1034 headers, then the legacy
// streamgen.error.* ones, for payments partition 0 at offset. The stack
// trace must start with "exception: message"; its frames are checked by
// the callers that have them.
func checkErrorHeaders(t *testing.T, got, orig []sgstream.Header, offset, exception, message string) {
	t.Helper()
	stack := header(got, sgstream.HeaderErrorsStacktrace)
	if !strings.HasPrefix(stack, exception+": "+message+"\n") {
		t.Errorf("stack trace = %q, want it to start with %q", stack, exception+": "+message)
	}
	want := append(append([]sgstream.Header(nil), orig...),
		sgstream.Header{Key: "__streams.errors.exception", Value: []byte(exception)},
		sgstream.Header{Key: "__streams.errors.message", Value: []byte(message)},
		sgstream.Header{Key: "__streams.errors.stacktrace", Value: []byte(stack)},
		sgstream.Header{Key: "__streams.errors.topic", Value: []byte("payments")},
		sgstream.Header{Key: "__streams.errors.partition", Value: []byte("0")},
		sgstream.Header{Key: "__streams.errors.offset", Value: []byte(offset)},
		sgstream.Header{Key: "streamgen.error.topic", Value: []byte("payments")},
		sgstream.Header{Key: "streamgen.error.partition", Value: []byte("0")},
		sgstream.Header{Key: "streamgen.error.offset", Value: []byte(offset)},
		sgstream.Header{Key: "streamgen.error.message", Value: []byte(message)},
	)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("dead-letter headers:\n got %q\nwant %q", got, want)
	}
}

func header(hs []sgstream.Header, key string) string {
	for _, h := range hs {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// TestTypedDriverDeadLettersNegativeTimestamp checks the spec's
// invalid_timestamp: dead_letter: a payment whose timestamp is negative
// goes to payments-dlq as it came, and the next one goes on.
func TestTypedDriverDeadLettersNegativeTimestamp(t *testing.T) {
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.PipePayments("p1", &Payment{OrderID: "o1", Amount: 1500}, -1); err != nil {
		t.Fatal(err)
	}
	if err := d.PipePayments("p2", &Payment{OrderID: "o2", Amount: 2500}, 2_000); err != nil {
		t.Fatal(err)
	}
	large, err := d.ReadLargePayments()
	if err != nil {
		t.Fatal(err)
	}
	if len(large) != 1 || large[0].Key != "p2" {
		t.Fatalf("large-payments = %+v, want p2 only", large)
	}
	dlq, err := d.ReadPaymentsDlq()
	if err != nil {
		t.Fatal(err)
	}
	if len(dlq) != 1 || string(dlq[0].Key) != "p1" || dlq[0].Timestamp != -1 {
		t.Fatalf("payments-dlq = %+v, want p1 with its timestamp -1", dlq)
	}
	tsMsg := "streamgen: invalid timestamp: extracted timestamp -1 is negative"
	checkErrorHeaders(t, dlq[0].Headers, nil, "0", sgstream.ExceptionStreams, tsMsg)
	if st := header(dlq[0].Headers, sgstream.HeaderErrorsStacktrace); st != sgstream.ExceptionStreams+": "+tsMsg+"\n" {
		t.Fatalf("stack trace = %q, want the exception line alone (the error wraps nothing)", st)
	}
}
