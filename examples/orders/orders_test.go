package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// TestTypedDriverProcessedOrders runs the topology in process through the
// generated typed driver: tombstones are dropped, item names upper-cased,
// and records are timestamped by placed_at (the spec's timestamp field),
// not by the Kafka record timestamp.
func TestTypedDriverProcessedOrders(t *testing.T) {
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	o1 := &Order{ID: "o1", UserID: "alice", Amount: 7, PlacedAt: time.UnixMilli(1_000).UTC(),
		Items: []Item{{SKU: "A-1", Name: "tea", Qty: 2, Price: 3.5}}}
	o3 := &Order{ID: "o3", UserID: "bob", Amount: 99, PlacedAt: time.UnixMilli(3_000).UTC(), Status: StatusPaid,
		Items: []Item{{SKU: "B-7", Name: "coffee beans", Qty: 1, Price: 99}}}
	trace := sgstream.Header{Key: "trace", Value: []byte("t-1")}
	for _, p := range []struct {
		key   string
		value *Order
		ts    int64
	}{{"o1", o1, 10}, {"o2", nil, 20}, {"o3", o3, 30}} {
		if err := d.PipeOrders(p.key, p.value, p.ts, trace); err != nil {
			t.Fatal(err)
		}
	}

	got, err := d.ReadProcessedOrders()
	if err != nil {
		t.Fatal(err)
	}
	up1, up3 := *o1, *o3
	up1.Items = []Item{{SKU: "A-1", Name: "TEA", Qty: 2, Price: 3.5}}
	up3.Items = []Item{{SKU: "B-7", Name: "COFFEE BEANS", Qty: 1, Price: 99}}
	want := []sgstream.Record[string, *Order]{
		{Key: "o1", Value: &up1, Timestamp: 1_000, Headers: []sgstream.Header{trace}},
		{Key: "o3", Value: &up3, Timestamp: 3_000, Headers: []sgstream.Header{trace}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("processed-orders:\n got %+v\nwant %+v", got, want)
	}
}
