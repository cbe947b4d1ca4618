package sgkafka

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPooledRecords pins what recycling the collector's records must keep:
// a nil value (a tombstone) stays nil and an empty one stays empty, a
// recycled record carries nothing of its previous use, and the copies do
// not alias the task's buffers.
func TestPooledRecords(t *testing.T) {
	key, value := []byte("k1"), []byte("value one")
	r := newRecord(key, value)
	key[0], value[0] = 'X', 'X' // the task reuses its encoding buffers
	if string(r.Key) != "k1" || string(r.Value) != "value one" {
		t.Fatalf("record aliases the caller's buffers: key %q value %q", r.Key, r.Value)
	}
	r.Topic, r.Partition, r.Offset, r.ProducerID = "t", 3, 42, 7
	r.Headers = []kgo.RecordHeader{{Key: "h"}}
	recyclePooled(r)

	for i := 0; i < 100; i++ { // the pool may hand back the same record or a new one
		tomb := newRecord([]byte("k2"), nil)
		if tomb.Value != nil {
			t.Fatalf("a nil value came back as %q (non-nil): a tombstone would be lost", tomb.Value)
		}
		if tomb.Topic != "" || tomb.Partition != 0 || tomb.Offset != 0 || tomb.ProducerID != 0 || tomb.Headers != nil {
			t.Fatalf("a recycled record kept its previous fields: %+v", tomb)
		}
		recyclePooled(tomb)
		empty := newRecord(nil, []byte{})
		if empty.Key != nil || empty.Value == nil || len(empty.Value) != 0 {
			t.Fatalf("nil key / empty value came back as %v / %v", empty.Key, empty.Value)
		}
		recyclePooled(empty)
		big := newRecord(nil, bytes.Repeat([]byte("x"), maxPooledBytes+1))
		recyclePooled(big)
		if big.Value != nil {
			t.Fatalf("a %d-byte buffer was kept for the pool", cap(big.Value))
		}
	}
}
