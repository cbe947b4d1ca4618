package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLostBroker pins which start-up failures send the engine back to
// waiting for the brokers and which end it: a broker that dies between
// the first answer and the end of setup (the chaos run's broker kill
// during an instance's restart) must not stop the application, while a
// configuration error must not be retried for ever.
func TestLostBroker(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection closed before the first answer", fmt.Errorf("reading topic metadata: %w", &kgo.ErrFirstReadEOF{}), true},
		{"connection refused", fmt.Errorf("listing offsets: %w", syscall.ECONNREFUSED), true},
		{"request timed out", fmt.Errorf("creating topics: %w", context.DeadlineExceeded), true},
		{"retriable broker error", fmt.Errorf("topic %q: %w", "in", kerr.LeaderNotAvailable), true},
		{"configuration", fmt.Errorf("%w: topics \"in\" do not exist", ErrConfig), false},
		{"authorization", fmt.Errorf("metadata: %w", kerr.TopicAuthorizationFailed), false},
		{"non-retriable broker error", fmt.Errorf("creating topics: %w", kerr.InvalidReplicationFactor), false},
		{"our own error", errors.New("streamgen: internal topic \"x\" has 3 partitions, want 5"), false},
	} {
		if got := lostBroker(c.err); got != c.want {
			t.Errorf("%s: lostBroker(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestBrokerLostDuringStartup closes the connection on the metadata
// requests that follow the engine's first answer from the broker, as a
// broker killed in the middle of an instance's start-up does (the chaos
// run's failure): the engine must go back to waiting for the brokers and
// then run, its output complete, instead of exiting.
func TestBrokerLostDuringStartup(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "250"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	createTopic(t, brokers, "in", 2)
	createTopic(t, brokers, "out", 2)
	tp, err := sgstream.NewTopology("app", countBuild("in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	recs := inputRecords("in", 100, 5)
	produce(t, brokers, 2, recs)

	var mu sync.Mutex
	seen, closed := 0, 0
	c.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen >= 2 && closed < 3 {
			closed++
			return nil, errors.New("broker going down"), true
		}
		return nil, nil, false
	})
	logs := &logCapture{}
	r := startEngine(t, tp, Config{Brokers: brokers, StateDir: t.TempDir(), Guarantee: ExactlyOnceV2,
		CommitInterval: 50 * time.Millisecond, IdleExit: 300 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err := r.wait(t, 90*time.Second); err != nil {
		t.Fatalf("the engine stopped on a broker lost during start-up: %v", err)
	}
	waited := false
	for _, l := range logs.lines(t) {
		waited = waited || strings.HasPrefix(fmt.Sprint(l["msg"]), "lost the brokers while starting")
	}
	if !waited {
		t.Fatalf("the start-up never met the lost broker (%d metadata requests closed): the test no longer tests it", closed)
	}
	got := byKey(readCommitted(t, brokers, "out"), decodeCount)
	if d := diffOutputs(driverOutput(t, tp, 2, "out", recs, decodeCount), got); d != "" {
		t.Fatalf("output differs from the test driver:\n%s", d)
	}
}
