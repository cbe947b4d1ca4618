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
	errorHeaders := func(offset, message string) []sgstream.Header {
		return []sgstream.Header{
			{Key: "streamgen.error.topic", Value: []byte("payments")},
			{Key: "streamgen.error.partition", Value: []byte("0")},
			{Key: "streamgen.error.offset", Value: []byte(offset)},
			{Key: "streamgen.error.message", Value: []byte(message)},
		}
	}

	// The panic: the original bytes still decode to the payment.
	p3 := dlq[0]
	if string(p3.Key) != "p3" || p3.Timestamp != 3_000 {
		t.Fatalf("first dead letter = %q@%d, want p3@3000", p3.Key, p3.Timestamp)
	}
	if v, err := serdes.Msgpack[Payment]().Decode(p3.Value); err != nil || *v != (Payment{OrderID: "o3", Amount: -5}) {
		t.Fatalf("first dead letter value = %+v, %v; want the original payment", v, err)
	}
	wantHeaders := append([]sgstream.Header{trace}, errorHeaders("2", "streamgen: processing failed: panic: negative payment amount")...)
	if !reflect.DeepEqual(p3.Headers, wantHeaders) {
		t.Fatalf("first dead letter headers:\n got %q\nwant %q", p3.Headers, wantHeaders)
	}

	// The undecodable record: bytes as piped; the message names the cause.
	p4 := dlq[1]
	if string(p4.Key) != "p4" || !reflect.DeepEqual(p4.Value, []byte{0xc1}) || p4.Timestamp != 4_000 {
		t.Fatalf("second dead letter = %q:%x@%d, want p4:c1@4000", p4.Key, p4.Value, p4.Timestamp)
	}
	if len(p4.Headers) != 4 {
		t.Fatalf("second dead letter headers = %q, want the 4 error headers", p4.Headers)
	}
	msg := string(p4.Headers[3].Value)
	if !reflect.DeepEqual(p4.Headers[:3], errorHeaders("3", "")[:3]) || !strings.HasPrefix(msg, "streamgen: deserialization failed: value: ") {
		t.Fatalf("second dead letter headers = %q, want offset 3 and a deserialization message", p4.Headers)
	}
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
	want := []sgstream.Header{
		{Key: "streamgen.error.topic", Value: []byte("payments")},
		{Key: "streamgen.error.partition", Value: []byte("0")},
		{Key: "streamgen.error.offset", Value: []byte("0")},
		{Key: "streamgen.error.message", Value: []byte("streamgen: invalid timestamp: extracted timestamp -1 is negative")},
	}
	if !reflect.DeepEqual(dlq[0].Headers, want) {
		t.Fatalf("dead-letter headers:\n got %q\nwant %q", dlq[0].Headers, want)
	}
}
