package protobuf

import (
	"bytes"
	"context"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/internal/registrytest"
	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/runtime/sgrun"
)

// This app on the real broker and the real schema registry
// (scripts/registry.sh): the registry parsing the generated .proto files
// is the check that they are what a Protobuf registry accepts, and its
// compatibility rule judges their evolution. The topics and subjects are
// this spec's own names, so the tests recreate them and never run in
// parallel.

// appTopics are the spec's topics.
var appTopics = []string{"pb-in", "pb-out", "pb-by-record", "pb-packed", "pb-empties", "pb-dlq"}

// appSubjects are the subjects the app's serdes use.
var appSubjects = []string{"pb-in-value", "pb-out-value", "io.example.pb.Leaf", "io.example.pb.Everything", "pb-empties-value"}

// TestRealRegistryAcceptsTheProtos registers every generated file as a
// PROTOBUF schema, then asks the registry's compatibility rule about an
// older version (compatible: fields added) and a change of a field's type
// (refused).
func TestRealRegistryAcceptsTheProtos(t *testing.T) {
	cl := registrytest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	subject := "streamgen-protobuf-golden-value"
	registrytest.DeleteSubjects(t, subject)
	for name, text := range map[string]string{"Everything": EverythingProto, "Leaf": LeafProto, "Empty": EmptyProto} {
		s := "streamgen-protobuf-golden-" + name
		registrytest.DeleteSubjects(t, s)
		got, err := cl.CreateSchema(ctx, s, sr.Schema{Schema: text, Type: sr.TypeProtobuf})
		if err != nil {
			t.Fatalf("the registry refuses %sProto: %v\n%s", name, err, text)
		}
		byID, err := cl.SchemaByID(ctx, got.ID)
		if err != nil || byID.Type != sr.TypeProtobuf {
			t.Errorf("%s: schema %d reads back as %v, %v", name, got.ID, byID.Type, err)
		}
		registrytest.DeleteSubjects(t, s)
	}
	for _, r := range cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatBackward}, subject) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	older := `syntax = "proto3";
package io.example.pb;
message Everything { string s = 1; int64 i64 = 5; Leaf leaf = 13; }
message Leaf { string name = 1; }
`
	if _, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: older, Type: sr.TypeProtobuf}); err != nil {
		t.Fatal(err)
	}
	res, err := cl.CheckCompatibility(ctx, subject, -1, sr.Schema{Schema: EverythingProto, Type: sr.TypeProtobuf})
	if err != nil || !res.Is {
		t.Errorf("adding fields to the message: compatible = %v, %v; want compatible", res.Is, err)
	}
	changed := strings.Replace(EverythingProto, "  string s = 1;", "  int64 s = 1;", 1)
	res, err = cl.CheckCompatibility(ctx, subject, -1, sr.Schema{Schema: changed, Type: sr.TypeProtobuf})
	if err != nil || res.Is {
		t.Errorf("changing field 1 from string to int64: compatible = %v, %v; want refused", res.Is, err)
	}
	registrytest.DeleteSubjects(t, subject)
}

// TestRealRegistryRoundTrip writes a record with every field type the
// way another producer of the topic would, runs the app on the real
// broker, and reads its output back through the registry.
func TestRealRegistryRoundTrip(t *testing.T) {
	url := registrytest.URL(t)
	kafkatest.RecreateTopics(t, appTopics...)
	registrytest.DeleteSubjects(t, appSubjects...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	reg, err := sgregistry.New(sgregistry.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if err := sgRegistryPbInValue.BindRegistry(ctx, reg, true); err != nil {
		t.Fatal(err)
	}
	in := streamgenSampleEverything(0)
	v, err := sgRegistryPbInValue.Append(nil, &in)
	if err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.Client(t).ProduceSync(ctx, &kgo.Record{Topic: "pb-in", Key: []byte("k1"), Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- sgrun.RunContext(ctx, NewApp(), []string{"--brokers", strings.Join(kafkatest.Brokers(t), ","), "--registry", url,
			"--application-id", "protobuf-registry-test", "--state-dir", filepath.Join(t.TempDir(), "state"), "--log-format", "json",
			"--registry-auto-register", "true", "--until-idle", "5s"}, &out, &errOut)
	}()
	rec := kafkatest.ReadOne(t, ctx, "pb-out")
	if code := <-done; code != 0 {
		t.Fatalf("run exited %d:\n%s", code, errOut.String())
	}

	// Java-compatible framing: magic 0, the 4-byte id of pb-out-value's
	// latest version, message index [0] as one 0 byte, then the message.
	latest, err := registrytest.Client(t).SchemaByVersion(ctx, "pb-out-value", -1)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Value[0] != 0 || int(binary.BigEndian.Uint32(rec.Value[1:5])) != latest.ID || rec.Value[5] != 0 {
		t.Fatalf("out framing % x, want 00, id %d, 00", rec.Value[:6], latest.ID)
	}
	if latest.Type != sr.TypeProtobuf || latest.Schema.Schema != EverythingProto {
		t.Errorf("out-value holds %v schema %.80s..., want the generated .proto", latest.Type, latest.Schema.Schema)
	}
	got, err := sgRegistryPbOutValue.Decode(rec.Value)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.AppendProto(nil), in.AppendProto(nil)) {
		t.Errorf("out read back differs:\n got %+v\nwant %+v", *got, in)
	}
}
