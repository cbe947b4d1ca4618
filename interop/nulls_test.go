package interop

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestSessionWindowsTombstones runs the session-windows scenario (Confluent's
// SessionWindowsExample) on the real broker: the merged-away sessions' tombstones pass through
// the re-keying map and reach the topic as tombstones, read as null by Java's LongDeserializer
// where Kafka Streams writes null, record for record (compare fails the run when either side
// writes no tombstone).
func TestSessionWindowsTombstones(t *testing.T) {
	brokers, root := prepare(t)
	ss, err := Load(root, "session-windows")
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Root: root, Brokers: brokers, Work: t.TempDir(), Log: &log, Timeout: 4 * time.Minute}, ss)
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "tombstones: streamgen 40, kafka streams 40") {
		t.Errorf("want 40 tombstones on each side (two per user)")
	}
	if res.Records != 120 || res.Differences != 0 {
		t.Fatalf("%s; want 120 records, no differences", res.Summary())
	}
}
