package sgapp

import (
	"bytes"
	"strings"
	"testing"
)

const testDescription = `Topologies:
   Sub-topology: 0
    Source: in (topics: [in])
      --> p.count1
    Processor: p.count1 (stores: [counts])
      --> p
      <-- in
    Sink: p (topic: out)
      <-- p.count1
`

func TestDescribeFormats(t *testing.T) {
	app := &App{ID: "describe-test", Describe: testDescription}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := MainIO(app, args, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, _ := run("describe"); code != 0 || out != testDescription {
		t.Errorf("describe: exit %d\n%s", code, out)
	}
	if code, out, _ := run("describe", "--format", "mermaid"); code != 0 || !strings.Contains(out, "n_p_count1 -.- s_counts") {
		t.Errorf("describe --format mermaid: exit %d\n%s", code, out)
	}
	if code, out, _ := run("describe", "-format", "dot"); code != 0 || !strings.Contains(out, "t_in -> n_in;") || !strings.Contains(out, "n_p -> t_out;") {
		t.Errorf("describe -format dot: exit %d\n%s", code, out)
	}
	if code, _, stderr := run("describe", "--format", "png"); code != 2 || !strings.Contains(stderr, `unknown describe format "png"`) {
		t.Errorf("unknown format: exit %d %q", code, stderr)
	}
	if code, _, _ := run("describe", "extra"); code != 2 {
		t.Errorf("extra argument: exit %d", code)
	}
}
