package gen

import (
	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// Null values that user functions see.
//
// Kafka Streams hands a user function null wherever a tombstone flows: after
// a table's to_stream (a table source's deletes, a session merge's
// tombstones for the merged-away sessions, a filtered table's deletes), and
// the function may pass it on. Go's int64 has no null, so the generator
// tracks statically which streams can carry null values and gives the user
// functions over them pointer types (*int64, *Status): nil is the tombstone,
// and a function that returns its input unchanged writes a tombstone again.
// Records are pointers anyway, so they keep their type; streams that cannot
// carry nulls keep plain values. `filter: {not_null: true}` drops the nulls
// and turns the stream back into plain values.
//
// A stream read from a topic declared `tombstones: true` carries nulls
// from its source on; without the flag the generator takes a stream
// topic's values as present (a tombstone still reaches the runtime, which
// tracks it as ValueNull: user functions see the zero value, steps without
// one keep it null).
//
// Only the steps whose user function sees the value (filter, map,
// map_values, flat_map, flat_map_values, select_key, peek, foreach, split,
// a stream group_by's key selector, process and process_values, a sink's
// topic chooser) read the pointer-typed stream; every other operator reads
// it through sgstream.NonNullable, which turns nil back into the runtime's
// ValueNull, and its output, when it can carry nulls, goes back through
// sgstream.Nullable. Neither adds a node to the topology. Grouped and
// windowed streams keep plain values: the aggregations whose functions
// Kafka Streams hands a null (time and session windows) are called through
// their sgstream ...Nullable forms, which read ValueNull (seesNull).

// nullFlow is what the generator knows of null values in the topology.
type nullFlow struct {
	// nullable marks the stream nodes whose values can be null where a
	// user function sees them, and the table nodes that can delete rows.
	nullable map[*spec.Node]bool
	// ptrVar marks the stream nodes whose variables have pointer values:
	// the pointer-typed nodes that some step reading pointers reads (or
	// that are such a step), so a to_stream that only feeds a sink stays
	// plain.
	ptrVar map[*spec.Node]bool
	// ptrOf caches, per spec type, the pointer type standing for it in
	// signatures; base maps such a pointer type back to its spec type.
	ptrOf map[*spec.Type]*spec.Type
	base  map[*spec.Type]*spec.Type
}

// newNullFlow computes the nullable nodes of prog, whose nodes are in
// topological order.
func newNullFlow(prog *spec.Program) *nullFlow {
	f := &nullFlow{nullable: map[*spec.Node]bool{}, ptrVar: map[*spec.Node]bool{},
		ptrOf: map[*spec.Type]*spec.Type{}, base: map[*spec.Type]*spec.Type{}}
	for _, n := range prog.Nodes {
		f.nullable[n] = f.mayBeNull(n)
	}
	for _, n := range prog.Nodes {
		if nativeNull(n) && f.pointer(n) {
			f.ptrVar[n] = true
		}
		for _, in := range n.Inputs {
			if nativeNull(n) && f.pointer(in) {
				f.ptrVar[in] = true
			}
		}
	}
	return f
}

// mayBeNull decides one node from its inputs.
func (f *nullFlow) mayBeNull(n *spec.Node) bool {
	anyInput := func() bool {
		for _, in := range n.Inputs {
			if f.nullable[in] {
				return true
			}
		}
		return false
	}
	if n.Shape == spec.ShapeTable {
		return tableDeletes(n, anyInput)
	}
	switch n.Op {
	case spec.OpSource:
		// A stream topic's values are present unless it says otherwise.
		return n.Topic != nil && n.Topic.Tombstones
	case spec.OpJoin, spec.OpProcess, spec.OpProcessValues:
		// Joiners and processors make new values.
		return false
	case spec.OpFilter:
		return !n.NotNull && anyInput()
	}
	return anyInput()
}

// tableDeletes reports whether a table node can emit deletes: every table
// can, except the aggregations, whose rows are never null unless their
// windows are sessions, which merge, or unless they reduce null values,
// which a time-windowed reduce keeps as its first value and whose reducer
// may return nil.
func tableDeletes(n *spec.Node, anyInput func() bool) bool {
	session := n.Window != nil && n.Window.Kind == spec.WindowSession
	switch n.Op {
	case spec.OpReduce:
		return session || windowPassesNulls(n) && anyInput()
	case spec.OpCount, spec.OpAggregate, spec.OpCogroup:
		return session
	case spec.OpMapValues, spec.OpSuppress:
		return anyInput()
	}
	return true
}

// pointer reports whether stream node n's values are pointers in
// generated code: it can carry nulls and its value type is not a record
// (records are pointers already).
func (f *nullFlow) pointer(n *spec.Node) bool {
	return f.nullable[n] && n.Shape == spec.ShapeStream && scalarValue(n.Value)
}

// windowPassesNulls reports whether aggregation n hands null values to its
// functions: Kafka Streams' time and session window aggregations skip only
// null keys, while the plain aggregation and sliding windows skip null
// values too (KStreamAggregate, KStreamReduce,
// KStreamSlidingWindowAggregate).
func windowPassesNulls(n *spec.Node) bool {
	return n.Window != nil && n.Window.Kind != spec.WindowSliding
}

// seesNull reports whether the user functions of aggregation n see the
// null values of its grouped or windowed input in (primitive or enum ones,
// so they take a pointer and are called through an sgstream ...Nullable
// operator).
func (f *nullFlow) seesNull(n, in *spec.Node) bool {
	return windowPassesNulls(n) && f.nullable[in] && scalarValue(in.Value)
}

// scalarValue reports whether values of t need a pointer to be null in Go:
// primitives and enums (records are pointers already).
func scalarValue(t *spec.Type) bool {
	return t != nil && (t.Primitive() || t.Kind == spec.KindEnum)
}

// ptr is the type standing for *t in signatures: a copy of t that typ
// renders with a star.
func (f *nullFlow) ptr(t *spec.Type) *spec.Type {
	if p, ok := f.ptrOf[t]; ok {
		return p
	}
	p := *t
	f.ptrOf[t], f.base[&p] = &p, t
	return &p
}

// nativeNull reports whether n's emitter reads its input stream with
// pointer values as they are: the steps whose user function sees the value.
func nativeNull(n *spec.Node) bool {
	switch n.Op {
	case spec.OpFilter, spec.OpFilterNot, spec.OpMapValues:
		return !n.NotNull && n.Inputs[0].Shape == spec.ShapeStream
	case spec.OpMap, spec.OpFlatMap, spec.OpFlatMapValues, spec.OpSelectKey, spec.OpPeek, spec.OpForeach, spec.OpSplit,
		spec.OpBranch, // a branch is a value of its split's output
		spec.OpProcess, spec.OpProcessValues:
		return true
	case spec.OpGroupBy:
		return n.Inputs[0].Shape == spec.ShapeStream
	case spec.OpTo:
		return n.Sink != nil && n.Sink.Chooser != nil
	}
	return false
}

// val is the value type user functions see on stream node n: a pointer
// when n's values can be null.
func (g *topoGen) val(n *spec.Node) *spec.Type {
	if g.nulls.pointer(n) {
		return g.nulls.ptr(n.Value)
	}
	return n.Value
}

// typeDesc spells t for a signature's identity, with the star of a pointer.
func (g *topoGen) typeDesc(t *spec.Type) string {
	if _, ok := g.nulls.base[t]; ok {
		return "*" + t.String()
	}
	return t.String()
}

// nullableStream wraps an operator's output in sgstream.Nullable when n's
// variable has pointer values its emitter does not build itself.
func (g *topoGen) nullableStream(n *spec.Node, expr jen.Code) jen.Code {
	if g.nulls.ptrVar[n] && !nativeNull(n) {
		return jen.Qual(pathSgstream, "Nullable").Call(expr)
	}
	return expr
}

// notNull emits `filter: {not_null: true}`: the records with null values
// are dropped, and the output has plain values again.
func (g *topoGen) notNull(n *spec.Node) {
	g.assign(n, jen.Qual(pathSgstream, "FilterNotNull").Call(g.in(n, 0), jen.Lit(n.Name)))
}
