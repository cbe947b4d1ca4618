package sgkafka

import (
	"testing"
	"time"
)

// TestPollSize: a worker polls at least MaxPollRecords, and more only as
// far as its tasks process in 100 ms or in the commit interval, whichever
// is shorter, so that the records a commit must process first stay within
// about one interval.
func TestPollSize(t *testing.T) {
	w := &worker{e: &Engine{}}
	w.e.cfg.MaxPollRecords = 5000
	for _, c := range []struct {
		rate     float64
		interval time.Duration
		want     int
	}{
		{0, 30 * time.Second, 5000},           // not measured yet
		{20000, 30 * time.Second, 5000},       // slow tasks: 2 000 in 100 ms
		{1e6, 30 * time.Second, 100000},       // 100 ms of a fast worker
		{1e6, 100 * time.Millisecond, 100000}, // exactly-once's default interval
		{1e6, 20 * time.Millisecond, 20000},   // a shorter interval bounds the poll
		{1e6, time.Millisecond, 5000},         // but never below MaxPollRecords
	} {
		w.rate, w.e.cfg.CommitInterval = c.rate, c.interval
		if got := w.pollSize(); got != c.want {
			t.Errorf("rate %.0f/s, commit interval %v: poll size %d, want %d", c.rate, c.interval, got, c.want)
		}
	}
}

// TestPollWait: a poll waits until the commit is due, but at least Kafka
// Streams' poll.ms (100 ms) and at most 250 ms.
func TestPollWait(t *testing.T) {
	w := &worker{e: &Engine{}}
	for _, c := range []struct {
		interval, since time.Duration
		min, max        time.Duration
	}{
		{30 * time.Second, 0, 250 * time.Millisecond, 250 * time.Millisecond},
		{30 * time.Second, 29900 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
		{100 * time.Millisecond, 95 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
		{200 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond},
	} {
		w.e.cfg.CommitInterval, w.lastCommit = c.interval, time.Now().Add(-c.since)
		if got := w.pollWait(); got < c.min || got > c.max {
			t.Errorf("commit interval %v, %v since the last commit: wait %v, want [%v, %v]", c.interval, c.since, got, c.min, c.max)
		}
	}
}
