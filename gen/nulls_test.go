package gen

import (
	"os"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/spec"
)

// nullsSpec is a topology where nulls can reach user functions (a session
// count's to_stream, a table source's to_stream) and where they cannot (a
// plain count's to_stream, a stream source, after a not_null filter).
const nullsSpec = `version: 1
package: p
app: {id: p-app}
enums:
  Level: {values: {LOW: 0, HIGH: 1}}
topics:
  plays: {key: string, value: string}
  levels: {key: string, value: Level, read_as: table, store: levels-store}
  out: {key: string, value: int64}
  out-levels: {key: string, value: Level}
topology:
  - name: sessions
    from: plays
    steps:
      - group_by_key: {}
      - windowed_by: {session: {gap: 30m}}
      - count: {store: sessions-store}
      - to_stream: {}
      - map: {fn: Rekey, key: string, value: int64}
      - filter: {fn: KeepAll}
  - name: sessions-out
    from: sessions
    steps:
      - to: out
  - name: present
    from: sessions
    steps:
      - filter: {not_null: true}
      - map_values: {fn: Double}
      - to: out
  - name: totals
    from: plays
    steps:
      - group_by_key: {}
      - count: {store: totals-store}
      - to_stream: {}
      - map_values: {fn: Plain}
      - to: out
  - name: levels-out
    from: levels
    steps:
      - to_stream: {}
      - map_values: {fn: SameLevel}
      - to: out-levels
  - name: raw
    from: plays
    steps:
      - map_values: {fn: Raw}
      - to: plays
`

// Where nulls can flow, user functions take and return pointers; where they
// cannot, plain values; operators that track nulls themselves read the
// pointer stream through NonNullable, and a not_null filter turns it back
// into plain values.
func TestNullableSignatures(t *testing.T) {
	checkTopology(t, topologyOf(t, nullsSpec), []string{
		`_ func(key sgstream.Windowed[string], value *int64) (string, *int64) = Rekey`,
		`_ func(key string, value *int64) bool = KeepAll`,
		`_ func(key string, value int64) int64 = Double`,
		`_ func(key string, value int64) int64 = Plain`,
		`_ func(key string, value *Level) *Level = SameLevel`,
		`_ func(key string, value string) string = Raw`,
		`sessionsToStream4 := sgstream.Nullable(sgstream.ToStream(`,
		`sgstream.To(sgstream.NonNullable(sessions), "sessions-out", "out"`,
		`sgstream.FilterNotNull(sgstream.NonNullable(sessions), "present.filter1")`,
		`totalsToStream3 := sgstream.ToStream(totalsCount2, "totals.to_stream3")`,
	}, nil)
}

// topologyOf generates the topology file of spec source src.
func topologyOf(t *testing.T, src string) string {
	t.Helper()
	files, err := Generate(parseSpec(t, src), Config{OmitVersionMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	return string(files[topologyFileName])
}

// checkTopology fails the test unless topology src contains every line of
// want and none of unwanted.
func checkTopology(t *testing.T, src string, want, unwanted []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(src, w) {
			t.Errorf("topology does not contain\n%s", w)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(src, u) {
			t.Errorf("topology contains\n%s", u)
		}
	}
	if t.Failed() {
		t.Log(src)
	}
}

// A not_null filter takes no function, only true, and only on a stream.
func TestNotNullFilterErrors(t *testing.T) {
	for _, tc := range []struct{ step, want string }{
		{`filter: {not_null: true, fn: F}`, "want not_null or fn/expr, not both"},
		{`filter: {not_null: false}`, "not_null: want true"},
		{"to_table: {store: again}\n      - filter: {not_null: true}", "a table's predicate never sees a deleted row"},
	} {
		_, err := spec.Parse("streamgen.yaml", []byte(strings.Replace(nullsSpec, "filter: {not_null: true}", tc.step, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.step, err, tc.want)
		}
	}
}

// On a stream topic declared `tombstones: true`, every function Kafka
// Streams hands a null value takes a pointer: the stateless steps, a
// group_by's key selector, a topic chooser, a processor, and the
// aggregator or reducer of time and session windows (cogroup inputs too),
// and a mapper after a windowed reduce, whose rows such a reducer can
// delete. Where Kafka drops the null first (a plain or sliding aggregation, a
// join's stream side) and on a topic without the flag, values stay plain.
// The spec is golden/tombstones', whose user functions compile against the
// generated assertions.
func TestTombstonesTopicSignatures(t *testing.T) {
	src, err := os.ReadFile("../golden/tombstones/streamgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkTopology(t, topologyOf(t, string(src)), []string{
		`_ func(key string, value *int64) *int64 = Halve`,
		`_ func(key string, value *int64) bool = KeepScore`,
		`_ func(key string, value *int64) string = Route`,
		`sgstream.ToDynamicNullable(scored, "routed",`,
		`_ func(key string, value *int64) string = Bucket`,
		`sgstream.GroupByNullable(scored, "buckets", Bucket,`,
		`_ func(key string, value int64, agg int64) int64 = AddScore`,
		`_ func(agg *int64, value *int64) *int64 = MaxScore`,
		`sgstream.ReduceWindowedNullable(`,
		`sgstream.AggregateSessionNullable(`,
		`_ func(key string, value *int64, agg int64) int64 = AddNullable`,
		`sgstream.CogroupWith(sgstream.CogroupNullable(byKey, AddNullable), plainGrouped, AddPlain)`,
		`_ func(key string, value int64, agg int64) int64 = AddPlain`,
		`_ func() sgstream.Processor[string, *Level, string, string] = NewLevelProcessor`,
		`sgstream.Nullable(sgstream.Source(b, "levels"`,
		`_ func(key string, left int64, right *int64) int64 = Price`,
		`sgstream.JoinStreamTable(sgstream.NonNullable(scores),`,
		`_ func(key string, value int64) int64 = PlainHalve`,
		`_ func(key sgstream.Windowed[string], value *int64) *int64 = SameScore`,
	}, []string{
		`_ func(key string, value *int64, agg int64) int64 = AddScore`, // plain and sliding aggregations drop nulls
		`sgstream.CogroupWithNullable`, `_ func(key string, value *int64, agg int64) int64 = AddPlain`,
		`sgstream.Nullable(sgstream.Source(b, "plain"`,
	})
}
