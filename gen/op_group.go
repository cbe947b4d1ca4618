package gen

import (
	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// Grouping and repartitioning: group_by_key, group_by, repartition and
// to_table, the steps that bring each key's records to one task.

func (g *topoGen) repartition(n *spec.Node) {
	rp := n.Repartition
	g.assign(n, jen.Qual(pathSgstream, "Repartition").Call(g.in(n, 0), jen.Lit(rp.Name), jen.Lit(rp.Partitions), g.serde(n.Key, keyWindow(n)), g.serde(n.Value, nil)))
}

// repartitioned routes side (the stream of node in) through repartition
// topic rp first, when rp is set: the key changed upstream, so the next
// step must see the stream partitioned by it.
func (g *topoGen) repartitioned(side jen.Code, in *spec.Node, rp *spec.Repartition) jen.Code {
	if rp == nil {
		return side
	}
	v := g.varName(&spec.Node{Name: rp.Name + "-repartitioned"})
	g.add(jen.Id(v).Op(":=").Qual(pathSgstream, "Repartition").Call(side, jen.Lit(rp.Name), jen.Lit(rp.Partitions), g.serde(in.Key, keyWindow(in)), g.serde(in.Value, nil)))
	return jen.Id(v)
}

func (g *topoGen) toTable(n *spec.Node) {
	src := g.repartitioned(g.in(n, 0), n.Inputs[0], n.Repartition)
	g.assign(n, jen.Qual(pathSgstream, "ToTable").Call(src, jen.Lit(n.Name), g.m.storeName(n.Store), g.serde(n.Key, keyWindow(n)), g.serde(n.Value, nil)))
}

// groupByKey groups in place, or through the node's repartition topic when
// the key changed upstream.
func (g *topoGen) groupByKey(n *spec.Node) {
	args := []jen.Code{g.in(n, 0), g.serde(n.Key, keyWindow(n)), g.serde(n.Value, nil)}
	if rp := n.Repartition; rp != nil {
		args = append(args, jen.Qual(pathSgstream, "RepartitionAs").Call(jen.Lit(rp.Name)))
	}
	g.assign(n, jen.Qual(pathSgstream, "GroupByKey").Call(args...))
}

// groupBy selects a new key (and on a table a new value) and groups by it.
// A stream's key selector sees null values (KStream#groupBy selects the key
// of every record), so it takes a pointer where they can be null.
func (g *topoGen) groupBy(n *spec.Node) {
	in := n.Inputs[0]
	op, sig := "GroupBy", g.signature(spec.RoleKeySelect, in.Key, g.val(in), n.Key, nil, nil)
	if g.nulls.pointer(in) {
		op = "GroupByNullable"
	}
	if in.Shape == spec.ShapeTable {
		op, sig = "GroupByTable", g.signature(spec.RoleKeyValueMap, in.Key, in.Value, n.Key, n.Value, nil)
	}
	f := g.fn(n, n.Fn, sig)
	g.assign(n, jen.Qual(pathSgstream, op).Call(g.in(n, 0), jen.Lit(n.Repartition.Name), f, g.serde(n.Key, keyWindow(n)), g.serde(n.Value, nil)))
}
