package e2e

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/internal/registrytest"
)

// The registry formats on the real broker and the real schema registry,
// with testdata/registryapp: one record on tools-jsonschema, tools-avro
// and tools-protobuf (whose key is a protobuf record too), and a pipeline
// from tools-avro to tools-out whose undecodable records go to tools-dlq.
// testdata/registrytools.jsonl holds records of the three topics as
// consume prints them.

// registryToolTopics are the topics produce and consume are tested on.
var registryToolTopics = map[string]int32{"tools-jsonschema": 3, "tools-avro": 3, "tools-protobuf": 3}

// registrySubjects are the subjects of the app's registry-format sides,
// with the schema type each holds.
var registrySubjects = map[string]sr.SchemaType{
	"tools-jsonschema-value": sr.TypeJSON, "tools-avro-value": sr.TypeAvro,
	"tools-protobuf-key": sr.TypeProtobuf, "tools-protobuf-value": sr.TypeProtobuf, "tools-out-value": sr.TypeAvro,
}

// registrySetup builds the app, makes its topics empty and its subjects
// unknown to the registry, and returns the flags that point the app's
// commands at the real broker and registry.
func registrySetup(t *testing.T, topics map[string]int32) (bin string, flags []string) {
	t.Helper()
	url := registrytest.URL(t) // first: under CI=true a missing registry fails
	bin = buildTestApp(t, "registryapp")
	recreateTopics(t, topics, "")
	for s := range registrySubjects {
		registrytest.DeleteSubjects(t, s)
	}
	return bin, []string{"--brokers", strings.Join(kafkatest.Brokers(t), ","), "--registry", url}
}

