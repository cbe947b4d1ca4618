package gen

import (
	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// Aggregations: count, reduce and aggregate on grouped streams, grouped
// tables and windowed streams, and cogroup.

// aggregate emits count, reduce and aggregate for every input shape.
func (g *topoGen) aggregate(n *spec.Node) {
	in := n.Inputs[0]
	name, store := jen.Lit(n.Name), g.m.storeName(n.Store)
	args := []jen.Code{g.in(n, 0), name, store}
	suffix := map[spec.Shape]string{
		spec.ShapeGroupedStream:         "",
		spec.ShapeGroupedTable:          "Table",
		spec.ShapeTimeWindowedStream:    "Windowed",
		spec.ShapeSessionWindowedStream: "Session",
	}[in.Shape]
	windowed := in.Shape == spec.ShapeTimeWindowedStream || in.Shape == spec.ShapeSessionWindowedStream
	if windowed {
		args = append(args, emitLit(n.Emit))
	}
	op := map[spec.Op]string{spec.OpCount: "Count", spec.OpReduce: "Reduce", spec.OpAggregate: "Aggregate"}[n.Op]
	k, v := in.Key, in.Value
	if n.Op != spec.OpCount && g.nulls.seesNull(n, in) {
		// Time and session windows hand null values to the aggregator
		// or reducer: they take a pointer.
		v, suffix = g.nulls.ptr(v), suffix+"Nullable"
	}
	switch {
	case n.Op == spec.OpCount:
	case n.Op == spec.OpReduce && in.Shape == spec.ShapeGroupedTable:
		args = append(args,
			g.fn(n, n.Adder, g.signature(spec.RoleReduce, k, v, nil, nil, nil)),
			g.fn(n, n.Subtractor, g.signature(spec.RoleReduce, k, v, nil, nil, nil)))
	case n.Op == spec.OpReduce:
		args = append(args, g.fn(n, n.Fn, g.signature(spec.RoleReduce, k, v, nil, nil, nil)))
	case n.Op == spec.OpAggregate && in.Shape == spec.ShapeGroupedTable:
		args = append(args,
			g.fn(n, n.Init, g.signature(spec.RoleInit, k, v, nil, nil, n.Agg)),
			g.fn(n, n.Adder, g.signature(spec.RoleAggregate, k, v, nil, nil, n.Agg)),
			g.fn(n, n.Subtractor, g.signature(spec.RoleAggregate, k, v, nil, nil, n.Agg)),
			g.serde(n.Agg, nil))
	case n.Op == spec.OpAggregate:
		args = append(args,
			g.fn(n, n.Init, g.signature(spec.RoleInit, k, v, nil, nil, n.Agg)),
			g.fn(n, n.Fn, g.signature(spec.RoleAggregate, k, v, nil, nil, n.Agg)))
		if in.Shape == spec.ShapeSessionWindowedStream {
			args = append(args, g.fn(n, n.Merger, g.signature(spec.RoleMerge, k, v, nil, nil, n.Agg)))
		}
		args = append(args, g.serde(n.Agg, nil))
	}
	if !windowed {
		g.assign(n, jen.Qual(pathSgstream, op+suffix).Call(args...))
		return
	}
	g.assign(n, jen.Qual(pathSgstream, op+suffix).Call(append(args, windowStoreOpts(n)...)...))
}

// cogroup emits Cogroup, CogroupWith for every further input, and the
// aggregation: CogroupAggregate, or for a window the windowed variant of
// its kind. A windowed cogroup always emits on update (the spec rejects
// emit on_close), so no emit strategy is passed.
func (g *topoGen) cogroup(n *spec.Node) {
	first := n.Cogroup[0]
	k, a := first.Input.Key, n.Agg
	expr := g.cogroupInput(n, first, "Cogroup")
	for _, c := range n.Cogroup[1:] {
		expr = g.cogroupInput(n, c, "CogroupWith", expr)
	}
	init := g.fn(n, n.Init, g.signature(spec.RoleInit, k, nil, nil, nil, a))
	if n.Window == nil {
		g.assign(n, jen.Qual(pathSgstream, "CogroupAggregate").Call(expr, jen.Lit(n.Name), g.m.storeName(n.Store), init, g.serde(a, nil)))
		return
	}
	kind, windows := windowsLit(n.Window)
	args := []jen.Code{expr, jen.Lit(n.Name), g.m.storeName(n.Store), windows, init}
	if kind == "Session" {
		args = append(args, g.fn(n, n.Merger, g.signature(spec.RoleMerge, k, nil, nil, nil, a)))
	}
	args = append(append(args, g.serde(a, nil)), windowStoreOpts(n)...)
	op := map[string]string{"": "CogroupWindowedAggregate", "Sliding": "CogroupSlidingAggregate", "Session": "CogroupSessionAggregate"}[kind]
	g.assign(n, jen.Qual(pathSgstream, op).Call(args...))
}

// cogroupInput is the call op(prev..., input, aggregator) adding one input
// of cogroup n; under time and session windows an aggregator that sees
// null values takes a pointer, through op's Nullable form.
func (g *topoGen) cogroupInput(n *spec.Node, c *spec.CogroupInput, op string, prev ...jen.Code) jen.Code {
	v := c.Input.Value
	if g.nulls.seesNull(n, c.Input) {
		v, op = g.nulls.ptr(v), op+"Nullable"
	}
	agg := g.fn(n, c.Aggregator, g.signature(spec.RoleAggregate, c.Input.Key, v, nil, nil, n.Agg))
	return jen.Qual(pathSgstream, op).Call(append(prev, jen.Id(g.vars[c.Input]), agg)...)
}
