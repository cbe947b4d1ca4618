// Package kafkatest connects streamgen's integration tests to the real Kafka broker that
// scripts/kafka.sh runs (single-node KRaft, jars from Maven Central).
//
// The broker address comes from STREAMGEN_KAFKA_BROKERS. Without it, tests skip on a
// developer machine but fail when CI=true, so a CI run can never pass by silently skipping
// every Kafka test. Start a broker with `make test` (which wraps the tests in
// scripts/with-kafka.sh) or by hand:
//
//	export $(scripts/kafka.sh start)
//	go test ./...
//	scripts/kafka.sh stop
//
// Every test gets topics of its own (CreateTopic), so tests may run in parallel against one
// shared broker; the broker does not auto-create topics.
package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kadmin"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnvBrokers names the variable holding the comma-separated broker addresses.
const EnvBrokers = "STREAMGEN_KAFKA_BROKERS"

// EnvDir names the variable holding the shared broker's state directory (set by
// scripts/with-kafka.sh), for tools that want its logs.
const EnvDir = "STREAMGEN_KAFKA_DIR"

const startHint = "no Kafka broker (" + EnvBrokers + " is empty): run `make test`, " +
	"or `scripts/with-kafka.sh go test ./...`, or `export $(scripts/kafka.sh start)` first"

// opTimeout bounds each admin call made on a test's behalf: generous because the broker
// shares 2 cores with the tests, finite so a dead broker fails the test instead of hanging.
const opTimeout = 30 * time.Second

// Brokers returns the shared broker's seed addresses. It skips the test when none is
// configured, or fails it when CI=true, because in CI a missing broker is a broken
// pipeline rather than a developer who chose not to run integration tests.
func Brokers(t testing.TB) []string {
	t.Helper()
	brokers := parseBrokers(os.Getenv(EnvBrokers))
	if len(brokers) == 0 {
		missingBroker(t)
	}
	return brokers
}

func missingBroker(t testing.TB) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(startHint)
	}
	t.Skip(startHint)
}

func parseBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// Client returns a franz-go client for the shared broker, closed when the test ends.
// opts come after the seed brokers, so they may override anything.
func Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return clientFor(t, Brokers(t), opts...)
}

func clientFor(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("kafkatest: new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Admin returns an admin client for the shared broker, closed when the test ends.
func Admin(t testing.TB) *kadm.Client {
	t.Helper()
	return kadm.NewClient(Client(t))
}

// TopicName returns a topic name unique to this test run: the test's name made
// Kafka-legal plus random hex, so reruns and parallel packages never share a topic.
func TopicName(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("kafkatest: random topic suffix: %v", err)
	}
	return "sg-" + sanitize(t.Name()) + "-" + hex.EncodeToString(b[:])
}

// sanitize keeps the characters Kafka allows in topic names. '.' and '_' are avoided
// because Kafka warns that they collide in metric names.
func sanitize(name string) string {
	var sb strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			sb.WriteRune(r)
		default:
			sb.WriteByte('-')
		}
	}
	s := sb.String()
	// Kafka's limit is 249; leave room for the prefix and suffix.
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// CreateTopic creates a uniquely named topic on the shared broker and deletes it when the
// test ends. configs are topic configs, set over Retained's (nil for that alone).
func CreateTopic(t testing.TB, partitions int32, configs map[string]string) string {
	t.Helper()
	return createTopicOn(t, Admin(t), partitions, configs, true)
}

// Retained is the config of every topic a test creates without its own retention.ms: tests
// time their records at fixed instants (deterministic inputs, months old by the time they
// run), which a broker's default retention of seven days deletes at its next retention check
// (every five minutes) — in the middle of a test, now and then, as input never processed or
// output gone before it is read.
func Retained() map[string]*string {
	return map[string]*string{"retention.ms": kadm.StringPtr("-1")}
}

func createTopicOn(t testing.TB, adm *kadm.Client, partitions int32, configs map[string]string, cleanup bool) string {
	t.Helper()
	topic := TopicName(t)
	cfg := Retained()
	for k, v := range configs {
		cfg[k] = kadm.StringPtr(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, partitions, 1, cfg, topic); err != nil {
		t.Fatalf("kafkatest: create topic %q: %v", topic, err)
	}
	if cleanup {
		t.Cleanup(func() { deleteTopic(t, adm, topic) })
	}
	if err := waitForLeaders(ctx, adm, topic, partitions); err != nil {
		t.Fatalf("kafkatest: topic %q: %v", topic, err)
	}
	return topic
}

func deleteTopic(t testing.TB, adm *kadm.Client, topic string) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := adm.DeleteTopic(ctx, topic); err != nil {
		t.Logf("kafkatest: delete topic %q: %v", topic, err)
	}
}

// waitForLeaders returns once every partition has a leader (see
// kadmin.NotLed).
func waitForLeaders(ctx context.Context, adm *kadm.Client, topic string, partitions int32) error {
	if err := kadmin.WaitLed(ctx, adm, map[string]int32{topic: partitions}, 50*time.Millisecond); err != nil {
		return fmt.Errorf("partitions have no leader: %w", err)
	}
	return nil
}
