package gen

import (
	"fmt"
	"strings"

	"github.com/streamgen/streamgen/spec"
)

// checkNodeNames reports two IR nodes that give the runtime's topology one
// node name: the runtime refuses to start with a duplicate, so the spec is
// refused here instead, at the spec line. spec already keeps the IR's own
// node names unique; what it cannot see are the names the operators' layouts
// derive (internal/topograph): a named stream-table or table-table join
// names its processor after its bare name, not its pipeline-qualified one,
// and composite operators add nodes named <name>-merge, <name>-repartition-
// source and so on. The check replays the IR through those same layouts, as
// describe does, so it sees exactly the names the runtime will build.
func checkNodeNames(c *genCtx) error {
	c.diags = append(c.diags, nodeNameCollisions(c.prog)...)
	return nil
}

// nodeNameCollisions replays prog and reports each graph node whose name an
// earlier IR node's replay already gave a graph node.
func nodeNameCollisions(prog *spec.Program) diagnostics {
	r := newReplay(prog)
	owner := map[string]*spec.Node{}
	var d diagnostics
	for _, n := range prog.Nodes {
		from := len(r.g.Nodes)
		r.node(prog, n)
		for _, gn := range r.g.Nodes[from:] {
			prev, taken := owner[gn.Name]
			if !taken {
				owner[gn.Name] = n
				continue
			}
			d = append(d, nodeNameCollision(gn.Name, n, prev))
		}
	}
	return d
}

func nodeNameCollision(name string, n, prev *spec.Node) spec.Diagnostic {
	pp := nodeNamePos(prev)
	diag := spec.Diagnostic{
		Pos: nodeNamePos(n),
		Msg: fmt.Sprintf("topology node name %q of %s is already taken by %s (at %d:%d)",
			name, nodeWhat(n), nodeWhat(prev), pp.Line, pp.Col),
		Hint: "rename one of the two: every node of the topology needs a name of its own, and the\n" +
			"application would refuse to start with two; see docs/spec-reference.md#names-that-never-move",
	}
	if namedJoin(n) || namedJoin(prev) {
		diag.Hint = "rename the join: a join's processors are named after its `name:` alone, not qualified\n" +
			"by its pipeline as other steps are (Kafka Streams' Named.as), so a join name must differ from\n" +
			"every other node name of the topology; see docs/spec-reference.md#joins"
	}
	return diag
}

// namedJoin reports whether n is a join whose nodes are named after its
// step name.
func namedJoin(n *spec.Node) bool { return n.Op == spec.OpJoin && n.Join.Name != "" }

// nodeNamePos is where n's node names come from: a named join's name, else
// the step (or the topic of a source).
func nodeNamePos(n *spec.Node) spec.Pos {
	if namedJoin(n) {
		return n.Join.NamePos
	}
	return n.Pos
}

// nodeWhat names n for a message as the spec spells it.
func nodeWhat(n *spec.Node) string {
	switch {
	case n.Op == spec.OpSource:
		return fmt.Sprintf("the source of topic %q", n.Topic.Name)
	case namedJoin(n):
		return fmt.Sprintf("join %q", n.Join.Name)
	case n.Op == spec.OpBranch:
		return fmt.Sprintf("branch %q", n.Name)
	case strings.Contains(n.Name, "."):
		return fmt.Sprintf("step %q", n.Name)
	}
	return fmt.Sprintf("the last step (%s) of pipeline %q", n.Op, n.Name)
}
