package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/runtime/sgtest"
)

// TestTypedDriverHourlySummary folds a user's orders into hourly windows
// keyed by placed_at: every update of a window is written, and the window
// store holds the latest aggregate of each hour.
func TestTypedDriverHourlySummary(t *testing.T) {
	// Internal topics get one partition unless told; the repartition by
	// user gets the four of orders, as in Kafka Streams.
	d, err := NewTestDriver(sgtest.TopicPartitions(AppID+"-orders-by-user-repartition", 4))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	at := func(min int) time.Time { return time.UnixMilli(int64(min) * 60_000).UTC() }
	for _, o := range []*Order{
		{ID: "o1", UserID: "u1", Amount: 10, PlacedAt: at(5)},
		{ID: "o2", UserID: "u1", Amount: 30, PlacedAt: at(50)},
		{ID: "o3", UserID: "u1", Amount: 5, PlacedAt: at(70)},
	} {
		if err := d.PipeOrders(o.ID, o, 0); err != nil {
			t.Fatal(err)
		}
	}

	got, err := d.ReadOrderSummaries()
	if err != nil {
		t.Fatal(err)
	}
	hour := func(h int64) sgstream.Windowed[string] {
		return sgstream.Windowed[string]{Key: "u1", Start: h * 3_600_000, End: (h + 1) * 3_600_000}
	}
	last := func(id string) *string { return &id }
	want := []sgstream.Record[sgstream.Windowed[string], *OrderSummary]{
		{Key: hour(0), Value: &OrderSummary{Orders: 1, Total: 10, Largest: 10, LastOrder: last("o1")}, Timestamp: 5 * 60_000},
		{Key: hour(0), Value: &OrderSummary{Orders: 2, Total: 40, Largest: 30, LastOrder: last("o2")}, Timestamp: 50 * 60_000},
		{Key: hour(1), Value: &OrderSummary{Orders: 1, Total: 5, Largest: 5, LastOrder: last("o3")}, Timestamp: 70 * 60_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order-summaries:\n got %+v\nwant %+v", got, want)
	}

	st, err := d.OrderSummaryStoreForKey("u1")
	if err != nil {
		t.Fatal(err)
	}
	v, found, err := st.Fetch("u1", 0)
	if err != nil || !found || !reflect.DeepEqual(v.Value, want[1].Value) || v.Timestamp != 50*60_000 {
		t.Fatalf("order-summary-store hour 0 = %+v (found %v, err %v), want %+v@%d", v, found, err, want[1].Value, 50*60_000)
	}
}
