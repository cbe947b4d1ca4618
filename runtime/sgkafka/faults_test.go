package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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
