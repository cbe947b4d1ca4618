package gen

import (
	"strings"
	"testing"

	"github.com/streamgen/streamgen/spec"
)

func parseSpec(t *testing.T, src string) *spec.Program {
	t.Helper()
	prog, err := spec.Parse("streamgen.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// The driver's method names come from topic and store names, which map to
// Go names non-injectively; every clash must be a diagnostic at the spec
// line, not a compile error in generated code.
func TestTypedDriverNameCollisions(t *testing.T) {
	prog := parseSpec(t, `version: 1
package: p
app: {id: p-app}
records:
  TestDriver:
    fields:
      id: {id: 1, type: string}
topics:
  orders: {key: string, value: string}
  orders-record: {key: string, value: string}
  out: {key: string, value: string}
stores:
  open: {kind: key_value, key: string, value: int64}
topology:
  - name: a
    from: orders
    steps:
      - process_values: {fn: NewP, stores: [open]}
      - to: out
  - name: b
    from: orders-record
    steps:
      - to: out
`)
	_, err := Generate(prog, Config{OmitVersionMarkers: true})
	if err == nil {
		t.Fatal("Generate succeeded, want collisions")
	}
	want := []string{
		`streamgen.yaml:1:1: generated test driver identifier has Go name "TestDriver", already used by record "TestDriver" at streamgen.yaml:5:3`,
		`streamgen.yaml:10:3: test driver method of topic "orders-record" has Go name "PipeOrdersRecord", already used by test driver method of topic "orders" at streamgen.yaml:9:3`,
		`streamgen.yaml:13:3: test driver method of store "open" has Go name "OpenStore", already used by the embedded sgtest.Driver`,
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// The driver covers what the topology reads and writes: Pipe methods for
// sources, Read methods for sinks and the dead-letter topic, typed views of
// DSL and declared stores, and nothing for topics it does not touch.
func TestTypedDriverMethods(t *testing.T) {
	prog := parseSpec(t, `version: 1
package: p
app:
  id: p-app
  on_error: {deserialization: dead_letter, processing: continue, dead_letter_topic: dlq}
topics:
  in: {key: string, value: string, partitions: 2}
  counts: {key: string, value: int64, partitions: 2}
  wins: {key: "windowed<string>", value: int64, partitions: 2}
  dlq: {key: bytes, value: bytes}
  unused: {key: string, value: string}
topology:
  - name: counted
    from: in
    steps:
      - group_by_key: {}
      - count: {store: counts-store}
      - to_stream: {}
      - to: counts
  - name: windowed
    from: in
    steps:
      - group_by_key: {}
      - windowed_by: {tumbling: {size: 1m}}
      - count: {store: win}
      - to_stream: {}
      - to: wins
`)
	files, err := Generate(prog, Config{OmitVersionMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[driverFileName])
	var got []string
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "func ") {
			got = append(got, line)
		}
	}
	want := []string{
		"func NewTestDriver(opts ...sgtest.Opt) (*TestDriver, error) {",
		"func (d *TestDriver) ReadCounts() ([]sgstream.Record[string, int64], error) {",
		"func (d *TestDriver) ReadDlq() ([]sgstream.Record[[]byte, []byte], error) {",
		"func (d *TestDriver) PipeIn(key string, value string, timestamp int64, headers ...sgstream.Header) error {",
		"func (d *TestDriver) PipeInRecord(r sgstream.Record[string, string], opts ...sgtest.PipeOpt) error {",
		"func (d *TestDriver) ReadWins() ([]sgstream.Record[sgstream.Windowed[string], int64], error) {",
		"func (d *TestDriver) CountsStore(partition int32) (*sgstream.KVStore[string, int64], error) {",
		"func (d *TestDriver) CountsStoreForKey(key string) (*sgstream.KVStore[string, int64], error) {",
		"func (d *TestDriver) WinStore(partition int32) (*sgstream.TypedWindowStore[string, sgstream.TimestampedValue[int64]], error) {",
		"func (d *TestDriver) WinStoreForKey(key string) (*sgstream.TypedWindowStore[string, sgstream.TimestampedValue[int64]], error) {",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("functions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, frag := range []string{
		`sgtest.ErrorPolicies(sgstream.PolicyDeadLetter, sgstream.PolicyContinue, "dlq")`,
		// The windowed key decodes its end with the size of its window.
		"sgtest.ReadTyped(d.Driver, \"wins\", sgstream.TimeWindowedSerde[string]{\n\t\tInner: serdes.String,\n\t\tSize:  time.Minute,\n\t}, serdes.Int64)",
	} {
		if !strings.Contains(src, frag) {
			t.Errorf("driver lacks %q:\n%s", frag, src)
		}
	}
	again, err := Generate(prog, Config{OmitVersionMarkers: true})
	if err != nil || string(again[driverFileName]) != src {
		t.Fatal("driver generation is not deterministic")
	}
}
