package jsonschema

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/internal/registrytest"
	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/runtime/sgrun"
	"github.com/streamgen/streamgen/serdes"
)

// This app on the real broker and the real schema registry
// (scripts/registry.sh): nothing here touches the in-memory registry. The
// topics and subjects are this spec's own names, so the tests recreate
// them and never run in parallel.

// appTopics are the spec's topics.
var appTopics = []string{"in", "out", "by-record", "packed", "leaves", "leaves-json", "dlq"}

// appSubjects are the subjects the app's serdes use.
var appSubjects = []string{"in-value", "out-value", "Leaf", "io.example.Everything", "leaves-value"}

// freshTopics deletes and recreates the spec's topics, one partition each.
func freshTopics(t *testing.T) { kafkatest.RecreateTopics(t, appTopics...) }

// runArgs are the run command's flags for the real broker and registry.
func runArgs(t *testing.T, extra ...string) []string {
	return append([]string{"--brokers", strings.Join(kafkatest.Brokers(t), ","), "--registry", registrytest.URL(t),
		"--application-id", "jsonschema-registry-test", "--state-dir", filepath.Join(t.TempDir(), "state"), "--log-format", "json"}, extra...)
}

func TestRealRegistryAutoRegisterOffRefusesStart(t *testing.T) {
	registrytest.URL(t)
	freshTopics(t)
	registrytest.DeleteSubjects(t, appSubjects...)
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := sgrun.RunContext(ctx, NewApp(), runArgs(t, "--until-idle", "2s"), &out, &errOut)
	if code == 0 {
		t.Fatalf("run started with no schema registered and auto-register off:\n%s", errOut.String())
	}
	msg := errOut.String()
	if !regexp.MustCompile(`topic "[a-z-]+" (key|value) \(subject "[A-Za-z.-]+"\): the registry at http://\S+ does not hold this schema`).MatchString(msg) {
		t.Errorf("start error does not name the topic side, the subject and the registry:\n%s", msg)
	}
	for _, want := range []string{"configuration error", "--registry-auto-register"} {
		if !strings.Contains(msg, want) {
			t.Errorf("start error does not say %q:\n%s", want, msg)
		}
	}
}

