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
)

// SecureBroker is a Broker of a test's own with a second listener, SASL_SSL
// with SCRAM-SHA-512 (scripts/kafka.sh secure mode), for tests of TLS and
// authentication. The PLAINTEXT listener (Broker.Addr, Broker.Client)
// stays for setting up topics.
type SecureBroker struct {
	*Broker
	// SecureAddr is host:port of the SASL_SSL listener.
	SecureAddr string
	// CAFile is the PEM file of the CA that signed the broker's
	// certificate (made for this broker, thrown away with it).
	CAFile string
	// User is the SCRAM-SHA-512 user; PasswordFile holds its password.
	User, PasswordFile string
}

// Password returns the SCRAM user's password.
func (b *SecureBroker) Password() string {
	b.t.Helper()
	pw, err := os.ReadFile(b.PasswordFile)
	if err != nil {
		b.t.Fatalf("kafkatest: %v", err)
	}
	return strings.TrimSpace(string(pw))
}

// NewSecureBroker starts a dedicated broker in secure mode and stops it
// when the test ends. It follows NewBroker's rules: it skips locally when
// Kafka testing is not set up (and under -short), and under CI=true a
// broker that does not start fails the test, never skips it.
func NewSecureBroker(t testing.TB) *SecureBroker {
	t.Helper()
	b := newDedicated(t, "secure broker")
	// Secure mode is chosen by the environment at the first start only
	// (the directory remembers it), so later Restart/Stop calls through
	// Broker need nothing more. The variable goes to the script's process
	// alone: t.Setenv would leak it into parallel tests' brokers.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", b.script, "start", b.Dir)
	c.Env = append(os.Environ(), "STREAMGEN_KAFKA_SECURE=1")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("kafkatest: start secure broker: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	b.Addr = strings.TrimPrefix(strings.TrimSpace(stdout.String()), EnvBrokers+"=")
	sb := &SecureBroker{Broker: b, CAFile: filepath.Join(b.Dir, "tls", "ca.pem"),
		PasswordFile: filepath.Join(b.Dir, "sasl-password")}
	read := func(name string) string {
		v, err := os.ReadFile(filepath.Join(b.Dir, name))
		if err == nil && len(bytes.TrimSpace(v)) == 0 {
			err = errors.New("empty")
		}
		if err != nil {
			t.Fatalf("kafkatest: secure broker: %s: %v", name, err)
		}
		return strings.TrimSpace(string(v))
	}
	sb.SecureAddr = read("secure-brokers")
	sb.User = read("sasl-user")
	read("sasl-password")
	if _, err := os.Stat(sb.CAFile); err != nil {
		t.Fatalf("kafkatest: secure broker: %v", err)
	}
	return sb
}
