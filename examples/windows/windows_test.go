package main

import (
	"reflect"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

// TestTypedDriverTumblingWindowGrace counts clicks of one page in 1-minute
// tumbling windows with 10s grace. A window closes when stream time
// reaches its end plus grace: a late record one millisecond before that is
// still counted, one arriving at exactly end+grace (70s for the first
// window) is dropped.
func TestTypedDriverTumblingWindowGrace(t *testing.T) {
	d, err := NewTestDriver()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, ts := range []int64{
		0,      // [0s,60s) = 1
		30_000, // [0s,60s) = 2
		69_999, // [60s,120s) = 1; stream time 69.999s
		59_999, // late but within grace: [0s,60s) = 3
		70_000, // [60s,120s) = 2; stream time reaches 70s, [0s,60s) closes
		1_000,  // for [0s,60s), closed at exactly end+grace: dropped
	} {
		if err := d.PipeClicks("page-1", "user-1", ts); err != nil {
			t.Fatal(err)
		}
	}

	got, err := d.ReadTumblingCounts()
	if err != nil {
		t.Fatal(err)
	}
	w0 := sgstream.Windowed[string]{Key: "page-1", Start: 0, End: 60_000}
	w1 := sgstream.Windowed[string]{Key: "page-1", Start: 60_000, End: 120_000}
	want := []sgstream.Record[sgstream.Windowed[string], int64]{
		{Key: w0, Value: 1, Timestamp: 0},
		{Key: w0, Value: 2, Timestamp: 30_000},
		{Key: w1, Value: 1, Timestamp: 69_999},
		{Key: w0, Value: 3, Timestamp: 59_999},
		{Key: w1, Value: 2, Timestamp: 70_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tumbling-counts:\n got %+v\nwant %+v", got, want)
	}

	// The aggregate is in the window store of page-1's partition, with the
	// largest timestamp of the records it counted.
	st, err := d.TumblingStoreForKey("page-1")
	if err != nil {
		t.Fatal(err)
	}
	v, found, err := st.Fetch("page-1", 60_000)
	if err != nil || !found || v != (sgstream.TimestampedValue[int64]{Value: 2, Timestamp: 70_000}) {
		t.Fatalf("tumbling-store [60s,120s) = %+v (found %v, err %v), want 2@70000", v, found, err)
	}

	// The emit-on-close count (no grace) writes each window once, when
	// stream time passes its end.
	final, err := d.ReadFinalCounts()
	if err != nil {
		t.Fatal(err)
	}
	wantFinal := []sgstream.Record[sgstream.Windowed[string], int64]{{Key: w0, Value: 2, Timestamp: 30_000}}
	if !reflect.DeepEqual(final, wantFinal) {
		t.Fatalf("final-counts:\n got %+v\nwant %+v", final, wantFinal)
	}
}
