package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/internal/topograph"
	"github.com/streamgen/streamgen/spec"
)

// TestStreamJoinStoreNames holds the spec's names of a stream-stream
// join's stores, which the driver, the queries and the layout marks use, to
// those the runtime declares (topograph.StreamJoinStores), for every kind
// of join, with and without a store name, and checks that a store name
// reaches the generated JoinStreams call.
func TestStreamJoinStoreNames(t *testing.T) {
	for _, kind := range []string{"inner", "left", "outer"} {
		for _, store := range []string{"", "vc"} {
			t.Run(kind+"/"+store, func(t *testing.T) {
				opt := ""
				if store != "" {
					opt = ", store: " + store
				}
				prog, err := spec.Parse("t.yaml", []byte(fmt.Sprintf(`version: 1
package: p
app: {id: p-app}
topics:
  views: {key: string, value: string}
  clicks: {key: string, value: string}
  out: {key: string, value: string}
topology:
  - name: pairs
    from: views
    steps:
      - join: {expr: "left + right", with: clicks, name: views-clicks, kind: %s, value: string, window: {time_difference: 5m}%s}
      - to: out
`, kind, opt)))
				if err != nil {
					t.Fatal(err)
				}
				var j *spec.Join
				for _, n := range prog.Nodes {
					if n.Join != nil {
						j = n.Join
					}
				}
				this, other, outer := topograph.StreamJoinStores(j.Name, j.StoreName, kind == "left", kind == "outer")
				got := []string{j.ThisStore.Name, j.OtherStore.Name, ""}
				if j.OuterStore != nil {
					got[2] = j.OuterStore.Name
				}
				if want := []string{this, other, outer}; strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("spec names the stores %q, the runtime %q", got, want)
				}
				if store != "" && !strings.HasPrefix(this, store+"-") {
					t.Fatalf("store %q does not name the stores: %q", store, got)
				}
				files, err := Generate(prog, Config{SpecPath: "t.yaml", OmitVersionMarkers: true, OmitTests: true})
				if err != nil {
					t.Fatal(err)
				}
				hasName := strings.Contains(string(files["streamgen_topology.go"]), `StoreName: "vc"`)
				if hasName != (store != "") {
					t.Fatalf("generated StoreName: %v, want %v", hasName, store != "")
				}
			})
		}
	}
}
