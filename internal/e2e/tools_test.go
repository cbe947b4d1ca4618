package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/kafkatest"
)

// The produce and consume commands on the real broker, with golden/json's
// app (built from testdata/jsonapp): "in" is a record topic in the json
// format, "packed" the same record in msgpack. testdata/tools.jsonl is
// written as consume prints it, so a produce-consume round trip must give
// it back unchanged but for the partition and offset consume adds. The
// registry formats' round trip, with testdata/registryapp, is in
// registry_test.go.

var toolTopics = map[string]int32{"in": 3, "packed": 3}

// buildTestApp returns the binary of the app in testdata/<name>, built
// once per test run.
func buildTestApp(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(binDir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "build", "-o", bin, "./internal/e2e/testdata/"+name)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// tool runs `<bin> <args>` with stdin and returns stdout, stderr and the
// exit code.
func tool(t *testing.T, bin string, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	t.Logf("%s %s", filepath.Base(bin), strings.Join(args, " "))
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return o.String(), e.String(), 0
}

// mustTool is tool that fails the test on a non-zero exit.
func mustTool(t *testing.T, bin string, stdin []byte, args ...string) string {
	t.Helper()
	out, errOut, code := tool(t, bin, stdin, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", filepath.Base(bin), strings.Join(args, " "), code, errOut)
	}
	return out
}

// toolLine is a line with the fields consume adds taken out.
type toolLine struct {
	text      string // the line without partition and offset
	partition int32
	offset    int64
}

// splitLines parses JSON lines and takes partition and offset out (-1 when
// absent), re-marshalling the rest in its original member order.
func splitLines(t *testing.T, data string) []toolLine {
	t.Helper()
	var out []toolLine
	for i, l := range strings.Split(strings.TrimSpace(data), "\n") {
		if l == "" {
			continue
		}
		tl := toolLine{partition: -1, offset: -1}
		dec := json.NewDecoder(strings.NewReader(l))
		var kept []string
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("line %d is not an object: %s", i+1, l)
		}
		for dec.More() {
			tok, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("line %d: %v: %s", i+1, err, l)
			}
			switch name := tok.(string); name {
			case "partition":
				json.Unmarshal(v, &tl.partition)
			case "offset":
				json.Unmarshal(v, &tl.offset)
			default:
				kept = append(kept, fmt.Sprintf("%q:%s", name, v))
			}
		}
		tl.text = "{" + strings.Join(kept, ",") + "}"
		out = append(out, tl)
	}
	return out
}

func texts(ls []toolLine) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	slices.Sort(out)
	return out
}

