package main

import (
	"reflect"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/runtime/sgtest"
)

// TestTypedDriverCountsPerUser counts orders per user across the four
// partitions of orders: the orders are re-keyed by user through the
// orders-by-user repartition topic, so each user's count lives in one task,
// which the store accessor finds from the key.
func TestTypedDriverCountsPerUser(t *testing.T) {
	// The driver gives internal topics one partition unless told; give the
	// repartition topic four, as Kafka Streams would (the count of orders).
	d, err := NewTestDriver(sgtest.TopicPartitions(AppID+"-orders-by-user-repartition", 4))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i, o := range []*Order{
		{ID: "o1", UserID: "u1", Amount: 10},
		{ID: "o2", UserID: "u2", Amount: 20},
		{ID: "o3", UserID: "u1", Amount: 30},
	} {
		if err := d.PipeOrders(o.ID, o, int64(i+1)*1_000); err != nil {
			t.Fatal(err)
		}
	}

	got, err := d.ReadOrderCounts()
	if err != nil {
		t.Fatal(err)
	}
	want := []sgstream.Record[string, int64]{
		{Key: "u1", Value: 1, Timestamp: 1_000},
		{Key: "u2", Value: 1, Timestamp: 2_000},
		{Key: "u1", Value: 2, Timestamp: 3_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order-counts:\n got %+v\nwant %+v", got, want)
	}

	for user, want := range map[string]int64{"u1": 2, "u2": 1} {
		st, err := d.OrderCountsStoreForKey(user)
		if err != nil {
			t.Fatal(err)
		}
		n, _, found, err := st.Get(user)
		if err != nil || !found || n != want {
			t.Errorf("store count of %s = %d (found %v, err %v), want %d", user, n, found, err, want)
		}
	}
	// Kafka's partitioner puts u1 on partition 0 of 4: no other task has it.
	for p := int32(1); p < 4; p++ {
		st, err := d.OrderCountsStore(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, found, err := st.Get("u1"); err != nil || found {
			t.Errorf("partition %d has u1 (err %v); want it only on partition 0", p, err)
		}
	}
}
