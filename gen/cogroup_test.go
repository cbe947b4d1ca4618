package gen

import (
	"strings"
	"testing"
)

// A windowed cogroup becomes the runtime's windowed cogroup of its window
// kind, with the window as windowed_by would build it and the session
// merger; no emit strategy (Kafka's windowed cogroup always
// emits on update).
func TestWindowedCogroupCalls(t *testing.T) {
	for _, tc := range []struct{ window, extra, want string }{
		{"{hopping: {size: 10m, advance: 5m, grace: 1m}, retention: 1h}", "",
			`sgstream.CogroupWindowedAggregate(sgstream.CogroupWith(sgstream.Cogroup(a, AddA), b2, AddB), "c", cStore.Name(), sgstream.TimeWindows{Size: 10 * time.Minute, Advance: 5 * time.Minute, Grace: time.Minute, Retention: time.Hour}, Init, serdes.Int64)`},
		{"{sliding: {time_difference: 5s}}", "",
			`sgstream.CogroupSlidingAggregate(sgstream.CogroupWith(sgstream.Cogroup(a, AddA), b2, AddB), "c", cStore.Name(), sgstream.SlidingWindows{TimeDifference: 5 * time.Second}, Init, serdes.Int64)`},
		{"{session: {gap: 30s, grace: 10s}}", ", merger: Merge",
			`sgstream.CogroupSessionAggregate(sgstream.CogroupWith(sgstream.Cogroup(a, AddA), b2, AddB), "c", cStore.Name(), sgstream.SessionWindows{Gap: 30 * time.Second, Grace: 10 * time.Second}, Init, Merge, serdes.Int64)`},
	} {
		prog := parseSpec(t, `version: 1
package: p
app: {id: p-app}
topics:
  in-a: {key: string, value: string}
  in-b: {key: string, value: int64}
topology:
  - name: a
    from: in-a
    steps: [{group_by_key: {}}]
  - name: b
    from: in-b
    steps: [{group_by_key: {}}]
  - name: c
    from: a
    steps:
      - cogroup: {fn: AddA, with: [{from: b, fn: AddB}], init: Init, value: int64, store: c-store, window: `+tc.window+tc.extra+`}
`)
		files, err := Generate(prog, Config{OmitVersionMarkers: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.window, err)
		}
		// gofmt breaks the windows literal over lines; compare it flat.
		src := strings.Join(strings.Fields(string(files[topologyFileName])), " ")
		src = strings.NewReplacer("{ ", "{", ", }", "}").Replace(src)
		if !strings.Contains(src, tc.want) {
			t.Errorf("%s: topology does not contain\n%s\n%s", tc.window, tc.want, src)
		}
	}
}
