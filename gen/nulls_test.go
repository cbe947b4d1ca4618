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
