package sgrun

import (
	"bytes"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgkafka"
)

// TestEmitIntervalFlags checks --window-emit-interval and
// --outer-join-emit-interval: Kafka Streams' 1 s by default, the
// environment as the default, and 0 turning the throttle off
// (sgkafka.NoEmitThrottle, since 0 is the default there).
func TestEmitIntervalFlags(t *testing.T) {
	app := &sgapp.App{ID: "demo", Build: countBuild("in", "out")}
	var stderr bytes.Buffer
	for _, c := range []struct {
		env                   string
		args                  []string
		wantWindow, wantOuter time.Duration
	}{
		{"", nil, time.Second, time.Second},
		{"", []string{"--outer-join-emit-interval", "0"}, time.Second, sgkafka.NoEmitThrottle},
		{"", []string{"--window-emit-interval", "250ms", "--outer-join-emit-interval", "2s"}, 250 * time.Millisecond, 2 * time.Second},
		{"0s", nil, time.Second, sgkafka.NoEmitThrottle},
	} {
		t.Setenv("STREAMGEN_OUTER_JOIN_EMIT_INTERVAL", c.env)
		if c.env == "" {
			t.Setenv("STREAMGEN_OUTER_JOIN_EMIT_INTERVAL", time.Second.String())
		}
		f, err := parseRunFlags(app, append([]string{"--embedded"}, c.args...), &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if w, o := f.emitIntervals.config(); w != c.wantWindow || o != c.wantOuter {
			t.Errorf("env %q args %q: intervals %v, %v, want %v, %v", c.env, c.args, w, o, c.wantWindow, c.wantOuter)
		}
	}
	t.Setenv("STREAMGEN_OUTER_JOIN_EMIT_INTERVAL", "soon")
	if _, err := parseRunFlags(app, []string{"--embedded"}, &stderr); err == nil {
		t.Fatal("unparsable STREAMGEN_OUTER_JOIN_EMIT_INTERVAL accepted")
	}
}
