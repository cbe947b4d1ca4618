package gen

import (
	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// Joins: the five join shapes of spec (stream-stream, stream-table,
// stream-global table, table-table and foreign-key).

// joinKindLit is the sgstream join kind of k (inner unless left or outer).
func joinKindLit(k spec.JoinKind) jen.Code {
	return sgstreamLit(map[spec.JoinKind]string{spec.JoinLeft: "LeftJoin", spec.JoinOuter: "OuterJoin"}, k, "InnerJoin")
}

// sgstreamLit is the sgstream identifier names gives k, or def when it
// gives none: the spec enums whose zero value is the runtime's default.
func sgstreamLit[K comparable](names map[K]string, k K, def string) jen.Code {
	if name, ok := names[k]; ok {
		return jen.Qual(pathSgstream, name)
	}
	return jen.Qual(pathSgstream, def)
}

// joinEmitters emit one join shape with its (repartitioned) sides.
var joinEmitters = map[spec.JoinShape]func(g *topoGen, n *spec.Node, left, right jen.Code){
	spec.JoinStreamStream: (*topoGen).joinStreams,
	spec.JoinStreamTable:  (*topoGen).joinStreamTable,
	spec.JoinStreamGlobal: (*topoGen).joinStreamGlobal,
	spec.JoinTableTable:   (*topoGen).joinTables,
	spec.JoinForeignKey:   (*topoGen).joinForeignKey,
}

// join co-partitions the sides whose key changed upstream through their
// repartition topics first, then emits the join of its shape.
func (g *topoGen) join(n *spec.Node) {
	j := n.Join
	emit, ok := joinEmitters[j.Shape]
	if !ok {
		g.errorf(n.Pos, "node %q: join shape %q is not supported by the generator", n.Name, j.Shape)
		return
	}
	l, r := n.Inputs[0], n.Inputs[1]
	left, right := g.in(n, 0), g.in(n, 1)
	if j.Shape == spec.JoinStreamStream {
		left = g.repartitioned(left, l, j.ThisRepartition)
		right = g.repartitioned(right, r, j.OtherRepartition)
	} else {
		rp := j.ThisRepartition
		if rp == nil {
			rp = n.Repartition
		}
		left = g.repartitioned(left, l, rp)
	}
	emit(g, n, left, right)
}

// joiner is the node's value joiner of the left value and right value v2.
// A side a left or outer join can miss is a pointer in the user function's
// signature when its values are primitive or enum (nil is Kafka's null;
// records are pointers already): sgstream's adapters pass nil for it.
func (g *topoGen) joiner(n *spec.Node, v2 *spec.Type) jen.Code {
	l := n.Inputs[0]
	v1 := l.Value
	leftMissing := n.Join.Kind == spec.JoinOuter && scalarValue(v1)
	rightMissing := n.Join.Kind != spec.JoinInner && scalarValue(v2)
	if leftMissing {
		v1 = g.nulls.ptr(v1)
	}
	if rightMissing {
		v2 = g.nulls.ptr(v2)
	}
	adapter := "ValueJoiner"
	switch {
	case leftMissing && rightMissing:
		adapter = "OptionalSides"
	case leftMissing:
		adapter = "OptionalLeft"
	case rightMissing:
		adapter = "OptionalRight"
	}
	return jen.Qual(pathSgstream, adapter).Call(g.fn(n, n.Fn, g.signature(spec.RoleJoin, l.Key, v1, nil, v2, n.Value)))
}

// joinStore is the name of the store materializing a join's result, or ""
// when the result is not materialized.
func (g *topoGen) joinStore(n *spec.Node) jen.Code {
	if n.Store == nil {
		return jen.Lit("")
	}
	return g.m.storeName(n.Store)
}

func (g *topoGen) joinStreams(n *spec.Node, left, right jen.Code) {
	j, l, r := n.Join, n.Inputs[0], n.Inputs[1]
	base := streamJoinName(n)
	var w keyed
	if j.Before != 0 {
		w.add("Before", durationLit(j.Before))
	}
	if j.After != 0 {
		w.add("After", durationLit(j.After))
	}
	if j.Grace != 0 {
		w.add("Grace", durationLit(j.Grace))
	}
	var sd keyed
	sd.add("Key", g.serde(l.Key, nil))
	sd.add("Left", g.serde(l.Value, nil))
	sd.add("Right", g.serde(r.Value, nil))
	if j.StoreName != "" {
		sd.add("StoreName", jen.Lit(j.StoreName))
	}
	serdes := jen.Qual(pathSgstream, "StreamJoinSerdes").Types(g.typ(l.Key), g.typ(l.Value), g.typ(r.Value)).Values(sd.items()...)
	g.assign(n, jen.Qual(pathSgstream, "JoinStreams").Call(left, right, jen.Lit(base), joinKindLit(j.Kind),
		jen.Qual(pathSgstream, "JoinWindows").Values(w.items()...), g.joiner(n, r.Value), serdes))
}

func (g *topoGen) joinStreamTable(n *spec.Node, left, right jen.Code) {
	if j, l := n.Join, n.Inputs[0]; j.HasTableGrace {
		g.assign(n, jen.Qual(pathSgstream, "JoinStreamTableGrace").Call(left, right, jen.Lit(joinName(n)), joinKindLit(j.Kind),
			durationLit(j.TableGrace), g.joiner(n, n.Inputs[1].Value), g.serde(l.Key, nil), g.serde(l.Value, nil)))
		return
	}
	g.assign(n, jen.Qual(pathSgstream, "JoinStreamTable").Call(left, right, jen.Lit(joinName(n)), joinKindLit(n.Join.Kind), g.joiner(n, n.Inputs[1].Value)))
}

// joinStreamGlobal maps each left record to the global table's key; without
// a key mapper the left key is the lookup key.
func (g *topoGen) joinStreamGlobal(n *spec.Node, left, right jen.Code) {
	j, l, r := n.Join, n.Inputs[0], n.Inputs[1]
	var km jen.Code
	if j.KeyMapper != nil {
		km = g.fn(n, j.KeyMapper, g.signature(spec.RoleKeySelect, l.Key, l.Value, r.Key, nil, nil))
	} else {
		km = jen.Func().Params(jen.Id("key").Add(g.typ(l.Key)), jen.Id("_").Add(g.typ(l.Value))).Add(g.typ(l.Key)).Block(jen.Return(jen.Id("key")))
	}
	g.assign(n, jen.Qual(pathSgstream, "JoinStreamGlobal").Call(left, right, jen.Lit(n.Name), joinKindLit(j.Kind), km, g.joiner(n, r.Value)))
}

func (g *topoGen) joinTables(n *spec.Node, left, right jen.Code) {
	g.assign(n, jen.Qual(pathSgstream, "JoinTables").Call(left, right, jen.Lit(joinName(n)), joinKindLit(n.Join.Kind),
		g.joiner(n, n.Inputs[1].Value), g.joinStore(n), g.serde(n.Value, nil)))
}

func (g *topoGen) joinForeignKey(n *spec.Node, left, right jen.Code) {
	j, l, r := n.Join, n.Inputs[0], n.Inputs[1]
	base := fkJoinName(n)
	fk := g.fn(n, j.ForeignKey, g.signature(spec.RoleForeignKey, l.Key, l.Value, r.Key, nil, nil))
	var sd keyed
	sd.add("Key", g.serde(l.Key, nil))
	sd.add("Value", g.serde(l.Value, nil))
	sd.add("ForeignKey", g.serde(r.Key, nil))
	sd.add("Result", g.serde(n.Value, nil))
	serdes := jen.Qual(pathSgstream, "ForeignKeySerdes").Types(g.typ(l.Key), g.typ(l.Value), g.typ(r.Key), g.typ(n.Value)).Values(sd.items()...)
	g.assign(n, jen.Qual(pathSgstream, "JoinForeignKey").Call(left, right, jen.Lit(base), joinKindLit(j.Kind), fk, g.joiner(n, r.Value), g.joinStore(n), serdes))
}
