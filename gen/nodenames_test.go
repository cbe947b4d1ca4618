package gen

import (
	"strings"
	"testing"
)

// nodeNamesHead declares the topics the cases below read and write.
const nodeNamesHead = `version: 1
package: p
app: {id: p-app}
topics:
  orders: {key: string, value: string}
  payments: {key: string, value: string}
  users: {key: string, value: string, read_as: table, store: users-store}
  out: {key: string, value: string}
topology:
`

// TestNodeNameCollisions checks that node names the runtime would refuse
// as duplicates are reported at the spec line, whether they are a join's
// bare name or a name a composite operator derives, and that the same
// names in distinct nodes pass.
func TestNodeNameCollisions(t *testing.T) {
	cases := []struct {
		name, topology, want string // want "" means no diagnostic
	}{
		{"distinct", `
  - name: a
    from: orders
    steps:
      - join: {expr: "left + right", with: users, name: enrich-a, value: string}
      - to: out
  - name: b
    from: payments
    steps:
      - join: {expr: "left + right", with: users, name: enrich-b, value: string}
      - to: out
`, ""},
		{"stream-table join named like a topic", `
  - name: a
    from: orders
    steps:
      - join: {expr: "left + right", with: users, name: orders, value: string}
      - to: out
`, `streamgen.yaml:13:57: topology node name "orders" of join "orders" is already taken by the source of topic "orders" (at 5:3)`},
		{"stream-stream join merge named like a pipeline", `
  - name: paid-merge
    from: payments
    steps:
      - filter: {expr: "true"}
  - name: a
    from: orders
    steps:
      - join: {expr: "left + right", with: payments, name: paid, value: string, window: {time_difference: 1m}}
      - to: out
`, `streamgen.yaml:17:60: topology node name "paid-merge" of join "paid" is already taken by the last step (filter) of pipeline "paid-merge" (at 13:9)`},
		{"repartition source named like a pipeline", `
  - name: r-repartition-source
    from: payments
    steps:
      - filter: {expr: "true"}
  - name: a
    from: orders
    steps:
      - repartition: {name: r}
      - to: out
`, `topology node name "r-repartition-source" of step "a.r" is already taken by the last step (filter) of pipeline "r-repartition-source"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog := parseSpec(t, nodeNamesHead+strings.TrimPrefix(c.topology, "\n"))
			err := nodeNameCollisions(prog).err()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected diagnostics:\n%v", err)
			case c.want == "":
			case err == nil:
				t.Fatalf("no diagnostic, want %q", c.want)
			case !strings.Contains(err.Error(), c.want):
				t.Fatalf("got\n%v\nwant it to contain %q", err, c.want)
			}
			if _, derr := Describe(prog, "text"); (derr != nil) != (c.want != "") {
				t.Errorf("Describe error %v, want one exactly when the check reports", derr)
			}
		})
	}
}
