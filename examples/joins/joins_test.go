package main

import (
	"reflect"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/runtime/sgtest"
)

// TestTypedDriverJoins checks the three joins: an order meets its payment
// within the window (stream-stream inner join, timestamped by the later of
// the two), and orders re-keyed by user are enriched from the users table,
// where the left join keeps an order of an unknown user and the inner
// join drops it.
func TestTypedDriverJoins(t *testing.T) {
	// The driver gives internal topics one partition unless told; the
	// repartitioned orders must be co-partitioned with users (2).
	d, err := NewTestDriver(
		sgtest.TopicPartitions(AppID+"-orders-users-left-repartition", 2),
		sgtest.TopicPartitions(AppID+"-orders-users-inner-repartition", 2),
	)
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
	must(d.PipeUsers("u1", &User{ID: "u1", Name: "Alice", Country: "DE"}, 500))
	must(d.PipeOrders("o1", &Order{ID: "o1", UserID: "u1", Amount: 10}, 1_000))
	must(d.PipePayments("o1", &Payment{OrderID: "o1", Amount: 9.5}, 2_000))
	must(d.PipeOrders("o2", &Order{ID: "o2", UserID: "u9", Amount: 20}, 3_000))
	// A payment 11 minutes after its order is outside the 10-minute window.
	must(d.PipePayments("o2", &Payment{OrderID: "o2", Amount: 20}, 3_000+11*60_000))

	paid, err := d.ReadPaidOrders()
	must(err)
	wantPaid := []sgstream.Record[string, *PaidOrder]{
		{Key: "o1", Value: &PaidOrder{OrderID: "o1", Ordered: 10, Paid: 9.5}, Timestamp: 2_000},
	}
	if !reflect.DeepEqual(paid, wantPaid) {
		t.Fatalf("paid-orders:\n got %+v\nwant %+v", paid, wantPaid)
	}

	alice, de := "Alice", "DE"
	left, err := d.ReadEnrichedOrders()
	must(err)
	wantLeft := []sgstream.Record[string, *EnrichedOrder]{
		{Key: "u1", Value: &EnrichedOrder{OrderID: "o1", Amount: 10, UserName: &alice, Country: &de}, Timestamp: 1_000},
		{Key: "u9", Value: &EnrichedOrder{OrderID: "o2", Amount: 20}, Timestamp: 3_000},
	}
	if !reflect.DeepEqual(left, wantLeft) {
		t.Fatalf("enriched-orders (left join):\n got %+v\nwant %+v", left, wantLeft)
	}
	inner, err := d.ReadOrdersWithProfile()
	must(err)
	if !reflect.DeepEqual(inner, wantLeft[:1]) {
		t.Fatalf("orders-with-profile (inner join):\n got %+v\nwant %+v", inner, wantLeft[:1])
	}

	// The users table is materialized in users-store on u1's partition.
	st, err := d.UsersStoreForKey("u1")
	must(err)
	u, ts, found, err := st.Get("u1")
	must(err)
	if !found || u.Name != "Alice" || ts != 500 {
		t.Fatalf("users-store u1 = %+v@%d (found %v), want Alice@500", u, ts, found)
	}
}
