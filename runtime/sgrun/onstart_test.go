package sgrun

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/serdes"
)

// TestOnStartHooks runs the spec's app.on_start functions once, in order,
// before processing, and a failing hook stops the run with its error.
func TestOnStartHooks(t *testing.T) {
	var calls []string
	app := &sgapp.App{
		ID:    "hooks",
		Build: countBuild("in", "out"),
		Topics: []sgapp.TopicCodec{
			sgreplay.Topic("in", serdes.String, serdes.String),
			sgreplay.Topic("out", serdes.String, serdes.Int64),
		},
		OnStart: []func(context.Context) error{
			func(context.Context) error { calls = append(calls, "first"); return nil },
			func(context.Context) error { calls = append(calls, "second"); return nil },
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"--embedded", "--state-dir", filepath.Join(t.TempDir(), "state"), "--until-idle", "300ms"}
	if code := RunContext(ctx, app, args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if strings.Join(calls, ",") != "first,second" {
		t.Fatalf("hooks ran %v, want [first second]", calls)
	}

	app.OnStart = []func(context.Context) error{func(context.Context) error { return errors.New("no database") }}
	stderr.Reset()
	args = []string{"--embedded", "--state-dir", filepath.Join(t.TempDir(), "state"), "--until-idle", "300ms"}
	if code := RunContext(ctx, app, args, &stdout, &stderr); code != 1 {
		t.Fatalf("failing hook: exit %d, want 1\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "on_start hook 1: no database") {
		t.Errorf("stderr does not name the failing hook:\n%s", stderr.String())
	}
}
