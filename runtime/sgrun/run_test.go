package sgrun

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgkafka"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// countBuild counts records per key of topic in into out (store "counts").
func countBuild(in, out string) func(b *sgstream.Builder) {
	return func(b *sgstream.Builder) {
		s := sgstream.Source(b, "src", sgstream.SourceConfig[string, string]{Topic: in, Key: serdes.String, Value: serdes.String})
		c := sgstream.Count(sgstream.GroupByKey(s, serdes.String, serdes.String), "count", "counts")
		sgstream.To(sgstream.ToStream(c, "s"), "sink", out, sgstream.SinkConfig[string, int64]{Key: serdes.String, Value: serdes.Int64})
	}
}

// TestEmbeddedRunWithInputAndPrint is the demo path: `run --embedded
// --input f --print out --until-idle`, through the command itself.
func TestEmbeddedRunWithInputAndPrint(t *testing.T) {
	app := &sgapp.App{
		ID:        "demo",
		Build:     countBuild("in", "out"),
		Guarantee: sgkafka.ExactlyOnceV2.String(),
		Topics: []sgapp.TopicCodec{
			sgreplay.Topic("in", serdes.String, serdes.String),
			sgreplay.Topic("out", serdes.String, serdes.Int64),
		},
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "in.jsonl")
	lines := `{"topic":"in","key":"a","value":"x","timestamp":1}
{"topic":"in","key":"b","value":"y","timestamp":2}
{"topic":"in","key":"a","value":"z","timestamp":3}
`
	if err := os.WriteFile(input, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var errw io.Writer = &stderr
	if testing.Verbose() {
		errw = io.MultiWriter(&stderr, os.Stderr)
	}
	code := RunContext(ctx, app, []string{"--embedded", "--state-dir", filepath.Join(dir, "state"),
		"--input", input, "--print", "out", "--until-idle", "500ms", "--cache-bytes", "0"}, &stdout, errw)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	want := `{"topic":"out","key":"a","value":1,"timestamp":1}
{"topic":"out","key":"b","value":1,"timestamp":2}
{"topic":"out","key":"a","value":2,"timestamp":3}
`
	if stdout.String() != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", stdout.String(), want, stderr.String())
	}
	for _, st := range []string{"CREATED", "REBALANCING", "RUNNING", "PENDING_SHUTDOWN", "NOT_RUNNING"} {
		if !strings.Contains(stderr.String(), "to="+st) {
			t.Errorf("state %s not logged:\n%s", st, stderr.String())
		}
	}
}

func TestRunFlagErrors(t *testing.T) {
	app := &sgapp.App{ID: "demo", Build: countBuild("in", "out")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no brokers"},
		{[]string{"--embedded", "--guarantee", "twice"}, `--guarantee "twice"`},
		{[]string{"--embedded", "--log-format", "xml"}, `--log-format "xml"`},
		{[]string{"--brokers", "127.0.0.1:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u"}, "needs --sasl-user and a password"},
	} {
		var stdout, stderr bytes.Buffer
		code := RunContext(context.Background(), app, c.args, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) || !strings.HasPrefix(stderr.String(), "streamgen: ") {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, stderr.String(), c.want)
		}
	}
}

func TestPasswordNeverLogged(t *testing.T) {
	app := &sgapp.App{ID: "demo", Build: countBuild("in", "out")}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t.Setenv("STREAMGEN_SASL_PASSWORD", "hunter2-secret")
	RunContext(ctx, app, []string{"--brokers", "127.0.0.1:1", "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "u",
		"--state-dir", t.TempDir(), "--log-level", "debug"}, &stdout, &stderr)
	if strings.Contains(stderr.String()+stdout.String(), "hunter2") {
		t.Fatalf("password in output:\n%s", stderr.String())
	}
}
