package spec

import "testing"

// versionedSpec reads topic "v" as a versioned table and "p" as a plain
// one; topology is appended.
const versionedSpec = `version: 1
package: p
app: {id: app}
records:
  User:
    fields:
      id: {id: 1, type: string}
topics:
  v: {key: string, value: User, read_as: table, store: v-store, versioned: {history_retention: 1h}}
  p: {key: string, value: User, read_as: table, store: p-store}
  out: {key: string, value: string}
topology:
`

// TestVersionedTableInheritance: filter, filter_not and map_values of a
// versioned table are versioned (Kafka's isVersionedOrVersionedUpstream);
// joins, aggregations and to_table are not, and neither is anything built
// on a plain table.
func TestVersionedTableInheritance(t *testing.T) {
	prog, err := Parse("t.yaml", []byte(versionedSpec+`  - name: m
    from: v
    steps:
      - filter: {fn: F}
      - map_values: {fn: M, value: string}
      - filter_not: {fn: G}
  - name: j
    from: m
    steps:
      - join: {with: p, fn: J, value: string, name: tt}
  - name: copied
    from: v
    steps:
      - to_stream: {}
      - to_table: {store: copy-store}
  - name: counted
    from: v
    steps:
      - group_by: {fn: K, key: string, value: string, name: by-id}
      - count: {store: counts}
  - name: plain
    from: p
    steps:
      - map_values: {fn: M, value: string}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"v": true, "m.filter1": true, "m.map_values2": true, "m": true,
		"p": false, "j": false, "copied": false, "counted": false, "plain": false,
	}
	seen := 0
	for _, n := range prog.Nodes {
		w, ok := want[n.Name]
		if !ok {
			continue
		}
		seen++
		if got := VersionedTable(n); got != w {
			t.Errorf("VersionedTable(%q) = %v, want %v", n.Name, got, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d nodes %v", seen, len(want), want)
	}
}

// TestSuppressOfPlainCopyOfVersionedTable: suppress is refused on a
// versioned table (errors_test.go), but not on a plain table made from
// one, as Kafka Streams' toStream().toTable() makes.
func TestSuppressOfPlainCopyOfVersionedTable(t *testing.T) {
	_, err := Parse("t.yaml", []byte(versionedSpec+`  - name: s
    from: v
    steps:
      - to_stream: {}
      - to_table: {store: copy-store}
      - suppress: {until: time_limit, time_limit: 1s, name: sup}
      - to_stream: {}
      - map_values: {fn: M, value: string}
      - to: out
`))
	if err != nil {
		t.Fatal(err)
	}
}