// toolSetup builds the app, makes its topics empty and reads the input.
func toolSetup(t *testing.T) (bin, brokers string, input []byte) {
	t.Helper()
	bin = buildTestApp(t, "jsonapp")
	brokers = strings.Join(kafkatest.Brokers(t), ",")
	recreateTopics(t, toolTopics, "")
	input, err := os.ReadFile(filepath.Join("testdata", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return bin, brokers, input
}

func TestProduceConsumeRoundTrip(t *testing.T) {
	bin, brokers, input := toolSetup(t)
	out1 := roundTrip(t, bin, toolTopics, input, "--brokers", brokers)
	// Keyed lines without a partition are spread by the key's murmur2: the
	// five keys do not all land on one partition.
	parts := map[int32]bool{}
	for _, g := range splitLines(t, out1) {
		parts[g.partition] = true
	}
	if len(parts) < 2 {
		t.Errorf("every record on one partition: %v", parts)
	}
	// What consume printed feeds replay unchanged (it ignores offset): the
	// lines of "in", the topic the topology reads.
	var inLines []string
	for _, l := range strings.Split(out1, "\n") {
		if strings.HasPrefix(l, `{"topic":"in",`) {
			inLines = append(inLines, l)
		}
	}
	replayIn := filepath.Join(t.TempDir(), "consumed.jsonl")
	if err := os.WriteFile(replayIn, []byte(strings.Join(inLines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := replay(t, bin, replayIn, 3); !bytes.Contains(out, []byte(`"topic":"out","key":"k1"`)) {
		t.Errorf("replay of the consumed lines of in: no k1 on out:\n%s", out)
	}
}

// roundTrip checks produce and consume on topics (made empty first), with
// input, a file of their records as consume prints them, and flags, the
// connection flags every command gets: produce then consume gives input's
// lines back, each on the partition it asks for, with partition and
// offset added; consume → produce → consume on fresh topics prints the
// same lines, offsets included; and so does consume --raw → produce --raw.
// It returns the first consume's output.
func roundTrip(t *testing.T, bin string, topics map[string]int32, input []byte, flags ...string) string {
	t.Helper()
	cmd := func(name string, extra ...string) []string { return slices.Concat([]string{name}, flags, extra) }
	names := slices.Sorted(maps.Keys(topics))
	want := splitLines(t, string(input))
	freshTopics(t, topics)
	_, report, code := tool(t, bin, input, cmd("produce")...)
	if code != 0 || !strings.Contains(report, fmt.Sprintf("produced %d records from stdin", len(want))) {
		t.Fatalf("produce: exit %d\n%s", code, report)
	}
	t.Logf("produce reported:\n%s", report)
	out1 := mustTool(t, bin, nil, cmd("consume", append([]string{"--timeout", "30s"}, names...)...)...)
	got := splitLines(t, out1)
	if w, g := texts(want), texts(got); !slices.Equal(w, g) {
		t.Fatalf("consumed lines differ from the produced file\nwant:\n%s\ngot:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
	}
	for _, g := range got {
		if g.partition < 0 || g.offset < 0 {
			t.Fatalf("consumed line without partition or offset: %s", g.text)
		}
		for _, w := range want {
			if w.text == g.text && w.partition >= 0 && w.partition != g.partition {
				t.Errorf("line asked for partition %d, consumed from %d: %s", w.partition, g.partition, w.text)
			}
		}
	}

	// ... and produce: on fresh topics, the second consume prints the
	// first one's lines exactly, partitions and offsets included.
	raw := mustTool(t, bin, nil, cmd("consume", append([]string{"--raw"}, names...)...)...)
	freshTopics(t, topics)
	mustTool(t, bin, []byte(out1), cmd("produce")...)
	out2 := mustTool(t, bin, nil, cmd("consume", names...)...)
	if !slices.Equal(sortedLines(out1), sortedLines(out2)) {
		t.Fatalf("consume → produce → consume changed the lines\nfirst:\n%s\nsecond:\n%s", out1, out2)
	}
	// --raw both ways carries the bytes as they are.
	freshTopics(t, topics)
	mustTool(t, bin, []byte(raw), cmd("produce", "--raw")...)
	out3 := mustTool(t, bin, nil, cmd("consume", names...)...)
	if !slices.Equal(sortedLines(out1), sortedLines(out3)) {
		t.Fatalf("consume --raw → produce --raw changed the records\nfirst:\n%s\nafter raw:\n%s", out1, out3)
	}
	return out1
}

func sortedLines(s string) []string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(ls)
	return ls
}

// TestConsumeFromMaxAndBadRecords checks consume's --from forms and --max
// on the real broker, and a record that does not decode: reported with its
// position and field, skipped (exit 1 at the end) or, under --strict,
// stopping the command.
func TestConsumeFromMaxAndBadRecords(t *testing.T) {
	bin, brokers, input := toolSetup(t)
	mustTool(t, bin, input, "produce", "--brokers", brokers)
	count := func(args ...string) int {
		out := mustTool(t, bin, nil, append([]string{"consume", "--brokers", brokers}, args...)...)
		return len(splitLines(t, out))
	}
	all := splitLines(t, mustTool(t, bin, nil, "consume", "--brokers", brokers, "in", "packed"))
	nonEmpty := map[string]bool{}
	for _, l := range all {
		var top struct{ Topic string }
		json.Unmarshal([]byte(l.text), &top)
		nonEmpty[fmt.Sprint(top.Topic, l.partition)] = true
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--from", "end", "in", "packed"}, 0},
		{[]string{"--max", "2", "in", "packed"}, 2},
		{[]string{"--from", "timestamp:2026-03-02T10:00:02Z", "in", "packed"}, 3},
		{[]string{"--from", "timestamp:1772445603000", "in"}, 1},
		{[]string{"--from", "offset:1", "in", "packed"}, len(all) - len(nonEmpty)},
		{[]string{"--from", "offset:1000", "in"}, 0},
		{[]string{"--isolation", "read_uncommitted", "packed"}, 3},
	} {
		if got := count(c.args...); got != c.want {
			t.Errorf("consume %s: %d records, want %d", strings.Join(c.args, " "), got, c.want)
		}
	}
	// A value on the json topic that is not JSON, written with --raw.
	bad := `{"topic":"in","key":"ImJhZCI=","value":"bm90IGpzb24=","timestamp":1772445609000,"partition":0}`
	mustTool(t, bin, []byte(bad), "produce", "--brokers", brokers, "--raw")
	out, errOut, code := tool(t, bin, nil, "consume", "--brokers", brokers, "in")
	if code != 1 || !strings.Contains(errOut, `topic "in" partition 0 offset `) || !strings.Contains(errOut, "value") ||
		!strings.Contains(errOut, "1 record(s) did not decode") {
		t.Errorf("consume of a bad record: exit %d, stderr:\n%s", code, errOut)
	}
	t.Logf("consume of a bad record reported:\n%s", errOut)
	if n := len(splitLines(t, out)); n != 4 {
		t.Errorf("consume of a bad record printed %d good lines, want 4:\n%s", n, out)
	}
	_, errOut, code = tool(t, bin, nil, "consume", "--brokers", brokers, "--strict", "in")
	if code != 1 || !strings.Contains(errOut, `topic "in" partition 0 offset `) {
		t.Errorf("consume --strict of a bad record: exit %d, stderr:\n%s", code, errOut)
	}
	// produce names the line of a bad input line.
	_, errOut, code = tool(t, bin, append(slices.Clip(input), `{"topic":"in","key":"x","value":{"i32":"no"},"timestamp":1}`+"\n"...),
		"produce", "--brokers", brokers)
	if code != 1 || !strings.Contains(errOut, "stdin:8: ") || !strings.Contains(errOut, "produced 7 records") {
		t.Errorf("produce of a bad line: exit %d, stderr:\n%s", code, errOut)
	}
}
