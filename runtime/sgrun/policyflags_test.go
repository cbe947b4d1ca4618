package sgrun

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// TestPolicyFlagErrors checks the run flags that override the spec's error
// policies: unknown words are rejected with the words that are allowed, and
// a dead_letter policy without a dead-letter topic fails before anything
// connects, from the flags or from the spec.
func TestPolicyFlagErrors(t *testing.T) {
	app := &sgapp.App{ID: "demo", Build: countBuild("in", "out")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--embedded", "--on-deserialization-error", "skip"}, `--on-deserialization-error "skip": want fail, continue or dead_letter`},
		{[]string{"--embedded", "--on-processing-error", "retry"}, `--on-processing-error "retry"`},
		{[]string{"--embedded", "--invalid-timestamp", "continue"}, `--invalid-timestamp "continue": want fail, skip, partition_time or dead_letter`},
		{[]string{"--embedded", "--on-processing-error", "dead_letter"}, "needs a dead-letter topic"},
		{[]string{"--embedded", "--invalid-timestamp", "dead_letter"}, "needs a dead-letter topic"},
	} {
		var stdout, stderr bytes.Buffer
		code := RunContext(context.Background(), app, c.args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) || !strings.HasPrefix(stderr.String(), "streamgen: ") {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// TestPolicyFlagsOverrideSpec checks that the flags start from the spec's
// policies and replace them.
func TestPolicyFlagsOverrideSpec(t *testing.T) {
	app := &sgapp.App{ID: "demo", Build: countBuild("in", "out"), Deserialization: sgstream.PolicyDeadLetter,
		Processing: sgstream.PolicyContinue, InvalidTime: sgstream.TimestampSkip, DeadLetterTopic: "dlq"}
	var stderr bytes.Buffer
	f, err := parseRunFlags(app, []string{"--embedded"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.errorPolicies; got != (errorPolicies{sgstream.PolicyDeadLetter, sgstream.PolicyContinue, sgstream.TimestampSkip, "dlq"}) {
		t.Fatalf("defaults = %+v, want the spec's", got)
	}
	f, err = parseRunFlags(app, []string{"--embedded", "--on-deserialization-error", "fail", "--invalid-timestamp", "dead_letter",
		"--dead-letter-topic", "other"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.errorPolicies; got != (errorPolicies{sgstream.PolicyFail, sgstream.PolicyContinue, sgstream.TimestampDeadLetter, "other"}) {
		t.Fatalf("overridden = %+v", got)
	}
}
