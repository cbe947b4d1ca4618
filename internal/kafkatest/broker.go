package kafkatest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Broker is a broker of a test's own, for tests that crash or restart Kafka. Those must
// never touch the shared broker: other packages run their tests against it at the same
// time. Starting one costs several seconds and a JVM, so use it only for fault tests.
type Broker struct {
	t      testing.TB
	script string
	// Dir is the broker's state directory (config, data, logs/server.log).
	Dir string
	// Addr is host:port of the PLAINTEXT listener; it survives Kill9/Restart.
	Addr string
}

// NewBroker starts a dedicated single-node broker through scripts/kafka.sh in a temporary
// directory and stops it when the test ends. Like Brokers, it skips (or fails under CI)
// when Kafka testing is not set up; it also skips under -short.
func NewBroker(t testing.TB) *Broker {
	t.Helper()
	b := newDedicated(t, "dedicated broker")
	b.Start()
	return b
}

// newDedicated prepares a broker of the test's own in a temporary
// directory, not yet started, that is stopped when the test ends. It
// follows the shared broker's opt-in and CI rule, and skips under -short.
func newDedicated(t testing.TB, what string) *Broker {
	t.Helper()
	Brokers(t) // same opt-in and CI rule as the shared broker
	if testing.Short() {
		t.Skip("kafkatest: " + what + " skipped in -short mode")
	}
	script, err := findScript()
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	b := &Broker{t: t, script: script, Dir: t.TempDir()}
	t.Cleanup(func() {
		if _, err := b.run("stop"); err != nil {
			t.Errorf("kafkatest: stop %s: %v", what, err)
		}
	})
	return b
}

// findScript locates scripts/kafka.sh from the package directory go test runs in.
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "scripts", "kafka.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/kafka.sh not found above the working directory")
		}
		dir = parent
	}
}

func (b *Broker) run(cmd string) (string, error) {
	// The script waits up to its own 120 s for readiness; allow for that plus shutdown.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", b.script, cmd, b.Dir)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if err != nil {
		return "", errors.New(err.Error() + ": " + strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Start starts the broker (again) and waits until it serves requests.
func (b *Broker) Start() {
	b.t.Helper()
	out, err := b.run("start")
	if err != nil {
		b.t.Fatalf("kafkatest: start broker: %v", err)
	}
	addr := strings.TrimPrefix(strings.TrimSpace(out), EnvBrokers+"=")
	if addr == "" {
		b.t.Fatalf("kafkatest: start broker printed no address: %q", out)
	}
	b.Addr = addr
}

// Stop shuts the broker down cleanly (SIGTERM).
func (b *Broker) Stop() {
	b.t.Helper()
	if _, err := b.run("stop"); err != nil {
		b.t.Fatalf("kafkatest: stop broker: %v", err)
	}
}

// Kill9 crashes the broker with SIGKILL, leaving its data as a power cut would (minus
// the page cache). Call Start or Restart to bring it back on the same address.
func (b *Broker) Kill9() {
	b.t.Helper()
	if _, err := b.run("kill9"); err != nil {
		b.t.Fatalf("kafkatest: kill -9 broker: %v", err)
	}
}

// Restart stops the broker cleanly and starts it again on the same address and data.
func (b *Broker) Restart() {
	b.t.Helper()
	if _, err := b.run("restart"); err != nil {
		b.t.Fatalf("kafkatest: restart broker: %v", err)
	}
}

// Client returns a client for this broker, closed when the test ends.
func (b *Broker) Client(opts ...kgo.Opt) *kgo.Client {
	b.t.Helper()
	return clientFor(b.t, []string{b.Addr}, opts...)
}

// CreateTopic creates a uniquely named topic on this broker (see the package CreateTopic).
// It is not deleted afterwards: the whole broker is thrown away, and it may be down then.
func (b *Broker) CreateTopic(partitions int32, configs map[string]string) string {
	b.t.Helper()
	return createTopicOn(b.t, kadm.NewClient(b.Client()), partitions, configs, false)
}
