package e2e

import (
	"context"
	"os"
	"path/filepath"
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
	// A registry that holds none of the app's schemas: produce refuses,
	// naming the side, the subject and the way out; with auto-register it
	// registers them.
	_, errOut, code := tool(t, bin, input, append([]string{"produce"}, flags...)...)
	if code != 1 || !strings.Contains(errOut, `(subject "tools-`) || !strings.Contains(errOut, "--registry-auto-register") {
		t.Fatalf("produce with no schema registered: exit %d\n%s", code, errOut)
	}
	mustTool(t, bin, input, append([]string{"produce", "--registry-auto-register", "true"}, flags...)...)
	cl := registrytest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for subject, typ := range registrySubjects {
		s, err := cl.SchemaByVersion(ctx, subject, -1)
		if err != nil {
			t.Fatalf("subject %s after produce --registry-auto-register: %v", subject, err)
		}
		if s.Type != typ {
			t.Errorf("subject %s holds a %v schema, want %v", subject, s.Type, typ)
		}
	}
	// From here the schemas are registered, as in production: no
	// auto-register.
	roundTrip(t, bin, registryToolTopics, input, flags...)
}
