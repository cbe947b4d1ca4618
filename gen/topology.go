package gen

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// topologyFileName is the generated file holding the topology wiring.
const topologyFileName = "streamgen_topology.go"

// topoGen resolves the IR's nodes into the model's topology wiring: the
// runtime's typed operator calls in the IR's topological order, each user
// function with the signature its role needs, and the extractors and
// imports they use. Each operator has its emitter in opTable; the
// emitters live in one file per operator family (op_*.go).
type topoGen struct {
	c     *genCtx
	m     *model
	prog  *spec.Program
	vars  map[*spec.Node]string
	taken map[string]bool
	// asserts are the user functions named in the spec with the Go
	// signature each must have, keyed by name and signature.
	asserts map[string]*funcAssert
	// declared are the spec stores already declared with AddStateStore.
	declared map[*spec.Store]bool
	// read marks the nodes some other node reads.
	read map[*spec.Node]bool
	// nulls says which streams can carry null values (nulls.go).
	nulls *nullFlow
}

// funcAssert is a user function (or an inline expression) of the topology:
// its name (or expression), the Go signature it must have, and the spec
// position and node it is named at.
type funcAssert struct {
	name string
	sig  *jen.Statement // a func type
	node *spec.Node
	pos  spec.Pos
	role spec.FuncRole
}

// opGen emits the wiring of one IR node of its operator.
type opGen func(g *topoGen, n *spec.Node)

// opTable holds the emitter of every operator the generator supports, keyed
// like spec's own operator table.
var opTable = map[spec.Op]opGen{
	// op_source.go: sources and sinks
	spec.OpSource: (*topoGen).source,
	spec.OpTo:     (*topoGen).sink,
	// op_stateless.go
	spec.OpFilter:        (*topoGen).filter,
	spec.OpFilterNot:     (*topoGen).filter,
	spec.OpMap:           (*topoGen).mapKV,
	spec.OpMapValues:     (*topoGen).mapValues,
	spec.OpFlatMap:       (*topoGen).flatMap,
	spec.OpFlatMapValues: (*topoGen).flatMapValues,
	spec.OpSelectKey:     (*topoGen).selectKey,
	spec.OpPeek:          (*topoGen).peek,
	spec.OpForeach:       (*topoGen).foreach,
	spec.OpSplit:         (*topoGen).split,
	spec.OpBranch:        func(*topoGen, *spec.Node) {}, // emitted with its split
	spec.OpMerge:         (*topoGen).merge,
	spec.OpToStream:      (*topoGen).toStream,
	// op_group.go: grouping and repartitioning
	spec.OpRepartition: (*topoGen).repartition,
	spec.OpToTable:     (*topoGen).toTable,
	spec.OpGroupByKey:  (*topoGen).groupByKey,
	spec.OpGroupBy:     (*topoGen).groupBy,
	// op_window.go
	spec.OpWindowedBy: (*topoGen).windowedBy,
	spec.OpSuppress:   (*topoGen).suppress,
	// op_aggregate.go
	spec.OpCount:     (*topoGen).aggregate,
	spec.OpReduce:    (*topoGen).aggregate,
	spec.OpAggregate: (*topoGen).aggregate,
	spec.OpCogroup:   (*topoGen).cogroup,
	// op_join.go
	spec.OpJoin: (*topoGen).join,
	// op_process.go
	spec.OpProcess:       (*topoGen).process,
	spec.OpProcessValues: (*topoGen).process,
}

// buildWiring resolves every node into m.wiring and the user functions
// into m.funcs and m.inline. It reports false when a node could not be
// resolved.
func buildWiring(c *genCtx, m *model) bool {
	prog := c.prog
	g := &topoGen{
		c:        c,
		m:        m,
		prog:     prog,
		vars:     map[*spec.Node]string{},
		taken:    map[string]bool{"b": true},
		asserts:  map[string]*funcAssert{},
		declared: map[*spec.Store]bool{},
		read:     map[*spec.Node]bool{},
		nulls:    newNullFlow(prog),
	}
	for _, n := range prog.Nodes {
		for _, in := range n.Inputs {
			g.read[in] = true
		}
		for _, c := range n.Cogroup {
			g.read[c.Input] = true
		}
		for _, br := range n.Branches {
			g.read[br] = true
		}
		for _, fn := range nodeFuncs(n) {
			if fn.Name != "" {
				g.taken[fn.Name] = true
			}
		}
	}
	for _, s := range m.stores {
		g.taken[s.desc] = true
	}
	for _, n := range prog.Nodes {
		g.node(n)
	}
	if len(c.diags) > 0 {
		return false
	}
	hookSig := roleSig{
		params:  []jen.Code{jen.Id("ctx").Qual("context", "Context")},
		results: []jen.Code{jen.Error()},
		desc:    string(spec.RoleOnStart),
	}
	for _, f := range prog.App.OnStart {
		m.hooks = append(m.hooks, g.fn(&spec.Node{Name: "app.on_start", Pos: f.Pos}, f, hookSig))
	}
	for _, name := range []string{"AppID", "BuildTopology", "NewApp", "main"} {
		c.pkgScope.reserve(&c.diags, name, "generated topology identifier", prog.Pos)
	}
	m.sortFuncs(g.asserts)
	c.funcAsserts, c.inlineExprs = m.funcs, m.inline
	return true
}

