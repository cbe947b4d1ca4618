package gen

import (
	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// The stateless operators: record-at-a-time steps on a stream (and filter
// and map_values on a table), split and merge.

// filter emits filter and filter_not, on a stream or a table.
func (g *topoGen) filter(n *spec.Node) {
	if n.NotNull {
		g.notNull(n)
		return
	}
	in := n.Inputs[0]
	op := map[spec.Op]string{spec.OpFilter: "Filter", spec.OpFilterNot: "FilterNot"}[n.Op]
	if in.Shape == spec.ShapeTable {
		op += "Table"
	}
	pred := g.fn(n, n.Fn, g.signature(spec.RolePredicate, in.Key, g.val(in), nil, nil, nil))
	g.assign(n, jen.Qual(pathSgstream, op).Call(g.in(n, 0), jen.Lit(n.Name), pred))
}

// mapKV emits map: a new key and value per record.
func (g *topoGen) mapKV(n *spec.Node) {
	in := n.Inputs[0]
	g.userStep(n, "Map", spec.RoleKeyValueMap, in.Key, g.val(in), n.Key, g.val(n))
}

// mapValues emits map_values; on a table the result is materialized with
// the new value serde.
func (g *topoGen) mapValues(n *spec.Node) {
	in := n.Inputs[0]
	if in.Shape != spec.ShapeTable {
		g.userStep(n, "MapValues", spec.RoleValueMap, in.Key, g.val(in), nil, g.val(n))
		return
	}
	f := g.fn(n, n.Fn, g.signature(spec.RoleValueMap, in.Key, in.Value, nil, n.Value, nil))
	g.assign(n, jen.Qual(pathSgstream, "MapValuesTable").Call(g.in(n, 0), jen.Lit(n.Name), f, g.serde(n.Value, nil)))
}

func (g *topoGen) flatMap(n *spec.Node) {
	in := n.Inputs[0]
	g.userStep(n, "FlatMap", spec.RoleFlatMap, in.Key, g.val(in), n.Key, g.val(n))
}

func (g *topoGen) flatMapValues(n *spec.Node) {
	in := n.Inputs[0]
	g.userStep(n, "FlatMapValues", spec.RoleFlatMapValues, in.Key, g.val(in), nil, g.val(n))
}

func (g *topoGen) selectKey(n *spec.Node) {
	in := n.Inputs[0]
	g.userStep(n, "SelectKey", spec.RoleKeySelect, in.Key, g.val(in), n.Key, nil)
}

func (g *topoGen) peek(n *spec.Node) {
	in := n.Inputs[0]
	g.userStep(n, "Peek", spec.RoleAction, in.Key, g.val(in), nil, nil)
}

// foreach is terminal: nothing reads it, so it is called for its effect.
func (g *topoGen) foreach(n *spec.Node) {
	in := n.Inputs[0]
	g.userStep(n, "Foreach", spec.RoleAction, in.Key, g.val(in), nil, nil)
}

// userStep emits op(input, name, fn) for a step whose one user function
// has role with input types k, v and output types k2, v2.
func (g *topoGen) userStep(n *spec.Node, op string, role spec.FuncRole, k, v, k2, v2 *spec.Type) {
	f := g.fn(n, n.Fn, g.signature(role, k, v, k2, v2, nil))
	g.assign(n, jen.Qual(pathSgstream, op).Call(g.in(n, 0), jen.Lit(n.Name), f))
}

// split emits Split with one branch per IR branch and binds the branches
// other nodes read.
func (g *topoGen) split(n *spec.Node) {
	in := n.Inputs[0]
	var items []jen.Code
	for _, br := range n.Branches {
		var b keyed
		b.add("Name", jen.Lit(br.Name))
		if !br.Default && br.Fn != nil {
			b.add("Pred", g.fn(br, br.Fn, g.signature(spec.RolePredicate, in.Key, g.val(in), nil, nil, nil)))
		}
		items = append(items, jen.Values(b.items()...))
	}
	v := g.varName(n)
	g.add(jen.Id(v).Op(":=").Qual(pathSgstream, "Split").Call(g.in(n, 0), jen.Lit(n.Name),
		jen.Index().Qual(pathSgstream, "Branch").Types(g.typ(in.Key), g.typ(g.val(in))).Values(items...)))
	for i, br := range n.Branches {
		if !g.read[br] {
			continue
		}
		bv := g.varName(br)
		g.add(jen.Id(bv).Op(":=").Id(v).Index(jen.Lit(i)))
	}
}

func (g *topoGen) merge(n *spec.Node) {
	args := []jen.Code{jen.Lit(n.Name)}
	for i := range n.Inputs {
		args = append(args, g.in(n, i))
	}
	g.assign(n, jen.Qual(pathSgstream, "Merge").Call(args...))
}

func (g *topoGen) toStream(n *spec.Node) {
	g.assign(n, jen.Qual(pathSgstream, "ToStream").Call(g.in(n, 0), jen.Lit(n.Name)))
}