func TestProduceConsumeRoundTripRegistryFormats(t *testing.T) {
	bin, flags := registrySetup(t, registryToolTopics)
	input, err := os.ReadFile(filepath.Join("testdata", "registrytools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// A registry that holds none of the app's schemas: produce stops at
	// the first line, naming the side, the subject and the way out; with
	// auto-register it registers the schemas of the topics the file
	// writes, and only those.
	_, errOut, code := tool(t, bin, input, append([]string{"produce"}, flags...)...)
	want := `stdin:1: topic "tools-jsonschema": value (subject "tools-jsonschema-value"): the registry at ` + registrytest.URL(t) +
		` does not hold this schema under the subject (register it, or run with --registry-auto-register)`
	if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "produced 0 records") {
		t.Fatalf("produce with no schema registered: exit %d, want 1 and %s\n%s", code, want, errOut)
	}
	mustTool(t, bin, input, append([]string{"produce", "--registry-auto-register", "true"}, flags...)...)
	cl := registrytest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for subject, typ := range registrySubjects {
		s, err := cl.SchemaByVersion(ctx, subject, -1)
		switch {
		case subject == "tools-out-value":
			if err == nil {
				t.Errorf("produce registered %s, a topic the file does not write", subject)
			}
		case err != nil:
			t.Fatalf("subject %s after produce --registry-auto-register: %v", subject, err)
		case s.Type != typ:
			t.Errorf("subject %s holds a %v schema, want %v", subject, s.Type, typ)
		}
	}
	// From here the schemas are registered, as in production: no
	// auto-register.
	roundTrip(t, bin, registryToolTopics, input, flags...)
}

// TestRegistryDeadLetters runs the app on records of tools-avro that do
// not decode, written as another producer might: bytes without the magic
// byte, an id the registry does not know, and the app's own id before a
// body cut short (produce, run and consume as a user runs them). Each goes to tools-dlq with the KIP-1034 headers naming
// its topic, partition and offset; the good records around them go on to
// tools-out, and consume names each bad one's position.
func TestRegistryDeadLetters(t *testing.T) {
	appID := uniqueID("tools-registry")
	bin, flags := registrySetup(t, map[string]int32{"tools-avro": 3, "tools-out": 1, "tools-dlq": 1})
	good := `{"topic":"tools-avro","key":"g1","value":{"id":"one","tag":{"name":"a","weight":1}},"timestamp":1772445600000,"partition":0}
{"topic":"tools-avro","key":"g2","value":{"id":"two","tag":{"name":"b","weight":2}},"timestamp":1772445601000,"partition":1}
`
	mustTool(t, bin, []byte(good), append([]string{"produce", "--registry-auto-register", "true"}, flags...)...)
	cl := registrytest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	own, err := cl.SchemaByVersion(ctx, "tools-avro-value", -1)
	if err != nil {
		t.Fatal(err)
	}
	framed := func(id uint32, body ...byte) []byte {
		return append(binary.BigEndian.AppendUint32([]byte{0}, id), body...)
	}
	bad := []struct {
		key       string
		partition int32
		offset    int64 // where it lands: after the good records produced above
		value     []byte
		message   string // the start of the dead letter's message
	}{
		{"b1", 0, 1, []byte("not avro"), "streamgen: deserialization failed: value: streamgen: decode at offset 0: " +
			"schema registry wire format: magic byte 0x6e, want 0x00"},
		{"b2", 1, 1, framed(0x7ffffff0, 0x06, 'o', 'n', 'e'), "streamgen: deserialization failed: value: streamgen: decode at offset 1: " +
			"schema id 2147483632: unknown to the registry at " + registrytest.URL(t)},
		{"b3", 2, 0, framed(uint32(own.ID), 0x06, 'o', 'n'), "streamgen: deserialization failed: value: streamgen: decode id at offset 5: "},
	}
	var lines strings.Builder
	for i, b := range bad {
		fmt.Fprintf(&lines, `{"topic":"tools-avro","key":%q,"value":%q,"timestamp":%d,"partition":%d,"headers":{"trace":"t-%s"}}`+"\n",
			base64.StdEncoding.EncodeToString([]byte(b.key)), base64.StdEncoding.EncodeToString(b.value), 1772445610000+int64(i)*1000, b.partition, b.key)
	}
	mustTool(t, bin, []byte(lines.String()), append([]string{"produce", "--raw"}, flags...)...)
	mustTool(t, bin, []byte(`{"topic":"tools-avro","key":"g3","value":{"id":"three"},"timestamp":1772445620000,"partition":0}`), append([]string{"produce"}, flags...)...)

	// consume names each bad record's position, and goes on.
	out, errOut, code := tool(t, bin, nil, append(append([]string{"consume"}, flags...), "tools-avro")...)
	if n := len(splitLines(t, out)); code != 1 || n != 3 || !strings.Contains(errOut, "3 record(s) did not decode") {
		t.Errorf("consume of tools-avro: exit %d, %d good lines, want exit 1 and 3\n%s", code, n, errOut)
	}
	for _, b := range bad {
		if at := fmt.Sprintf(`topic "tools-avro" partition %d offset %d`, b.partition, b.offset); !strings.Contains(errOut, at) {
			t.Errorf("consume does not report %s:\n%s", at, errOut)
		}
	}

	// run writes tools-out, whose schema nobody registered yet: it
	// refuses to start, naming that side alone (the sides it only reads,
	// or never touches, need nothing); with auto-register it registers it.
	runArgs := append([]string{"run", "--application-id", appID, "--state-dir", t.TempDir(), "--until-idle", "3s"}, flags...)
	_, errOut, code = tool(t, bin, nil, runArgs...)
	if want := `topic "tools-out" value (subject "tools-out-value"): the registry at `; code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("run with tools-out-value unregistered: exit %d, want 1 and %s\n%s", code, want, errOut)
	}
	p := startProc(t, appID, bin, append(runArgs, "--registry-auto-register", "true")...)
	if err := p.wait(2 * time.Minute); err != nil {
		p.dumpStderr(40)
		t.Fatalf("run: %v", err)
	}
	dlq := readCommitted(t, "tools-dlq")
	if len(dlq) != len(bad) {
		t.Errorf("tools-dlq holds %d records, want the %d bad ones", len(dlq), len(bad))
	}
	for _, g := range dlq {
		for _, b := range bad {
			if string(g.Key) != b.key {
				continue
			}
			if string(g.Value) != string(b.value) {
				t.Errorf("dead letter %s = %x, want the original %x", b.key, g.Value, b.value)
			}
			w := deadLetterWant{topic: "tools-avro", partition: b.partition, offset: b.offset, trace: "t-" + b.key,
				exception: "org.apache.kafka.common.errors.SerializationException", message: b.message}
			if err := checkDeadLetterHeaders(g.Headers, w); err != nil {
				t.Errorf("dead letter %s (tools-avro[%d]@%d): %v; headers = %q", b.key, b.partition, b.offset, err, g.Headers)
			}
		}
	}
	var outKeys []string
	for _, r := range readCommitted(t, "tools-out") {
		outKeys = append(outKeys, string(r.Key))
	}
	if slices.Sort(outKeys); !slices.Equal(outKeys, []string{"g1", "g2", "g3"}) {
		t.Errorf("tools-out holds %q, want the good records g1, g2, g3", outKeys)
	}
}
