package interop

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
)

// kafkaTool runs one of Kafka's command-line tools through scripts/kafka.sh tool.
func kafkaTool(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(repoRoot(t), "scripts", "kafka.sh"), "tool", name}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kafka.sh tool %s %v: %v\n%s", name, args, err, stderr.String())
	}
	return string(out)
}

// TestKafkaTools runs Kafka's own tools from the jars scripts/kafka.sh fetches, against the
// real broker: kafka-topics creates a topic, the console producer writes keyed records, the
// console consumer reads them back in a group, and kafka-consumer-groups shows its offsets.
func TestKafkaTools(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	need(t, "java")
	b := strings.Join(brokers, ",")
	topic := kafkatest.TopicName(t)
	group := topic + "-group"
	out := kafkaTool(t, "", "kafka-topics", "--bootstrap-server", b, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")
	if !strings.Contains(out, "Created topic "+topic) {
		t.Fatalf("kafka-topics --create printed %q", out)
	}
	defer kafkaTool(t, "", "kafka-topics", "--bootstrap-server", b, "--delete", "--topic", topic)
	kafkaTool(t, "k1:v1\nk2:v2\nk1:v3\n", "kafka-console-producer", "--bootstrap-server", b, "--topic", topic,
		"--reader-property", "parse.key=true", "--reader-property", "key.separator=:")
	out = kafkaTool(t, "", "kafka-console-consumer", "--bootstrap-server", b, "--topic", topic, "--group", group,
		"--from-beginning", "--max-messages", "3", "--formatter-property", "print.key=true", "--formatter-property", "key.separator=:")
	if got, want := strings.TrimSpace(out), "k1:v1\nk2:v2\nk1:v3"; got != want {
		t.Fatalf("kafka-console-consumer printed %q, want %q", got, want)
	}
	out = kafkaTool(t, "", "kafka-consumer-groups", "--bootstrap-server", b, "--describe", "--group", group)
	fields := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, group+" ") {
			fields = strings.Join(strings.Fields(l)[:6], " ")
		}
	}
	// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
	if want := group + " " + topic + " 0 3 3 0"; fields != want {
		t.Fatalf("kafka-consumer-groups --describe: got %q, want %q in\n%s", fields, want, out)
	}
}
