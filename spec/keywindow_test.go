package spec

import (
	"errors"
	"testing"
	"time"
)

// keyWindowErrCases are the mistakes a step declaring a windowed key can make.
var keyWindowErrCases = []errCase{
	{"windowed key without a size", header + steps("- select_key: {fn: K, key: windowed<string>}"),
		"t.yaml:20:34: select_key \"x\": key \"windowed<string>\" needs window_size: the input has no time-windowed key whose window size it could keep\n\n\tadd `window_size: <duration>` (e.g. 1h), the size Kafka Streams' TimeWindowedSerde is given;\n\ta windowed key on a topic stores only the window start, and the end is start + window_size\n"},
	{"window_size on a session-windowed key", header + steps("- map: {fn: K, key: session_windowed<string>, value: Order, window_size: 1m}"),
		"t.yaml:20:67: map \"x\": window_size is only for a windowed<K> key: a session-windowed key carries its end"},
	{"window_size on a plain key", header + steps("- select_key: {fn: K, key: string, window_size: 1m}"),
		"t.yaml:20:42: select_key \"x\": window_size is only for a windowed<K> key, not \"string\""},
	{"windowed value", header + steps("- map: {fn: K, key: string, value: windowed<string>}"),
		"t.yaml:20:42: map \"x\": value: windowed types are only for keys, not \"windowed<string>\"\n\n\ta windowed type is the key of a topic, or the key of map, flat_map, select_key, group_by or process\n"},
}

func TestKeyWindowErrors(t *testing.T) {
	for _, c := range keyWindowErrCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(c.src))
			var ds Diagnostics
			if !errors.As(err, &ds) {
				t.Fatalf("error %v is not Diagnostics, for:\n%s", err, c.src)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// A step's windowed key keeps the window of the input's windowed key, or
// takes window_size; a session-windowed key needs neither.
func TestKeyWindowResolved(t *testing.T) {
	src := `version: 1
package: p
app: {id: app}
topics:
  in: {key: string, value: int64}
  hourly: {key: windowed<string>, value: int64}
  sessions: {key: session_windowed<string>, value: int64}
topology:
  - name: kept
    from: in
    steps:
      - group_by_key: {}
      - windowed_by: {tumbling: {size: 1h}}
      - count: {store: c}
      - group_by: {fn: G, key: windowed<string>, value: int64, name: regroup}
      - reduce: {adder: A, subtractor: S, store: r}
      - to_stream: {}
      - to: hourly
  - name: sized
    from: in
    steps:
      - map: {fn: M, key: windowed<string>, value: int64, window_size: 10s}
      - to: hourly
  - name: session
    from: in
    steps:
      - select_key: {fn: K, key: session_windowed<string>}
      - group_by_key: {name: by-session}
      - count: {store: s}
      - to_stream: {}
      - to: sessions
`
	prog, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		kind WindowKind
		size time.Duration
	}{
		"kept.regroup":        {WindowTumbling, time.Hour},
		"sized.map1":          {WindowTumbling, 10 * time.Second},
		"session.select_key1": {WindowSession, 0},
	}
	for _, n := range prog.Nodes {
		w, ok := want[n.Name]
		if !ok {
			continue
		}
		delete(want, n.Name)
		if !n.WindowedKey || n.KeyWindow == nil || n.KeyWindow.Kind != w.kind || n.KeyWindow.Size != w.size {
			t.Errorf("%s: WindowedKey %v, KeyWindow %+v, want %s of %v", n.Name, n.WindowedKey, n.KeyWindow, w.kind, w.size)
		}
	}
	for name := range want {
		var names []string
		for _, n := range prog.Nodes {
			names = append(names, n.Name)
		}
		t.Errorf("no node %q in %q", name, names)
	}
}
