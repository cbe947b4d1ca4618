package gen

import (
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
	files, err := Generate(parseSpec(t, nullsSpec), Config{OmitVersionMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[topologyFileName])
	for _, want := range []string{
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
	} {
		if !strings.Contains(src, want) {
			t.Errorf("topology does not contain\n%s\n%s", want, src)
		}
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

// tombstonesSpec reads stream topics declared `tombstones: true` (an int64
// and an enum) and one that is not, through every step whose function
// Kafka Streams may hand a null, and through the aggregations that drop
// nulls before their functions.
const tombstonesSpec = `version: 1
package: p
app: {id: p-app}
enums:
  Level: {values: {LOW: 0, HIGH: 1}}
topics:
  scores: {key: string, value: int64, tombstones: true}
  levels: {key: string, value: Level, tombstones: true}
  plain: {key: string, value: int64}
  prices: {key: string, value: int64, read_as: table, store: prices-store}
  out: {key: string, value: int64}
  out-b: {key: string, value: int64}
  out-s: {key: string, value: string}
  out-w: {key: windowed<string>, value: int64}
topology:
  - name: scored
    from: scores
    steps:
      - map_values: {fn: Halve}
      - filter: {fn: KeepScore}
  - name: routed
    from: scored
    steps:
      - to: {topic_fn: Route}
  - name: grouped
    from: scored
    steps:
      - group_by: {fn: Bucket, key: string, name: buckets}
  - name: totals
    from: grouped
    steps:
      - aggregate: {init: Zero, fn: AddScore, value: int64, store: totals-store}
  - name: tumbling
    from: grouped
    steps:
      - windowed_by: {tumbling: {size: 1m}}
      - reduce: {fn: MaxScore, store: tumbling-store}
      - to_stream: {}
      - map_values: {fn: SameScore}
      - to: out-w
  - name: sliding
    from: grouped
    steps:
      - windowed_by: {sliding: {time_difference: 1m}}
      - aggregate: {init: Zero, fn: AddScore, value: int64, store: sliding-store}
  - name: sessions
    from: scores
    steps:
      - group_by_key: {}
      - windowed_by: {session: {gap: 1m}}
      - aggregate: {init: Zero, fn: AddNullable, merger: Merge, value: int64, store: sessions-store}
  - name: by-key
    from: scores
    steps:
      - group_by_key: {}
  - name: plain-grouped
    from: plain
    steps:
      - group_by_key: {}
  - name: cogrouped
    from: by-key
    steps:
      - cogroup:
          fn: AddNullable
          with: [{fn: AddPlain, from: plain-grouped}]
          init: Zero
          value: int64
          store: cogroup-store
          window: {hopping: {size: 1m, advance: 30s}}
  - name: processed
    from: levels
    steps:
      - process_values: {fn: NewLevelProcessor, value: string}
      - to: out-s
  - name: priced
    from: scores
    steps:
      - join: {fn: Price, with: prices, kind: left, value: int64}
      - to: out-b
  - name: plain-out
    from: plain
    steps:
      - map_values: {fn: PlainHalve}
      - to: out
`

// On a stream topic declared `tombstones: true`, every function Kafka
// Streams hands a null value takes a pointer: the stateless steps, a
// group_by's key selector, a topic chooser, a processor, and the
// aggregator or reducer of time and session windows (cogroup inputs too),
// and a mapper after a windowed reduce, whose rows such a reducer can
// delete. Where Kafka drops the null first (a plain or sliding aggregation, a
// join's stream side) and on a topic without the flag, values stay plain.
func TestTombstonesTopicSignatures(t *testing.T) {
	files, err := Generate(parseSpec(t, tombstonesSpec), Config{OmitVersionMarkers: true})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[topologyFileName])
	for _, want := range []string{
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
		`sgstream.CogroupNullable(byKey, AddNullable)`,
		`sgstream.CogroupWith(sgstream.CogroupNullable(byKey, AddNullable), plainGrouped, AddPlain)`,
		`_ func(key string, value int64, agg int64) int64 = AddPlain`,
		`_ func() sgstream.Processor[string, *Level, string, string] = NewLevelProcessor`,
		`sgstream.Nullable(sgstream.Source(b, "levels"`,
		`_ func(key string, left int64, right *int64) int64 = Price`,
		`sgstream.JoinStreamTable(sgstream.NonNullable(scores),`,
		`_ func(key string, value int64) int64 = PlainHalve`,
		`_ func(key sgstream.Windowed[string], value *int64) *int64 = SameScore`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("topology does not contain\n%s", want)
		}
	}
	for _, unwanted := range []string{
		`_ func(key string, value *int64, agg int64) int64 = AddScore`, // plain and sliding aggregations drop nulls
		`sgstream.CogroupWithNullable`, `_ func(key string, value *int64, agg int64) int64 = AddPlain`,
		`sgstream.Nullable(sgstream.Source(b, "plain"`,
	} {
		if strings.Contains(src, unwanted) {
			t.Errorf("topology contains %s", unwanted)
		}
	}
	if t.Failed() {
		t.Log(src)
	}
}