// node emits the wiring of one IR node through its operator's emitter.
func (g *topoGen) node(n *spec.Node) {
	emit, ok := opTable[n.Op]
	if !ok {
		g.errorf(n.Pos, "node %q: operation %q is not supported by the generator", n.Name, n.Op)
		return
	}
	emit(g, n)
	g.markOwnLayout(n)
}

// markOwnLayout declares streamgen's own changelog layout for the DSL stores
// of n whose keys or values are msgpack records: Kafka Streams wrote such a
// store with its own serde, so a takeover cannot read it, and the runtime
// refuses its changelog unless streamgen wrote it (sgstream.MarkOwnLayout).
// Tables read from a topic are not marked: they hold the topic's bytes, as
// Kafka Streams' source tables do. The unmatched records of a left or outer
// stream-stream join hold values of both sides. Stores the runtime always
// lays out its own way (suppress buffers, subscriptions) are marked there.
func (g *topoGen) markOwnLayout(n *spec.Node) {
	var stores []*spec.Store
	switch n.Op {
	case spec.OpToTable, spec.OpCount, spec.OpReduce, spec.OpAggregate, spec.OpCogroup, spec.OpJoin:
		stores = append(stores, n.Store)
	}
	if n.Join != nil {
		stores = append(stores, n.Join.ThisStore, n.Join.OtherStore)
	}
	for _, st := range stores {
		if st != nil && (holdsRecord(st.Key) || holdsRecord(st.Value)) {
			g.mark(st)
		}
	}
	if j := n.Join; j != nil && j.OuterStore != nil && (holdsRecord(j.OuterStore.Key) || holdsRecord(n.Inputs[0].Value) || holdsRecord(n.Inputs[1].Value)) {
		g.mark(j.OuterStore)
	}
}

func (g *topoGen) mark(st *spec.Store) {
	g.add(jen.Qual(pathSgstream, "MarkOwnLayout").Call(jen.Id("b"), g.m.storeName(st)))
}

// holdsRecord reports whether t's bytes are a msgpack record, alone or
// inside a windowed key.
func holdsRecord(t *spec.Type) bool {
	for ; t != nil; t = t.Elem {
		if t.Kind == spec.KindRecord {
			return true
		}
	}
	return false
}

func (g *topoGen) errorf(pos spec.Pos, format string, args ...any) {
	g.c.diags.add(pos, format, args...)
}

func (g *topoGen) add(c jen.Code) { g.m.wiring = append(g.m.wiring, c) }

// in is the variable of n's i-th input, read through sgstream.NonNullable
// when it has pointer values and n's emitter expects plain ones.
func (g *topoGen) in(n *spec.Node, i int) jen.Code {
	v := jen.Id(g.vars[n.Inputs[i]])
	if g.nulls.ptrVar[n.Inputs[i]] && !nativeNull(n) {
		return jen.Qual(pathSgstream, "NonNullable").Call(v)
	}
	return v
}

// assign binds expr to n's variable, or calls it for its effect when no
// node reads n.
func (g *topoGen) assign(n *spec.Node, expr jen.Code) {
	if !g.read[n] {
		// Nothing reads this node (a table kept for its store, say): call
		// the operator for its effect without an unused variable.
		g.add(expr)
		return
	}
	v := g.varName(n)
	g.add(jen.Id(v).Op(":=").Add(g.nullableStream(n, expr)))
}

// varName makes a readable, unique local variable for a node, e.g.
// "processed.filter1" → processedFilter1. It never shadows a user function
// named in the spec or a store descriptor.
func (g *topoGen) varName(n *spec.Node) string {
	base := localName(n.Name)
	if base == "" || isReservedLocal(base) {
		base = "n" + GoName(base)
	}
	name := base
	for i := 2; g.taken[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	g.taken[name] = true
	g.vars[n] = name
	return name
}

// localName turns a spec name into a lowerCamel Go identifier.
func localName(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		isAlnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !isAlnum {
			up = b.Len() > 0
			continue
		}
		if b.Len() == 0 {
			if r >= '0' && r <= '9' {
				b.WriteString("n")
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isReservedLocal reports Go keywords, predeclared identifiers and the package
// names generated code uses.
func isReservedLocal(s string) bool {
	switch s {
	case "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for",
		"func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select",
		"struct", "switch", "type", "var",
		"any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32", "float64",
		"int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32",
		"uint64", "uintptr", "true", "false", "iota", "nil", "append", "cap", "clear", "close", "complex",
		"copy", "delete", "imag", "len", "make", "max", "min", "new", "panic", "print", "println", "real",
		"recover",
		"sgstream", "sgapp", "sgimpl", "sgquery", "serdes", "time", "os", "key", "value", "agg":
		return true
	}
	return false
}
