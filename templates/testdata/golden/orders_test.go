package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// TestOrders runs the topology in process through the generated TestDriver
// (no broker): tombstones are dropped, item names upper-cased, records
// timestamped by placed_at, and the orders of each user counted.
func TestOrders(t *testing.T) {
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	tea := &Order{ID: "o1", UserID: "alice", Amount: 7, PlacedAt: time.UnixMilli(1_000).UTC(),
		Items: []Item{{SKU: "A-1", Name: "tea", Qty: 2, Price: 3.5}}}
	beans := &Order{ID: "o3", UserID: "alice", Amount: 99, PlacedAt: time.UnixMilli(3_000).UTC(), Status: StatusPaid,
		Items: []Item{{SKU: "B-7", Name: "coffee beans", Qty: 1, Price: 99}}}
	for _, p := range []struct {
		key   string
		value *Order
	}{{"o1", tea}, {"o2", nil}, {"o3", beans}} {
		if err := d.PipeOrders(p.key, p.value, 0); err != nil {
			t.Fatal(err)
		}
	}

	processed, err := d.ReadProcessedOrders()
	if err != nil {
		t.Fatal(err)
	}
	upTea, upBeans := *tea, *beans
	upTea.Items = []Item{{SKU: "A-1", Name: "TEA", Qty: 2, Price: 3.5}}
	upBeans.Items = []Item{{SKU: "B-7", Name: "COFFEE BEANS", Qty: 1, Price: 99}}
	want := []sgstream.Record[string, *Order]{
		{Key: "o1", Value: &upTea, Timestamp: 1_000},
		{Key: "o3", Value: &upBeans, Timestamp: 3_000},
	}
	if !reflect.DeepEqual(processed, want) {
		t.Errorf("processed-orders:\n got %+v\nwant %+v", processed, want)
	}

	counts, err := d.ReadOrdersPerUser()
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := []sgstream.Record[string, int64]{{Key: "alice", Value: 1, Timestamp: 1_000}, {Key: "alice", Value: 2, Timestamp: 3_000}}
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("orders-per-user:\n got %+v\nwant %+v", counts, wantCounts)
	}
}
