package sgapp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// testBuild is in -> upper -> by-key (repartition) -> out: two
// sub-topologies, the second read from the repartition topic.
func testBuild(b *sgstream.Builder) {
	in := sgstream.Source(b, "in", sgstream.SourceConfig[string, string]{Topic: "in", Key: serdes.String, Value: serdes.String})
	up := sgstream.MapValues(in, "upper", func(_ string, v string) string { return strings.ToUpper(v) })
	rp := sgstream.Repartition(up, "by-key", 0, serdes.String, serdes.String)
	sgstream.To(rp, "p", "out", sgstream.SinkConfig[string, string]{Key: serdes.String, Value: serdes.String})
}

// testDescription is Kafka Streams' Topology#describe of testBuild, to the
// byte: internal topics without the application id, nodes by sub-tree size.
const testDescription = `Topologies:
   Sub-topology: 0
    Source: in (topics: [in])
      --> upper
    Processor: upper (stores: [])
      --> by-key-repartition-filter
      <-- in
    Processor: by-key-repartition-filter (stores: [])
      --> by-key-repartition-sink
      <-- upper
    Sink: by-key-repartition-sink (topic: by-key-repartition)
      <-- by-key-repartition-filter

  Sub-topology: 1
    Source: by-key-repartition-source (topics: [by-key-repartition])
      --> p
    Sink: p (topic: out)
      <-- by-key-repartition-source

`

func TestDescribeFormats(t *testing.T) {
	app := &App{ID: "describe-test", Build: testBuild}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := MainIO(app, args, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, _ := run("describe"); code != 0 || out != testDescription {
		t.Errorf("describe: exit %d\n%s", code, out)
	}
	if code, out, _ := run("describe", "--format", "mermaid"); code != 0 || !strings.Contains(out, "n_by_key_repartition_filter --> n_by_key_repartition_sink") {
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