func TestRealRegistryRoundTrip(t *testing.T) {
	url := registrytest.URL(t)
	freshTopics(t)
	registrytest.DeleteSubjects(t, appSubjects...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Register the input's schema and write one record as another
	// producer of the topic would: the app's serde, bound to the registry.
	reg, err := sgregistry.New(sgregistry.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if err := sgRegistryInValue.BindRegistry(ctx, reg, true); err != nil {
		t.Fatal(err)
	}
	in := &Everything{S: "héllo", I64: 9007199254740993, Leaf: Leaf{Name: "l1"}, Status: StatusPaidLate}
	v, err := sgRegistryInValue.Append(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	cl := kafkatest.Client(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "in", Key: []byte("k1"), Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- sgrun.RunContext(ctx, NewApp(), runArgs(t, "--registry-auto-register", "true", "--until-idle", "5s"), &out, &errOut)
	}()
	rec := kafkatest.ReadOne(t, ctx, "out")
	if code := <-done; code != 0 {
		t.Fatalf("run exited %d:\n%s", code, errOut.String())
	}

	// Java-compatible framing: magic 0, then the 4-byte big-endian id the
	// registry holds for out-value's latest version (Apicurio's Java
	// serdes write and read exactly this: its ccompat id is the content id).
	src := registrytest.Client(t)
	latest, err := src.SchemaByVersion(ctx, "out-value", -1)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Value[0] != 0 || int(binary.BigEndian.Uint32(rec.Value[1:5])) != latest.ID {
		t.Fatalf("out framing % x, want 00 then id %d", rec.Value[:5], latest.ID)
	}
	if latest.Type != sr.TypeJSON || latest.Schema.Schema != EverythingJSONSchemaEpochMillis {
		t.Errorf("out-value holds %v schema %.80s..., want the generated document", latest.Type, latest.Schema.Schema)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Value[5:], &body); err != nil || body["text"] != "héllo" {
		t.Errorf("out body after the header = %s (%v)", rec.Value[5:], err)
	}
	// Read back through the registry: the id resolves to the schema.
	got, err := sgRegistryOutValue.Decode(rec.Value)
	if err != nil || got.S != in.S || got.I64 != in.I64 || got.Status != in.Status || got.Leaf.Name != "l1" {
		t.Errorf("out read back = %+v, %v", got, err)
	}
}

// TestRealRegistryReadSidesNeedNothing checks that run looks up (or
// registers) only the schemas of the sides it writes: "in" is only read,
// so its subject may stay empty, and a record on "in" written under
// another writer's subject is read by its id. "leaves" is read as a table,
// whose store holds values in the topic's format: it needs its schema as
// a written side does.
func TestRealRegistryReadSidesNeedNothing(t *testing.T) {
	url := registrytest.URL(t)
	freshTopics(t)
	foreign := "jsonschema-foreign-writer"
	registrytest.DeleteSubjects(t, append(appSubjects, foreign)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg, err := sgregistry.New(sgregistry.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	// Whoever owns the output subjects registered them; the input's
	// producer registered its schema under a subject of its own.
	for _, s := range []serdes.RegistryBinder{sgRegistryOutValue, sgRegistryByRecordKey, sgRegistryByRecordValue, sgRegistryLeavesValue} {
		if err := s.BindRegistry(ctx, reg, true); err != nil {
			t.Fatal(err)
		}
	}
	writer := serdes.NewRegistrySerde[*Everything](serdes.JSONSchema[Everything](serdes.JSONOptions{}, EverythingJSONSchema),
		serdes.Subject{Topic: "in", Strategy: serdes.RecordNameStrategy, Record: foreign})
	if err := writer.BindRegistry(ctx, reg, true); err != nil {
		t.Fatal(err)
	}
	v, err := writer.Append(nil, &Everything{S: "foreign", Leaf: Leaf{Name: "l2"}})
	if err != nil {
		t.Fatal(err)
	}
	cl := kafkatest.Client(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "in", Key: []byte("k1"), Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	noSubjects := func(when string, subjects ...string) {
		t.Helper()
		src := registrytest.Client(t)
		for _, s := range subjects {
			if vs, err := src.SubjectVersions(ctx, s); err == nil && len(vs) > 0 {
				t.Errorf("%s: subject %s of a side the app only reads was registered (versions %v)", when, s, vs)
			}
		}
	}
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- sgrun.RunContext(ctx, NewApp(), runArgs(t, "--until-idle", "5s"), &out, &errOut) }()
	rec := kafkatest.ReadOne(t, ctx, "out")
	if code := <-done; code != 0 {
		t.Fatalf("run with only the written sides registered exited %d:\n%s", code, errOut.String())
	}
	if got, err := sgRegistryOutValue.Decode(rec.Value); err != nil || got.S != "foreign" || got.Leaf.Name != "l2" {
		t.Errorf("out = %+v, %v", got, err)
	}
	noSubjects("auto-register off", "in-value")

	// Registering, too, is for the written sides only.
	registrytest.DeleteSubjects(t, appSubjects...)
	errOut.Reset()
	if code := sgrun.RunContext(ctx, NewApp(), runArgs(t, "--registry-auto-register", "true", "--until-idle", "2s"), &out, &errOut); code != 0 {
		t.Fatalf("run --registry-auto-register true exited %d:\n%s", code, errOut.String())
	}
	noSubjects("auto-register on", "in-value")
	src := registrytest.Client(t)
	for _, s := range []string{"out-value", "Leaf", "io.example.Everything", "leaves-value"} {
		if vs, err := src.SubjectVersions(ctx, s); err != nil || len(vs) == 0 {
			t.Errorf("auto-register on: written side's subject %s not registered: %v %v", s, vs, err)
		}
	}
}
