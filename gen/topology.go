package gen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// topologyFileName is the generated file holding the topology wiring.
const topologyFileName = "streamgen_topology.go"

// topoGen emits the topology wiring of one program: a BuildTopology
// function calling the runtime's typed operators in the IR's topological
// order, compile-time assertions of every user function's signature, and
// the application description for the generated binary's commands.
type topoGen struct {
	c     *genCtx
	prog  *spec.Program
	f     *jen.File
	vars  map[*spec.Node]string
	taken map[string]bool
	body  []jen.Code
	// asserts are the user functions named in the spec with the Go
	// signature each must have, for the compile-time assertions.
	asserts map[string]*funcAssert
	// extractors are the event-time extractor functions to emit.
	extractors []jen.Code
	// importsUsed are the spec imports referenced by inline expressions.
	importsUsed map[string]string // path -> a selector used, to keep the import alive
	// declared are the spec stores already declared with AddStateStore.
	declared map[*spec.Store]bool
	// read marks the nodes some other node reads.
	read map[*spec.Node]bool
	// hooks are the app's on_start functions.
	hooks []jen.Code
}

type funcAssert struct {
	name string
	sig  *jen.Statement // a func type
	node *spec.Node
	pos  spec.Pos
	role spec.FuncRole
}

// generateTopology is the generator step that writes the topology file.
func generateTopology(c *genCtx) error {
	prog := c.prog
	g := &topoGen{
		c:           c,
		prog:        prog,
		f:           c.newFile(topologyFileName),
		vars:        map[*spec.Node]string{},
		taken:       map[string]bool{"b": true},
		asserts:     map[string]*funcAssert{},
		importsUsed: map[string]string{},
		declared:    map[*spec.Store]bool{},
		read:        map[*spec.Node]bool{},
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
	}
	for _, n := range prog.Nodes {
		for _, fn := range nodeFuncs(n) {
			if fn.Name != "" {
				g.taken[fn.Name] = true
			}
		}
	}
	for _, n := range prog.Nodes {
		g.node(n)
	}
	if len(c.diags) > 0 {
		return nil
	}
	hookSig := roleSig{
		params:  []jen.Code{jen.Id("ctx").Qual("context", "Context")},
		results: []jen.Code{jen.Error()},
		desc:    string(spec.RoleOnStart),
	}
	for _, f := range prog.App.OnStart {
		g.hooks = append(g.hooks, g.fn(&spec.Node{Name: "app.on_start", Pos: f.Pos}, f, hookSig))
	}
	for _, name := range []string{"AppID", "BuildTopology", "NewApp", "main"} {
		c.pkgScope.reserve(&c.diags, name, "generated topology identifier", prog.Pos)
	}
	g.emit(c.cfg)
	return nil
}

func (g *topoGen) errorf(pos spec.Pos, format string, args ...any) {
	g.c.diags.add(pos, format, args...)
}

// nodeFuncs lists every user function of a node.
func nodeFuncs(n *spec.Node) []*spec.Func {
	var out []*spec.Func
	for _, f := range []*spec.Func{n.Fn, n.Init, n.Merger, n.Adder, n.Subtractor} {
		if f != nil {
			out = append(out, f)
		}
	}
	if n.Sink != nil && n.Sink.Chooser != nil {
		out = append(out, n.Sink.Chooser)
	}
	if j := n.Join; j != nil {
		for _, f := range []*spec.Func{j.KeyMapper, j.ForeignKey} {
			if f != nil {
				out = append(out, f)
			}
		}
	}
	for _, c := range n.Cogroup {
		if c.Aggregator != nil {
			out = append(out, c.Aggregator)
		}
	}
	for _, br := range n.Branches {
		if br.Fn != nil {
			out = append(out, br.Fn)
		}
	}
	return out
}

// varName makes a readable, unique local variable for a node, e.g.
// "processed.filter1" → processedFilter1. It never shadows a user function
// named in the spec.
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

// typ is the Go type of a key or value type in the topology: records are
// pointers (nil is a tombstone) and windowed keys are sgstream.Windowed.
func (g *topoGen) typ(t *spec.Type) *jen.Statement {
	if t.Kind == spec.KindWindowed || t.Kind == spec.KindSessionWindowed {
		return jen.Qual(pathSgstream, "Windowed").Types(g.typ(t.Elem))
	}
	return g.c.valueType(t)
}

// serde is the expression of a serde for a key or value type. Windowed
// keys need the window (time windows decode their end from the size).
func (g *topoGen) serde(t *spec.Type, w *spec.Window) *jen.Statement {
	switch t.Kind {
	case spec.KindWindowed:
		var size time.Duration
		if w != nil {
			size = windowSize(w)
		}
		return jen.Qual(pathSgstream, "TimeWindowedSerde").Types(g.typ(t.Elem)).Values(jen.Dict{
			jen.Id("Inner"): g.serde(t.Elem, nil),
			jen.Id("Size"):  durationLit(size),
		})
	case spec.KindSessionWindowed:
		return jen.Qual(pathSgstream, "SessionWindowedSerde").Types(g.typ(t.Elem)).Values(jen.Dict{
			jen.Id("Inner"): g.serde(t.Elem, nil),
		})
	}
	e, err := g.c.serdeExpr(t)
	if err != nil {
		// spec restricts topic and store types to what has a serde, so
		// this is a generator bug; report it rather than crash.
		g.errorf(g.prog.Pos, "internal error: %v", err)
		return jen.Nil()
	}
	return e
}

// windowSize is the size a time-windowed key decodes its end with: the
// window size, or for sliding windows the time difference (Kafka's
// TimeWindow(start, start+timeDifference)).
func windowSize(w *spec.Window) time.Duration {
	switch w.Kind {
	case spec.WindowSliding:
		return w.TimeDiff
	case spec.WindowSession:
		return 0
	}
	return w.Size
}

// durationLit renders a duration as a readable constant expression.
func durationLit(d time.Duration) *jen.Statement {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}}
	if d == 0 {
		return jen.Lit(0)
	}
	for _, u := range units {
		if d%u.d == 0 {
			n := int64(d / u.d)
			if n == 1 {
				return jen.Qual("time", u.name)
			}
			return jen.Lit(int(n)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Qual("time", "Duration").Call(jen.Lit(int64(d)))
}

// windowOf finds the window of a windowed node by walking up its inputs.
func windowOf(n *spec.Node) *spec.Window {
	for n != nil {
		if n.Window != nil {
			return n.Window
		}
		if len(n.Inputs) == 0 {
			return nil
		}
		n = n.Inputs[0]
	}
	return nil
}

// roleSig describes a user function's Go signature for its role.
type roleSig struct {
	params  []jen.Code // named params
	results []jen.Code
	// desc identifies the signature, so one function asserted twice with
	// the same signature is asserted once.
	desc string
}

// signature returns the Go signature a user function of role must have on
// node n (with input key k, value v; out are the output types).
func (g *topoGen) signature(role spec.FuncRole, k, v, k2, v2, a *spec.Type) roleSig {
	sig := g.signatureOf(role, k, v, k2, v2, a)
	if role == spec.RoleInit {
		k, v, k2, v2 = nil, nil, nil, nil // an initializer's signature depends only on the aggregate
	}
	sig.desc = string(role)
	for _, t := range []*spec.Type{k, v, k2, v2, a} {
		if t != nil {
			sig.desc += "|" + t.String()
		} else {
			sig.desc += "|-"
		}
	}
	return sig
}

func (g *topoGen) signatureOf(role spec.FuncRole, k, v, k2, v2, a *spec.Type) roleSig {
	p := func(name string, t *spec.Type) jen.Code { return jen.Id(name).Add(g.typ(t)) }
	switch role {
	case spec.RolePredicate:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.Bool()}}
	case spec.RoleKeyValueMap:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{g.typ(k2), g.typ(v2)}}
	case spec.RoleValueMap:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{g.typ(v2)}}
	case spec.RoleFlatMap:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.Index().Qual(pathSgstream, "KeyValue").Types(g.typ(k2), g.typ(v2))}}
	case spec.RoleFlatMapValues:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.Index().Add(g.typ(v2))}}
	case spec.RoleKeySelect:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{g.typ(k2)}}
	case spec.RoleAction:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: nil}
	case spec.RoleInit:
		return roleSig{params: nil, results: []jen.Code{g.typ(a)}}
	case spec.RoleAggregate:
		return roleSig{params: []jen.Code{p("key", k), p("value", v), p("agg", a)}, results: []jen.Code{g.typ(a)}}
	case spec.RoleReduce:
		return roleSig{params: []jen.Code{p("agg", v), p("value", v)}, results: []jen.Code{g.typ(v)}}
	case spec.RoleMerge:
		return roleSig{params: []jen.Code{p("key", k), p("a", a), p("b", a)}, results: []jen.Code{g.typ(a)}}
	case spec.RoleJoin:
		return roleSig{params: []jen.Code{p("key", k), p("left", v), p("right", v2)}, results: []jen.Code{g.typ(a)}}
	case spec.RoleTopic:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.String()}}
	case spec.RoleForeignKey:
		return roleSig{params: []jen.Code{p("value", v)}, results: []jen.Code{g.typ(k2)}}
	}
	panic("gen: no signature for role " + string(role))
}

// fn renders a user function reference or an inline expression as a Go
// expression of the role's signature, and records the assertion.
func (g *topoGen) fn(n *spec.Node, f *spec.Func, sig roleSig) jen.Code {
	if f.Name != "" {
		ft := jen.Func().Params(sig.params...)
		switch len(sig.results) {
		case 0:
		case 1:
			ft = ft.Add(sig.results[0])
		default:
			ft = ft.Parens(jen.List(sig.results...))
		}
		key := f.Name + "|" + sig.desc
		if _, ok := g.asserts[key]; !ok {
			g.asserts[key] = &funcAssert{name: f.Name, sig: ft, node: n, pos: f.Pos, role: f.Role}
		}
		return jen.Id(f.Name)
	}
	g.noteImports(f)
	g.c.inlineExprs = append(g.c.inlineExprs, &funcAssert{name: f.Expr, node: n, pos: f.Pos, role: f.Role})
	lit := jen.Func().Params(sig.params...)
	switch len(sig.results) {
	case 0:
		return lit.Block(jen.Op(f.Expr))
	case 1:
		lit = lit.Add(sig.results[0])
	default:
		lit = lit.Parens(jen.List(sig.results...))
	}
	return lit.Block(jen.Return(jen.Op(f.Expr)))
}

// noteImports finds the spec imports an inline expression uses, so the
// generated file imports them (jennifer only imports what Qual names).
func (g *topoGen) noteImports(f *spec.Func) {
	expr, err := parser.ParseExpr(f.Expr)
	if err != nil {
		return // spec already reported it
	}
	byName := map[string]string{}
	for _, path := range g.prog.Imports {
		byName[path[strings.LastIndex(path, "/")+1:]] = path
	}
	ast.Inspect(expr, func(x ast.Node) bool {
		if sel, ok := x.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, ok := byName[id.Name]; ok {
					if _, seen := g.importsUsed[path]; !seen {
						g.importsUsed[path] = sel.Sel.Name
					}
				}
			}
		}
		return true
	})
}

func (g *topoGen) add(c jen.Code) { g.body = append(g.body, c) }

func (g *topoGen) in(n *spec.Node, i int) jen.Code { return jen.Id(g.vars[n.Inputs[i]]) }

// node emits the wiring of one IR node.
func (g *topoGen) node(n *spec.Node) {
	var in *spec.Node
	if len(n.Inputs) > 0 {
		in = n.Inputs[0]
	}
	name := jen.Lit(n.Name)
	switch n.Op {
	case spec.OpSource:
		g.source(n)
	case spec.OpFilter, spec.OpFilterNot:
		fnName := map[spec.Op]string{spec.OpFilter: "Filter", spec.OpFilterNot: "FilterNot"}[n.Op]
		if in.Shape == spec.ShapeTable {
			fnName += "Table"
		}
		pred := g.fn(n, n.Fn, g.signature(spec.RolePredicate, in.Key, in.Value, nil, nil, nil))
		g.assign(n, jen.Qual(pathSgstream, fnName).Call(g.in(n, 0), name, pred))
	case spec.OpMap:
		f := g.fn(n, n.Fn, g.signature(spec.RoleKeyValueMap, in.Key, in.Value, n.Key, n.Value, nil))
		g.assign(n, jen.Qual(pathSgstream, "Map").Call(g.in(n, 0), name, f))
	case spec.OpMapValues:
		f := g.fn(n, n.Fn, g.signature(spec.RoleValueMap, in.Key, in.Value, nil, n.Value, nil))
		if in.Shape == spec.ShapeTable {
			g.assign(n, jen.Qual(pathSgstream, "MapValuesTable").Call(g.in(n, 0), name, f, g.serde(n.Value, nil)))
		} else {
			g.assign(n, jen.Qual(pathSgstream, "MapValues").Call(g.in(n, 0), name, f))
		}
	case spec.OpFlatMap:
		f := g.fn(n, n.Fn, g.signature(spec.RoleFlatMap, in.Key, in.Value, n.Key, n.Value, nil))
		g.assign(n, jen.Qual(pathSgstream, "FlatMap").Call(g.in(n, 0), name, f))
	case spec.OpFlatMapValues:
		f := g.fn(n, n.Fn, g.signature(spec.RoleFlatMapValues, in.Key, in.Value, nil, n.Value, nil))
		g.assign(n, jen.Qual(pathSgstream, "FlatMapValues").Call(g.in(n, 0), name, f))
	case spec.OpSelectKey:
		f := g.fn(n, n.Fn, g.signature(spec.RoleKeySelect, in.Key, in.Value, n.Key, nil, nil))
		g.assign(n, jen.Qual(pathSgstream, "SelectKey").Call(g.in(n, 0), name, f))
	case spec.OpPeek:
		f := g.fn(n, n.Fn, g.signature(spec.RoleAction, in.Key, in.Value, nil, nil, nil))
		g.assign(n, jen.Qual(pathSgstream, "Peek").Call(g.in(n, 0), name, f))
	case spec.OpForeach:
		f := g.fn(n, n.Fn, g.signature(spec.RoleAction, in.Key, in.Value, nil, nil, nil))
		g.add(jen.Qual(pathSgstream, "Foreach").Call(g.in(n, 0), name, f))
	case spec.OpSplit:
		g.split(n)
	case spec.OpBranch:
		// Emitted with its split.
	case spec.OpMerge:
		args := []jen.Code{name}
		for i := range n.Inputs {
			args = append(args, g.in(n, i))
		}
		g.assign(n, jen.Qual(pathSgstream, "Merge").Call(args...))
	case spec.OpRepartition:
		g.assign(n, jen.Qual(pathSgstream, "Repartition").Call(g.in(n, 0), jen.Lit(n.Repartition.Name), jen.Lit(n.Repartition.Partitions), g.serde(n.Key, nil), g.serde(n.Value, nil)))
	case spec.OpTo:
		g.sink(n)
	case spec.OpToTable:
		src := g.in(n, 0)
		if rp := n.Repartition; rp != nil {
			// The key changed upstream: the table must be partitioned by it.
			v := g.varName(&spec.Node{Name: rp.Name + "-repartitioned"})
			g.add(jen.Id(v).Op(":=").Qual(pathSgstream, "Repartition").Call(src, jen.Lit(rp.Name), jen.Lit(rp.Partitions), g.serde(in.Key, nil), g.serde(in.Value, nil)))
			src = jen.Id(v)
		}
		g.assign(n, jen.Qual(pathSgstream, "ToTable").Call(src, name, jen.Lit(n.Store.Name), g.serde(n.Key, nil), g.serde(n.Value, nil)))
	case spec.OpToStream:
		g.assign(n, jen.Qual(pathSgstream, "ToStream").Call(g.in(n, 0), name))
	case spec.OpGroupByKey:
		rep, repName := false, n.Name
		if n.Repartition != nil {
			rep, repName = true, n.Repartition.Name
		}
		g.assign(n, jen.Qual(pathSgstream, "GroupByKey").Call(g.in(n, 0), jen.Lit(repName), jen.Lit(rep), g.serde(n.Key, nil), g.serde(n.Value, nil)))
	case spec.OpGroupBy:
		if in.Shape == spec.ShapeTable {
			f := g.fn(n, n.Fn, g.signature(spec.RoleKeyValueMap, in.Key, in.Value, n.Key, n.Value, nil))
			g.assign(n, jen.Qual(pathSgstream, "GroupByTable").Call(g.in(n, 0), jen.Lit(n.Repartition.Name), f, g.serde(n.Key, nil), g.serde(n.Value, nil)))
		} else {
			f := g.fn(n, n.Fn, g.signature(spec.RoleKeySelect, in.Key, in.Value, n.Key, nil, nil))
			g.assign(n, jen.Qual(pathSgstream, "GroupBy").Call(g.in(n, 0), jen.Lit(n.Repartition.Name), f, g.serde(n.Key, nil), g.serde(n.Value, nil)))
		}
	case spec.OpWindowedBy:
		g.windowedBy(n)
	case spec.OpCount, spec.OpReduce, spec.OpAggregate:
		g.aggregate(n)
	case spec.OpCogroup:
		g.cogroup(n)
	case spec.OpSuppress:
		g.suppress(n)
	case spec.OpJoin:
		g.join(n)
	case spec.OpProcess, spec.OpProcessValues:
		g.process(n)
	default:
		g.errorf(n.Pos, "node %q: operation %q is not supported by the generator", n.Name, n.Op)
	}
}

func (g *topoGen) assign(n *spec.Node, expr jen.Code) {
	if !g.read[n] {
		// Nothing reads this node (a table kept for its store, say): call
		// the operator for its effect without an unused variable.
		g.add(expr)
		return
	}
	v := g.varName(n)
	g.add(jen.Id(v).Op(":=").Add(expr))
}

func (g *topoGen) source(n *spec.Node) {
	t := n.Topic
	cfg := jen.Dict{
		jen.Id("Topic"): jen.Lit(t.Name),
		jen.Id("Key"):   g.serde(t.Key, nil),
		jen.Id("Value"): g.serde(t.Value, nil),
	}
	if t.Partitions > 0 {
		cfg[jen.Id("Partitions")] = jen.Lit(t.Partitions)
	}
	if t.TimestampField != nil {
		ex := "timestamp" + GoName(t.Name)
		cfg[jen.Id("Timestamp")] = jen.Id(ex)
		g.extractor(ex, t)
	}
	conf := jen.Qual(pathSgstream, "SourceConfig").Types(g.typ(t.Key), g.typ(t.Value)).Values(cfg)
	switch t.Kind {
	case spec.TopicTable:
		g.assign(n, jen.Qual(pathSgstream, "TableSource").Call(jen.Id("b"), jen.Lit(n.Name), conf, jen.Lit(t.Store.Name)))
	case spec.TopicGlobalTable:
		g.assign(n, jen.Qual(pathSgstream, "GlobalTableSource").Call(jen.Id("b"), jen.Lit(n.Name), conf, jen.Lit(t.Store.Name)))
	default:
		g.assign(n, jen.Qual(pathSgstream, "Source").Call(jen.Id("b"), jen.Lit(n.Name), conf))
	}
}

// extractor emits the event-time extractor of a topic: the timestamp field
// of the value, or the record timestamp for tombstones.
func (g *topoGen) extractor(name string, t *spec.Topic) {
	field := jen.Id("value").Dot(g.c.fieldNames[t.TimestampField])
	ms := field
	if t.TimestampField.Type.Kind == spec.KindTimestamp {
		ms = field.Clone().Dot("UnixMilli").Call()
	}
	g.extractors = append(g.extractors,
		jen.Commentf("%s extracts event time from field %q of topic %q; tombstones keep the record timestamp.", name, t.TimestampField.Name, t.Name),
		jen.Func().Id(name).Params(jen.Id("key").Add(g.typ(t.Key)), jen.Id("value").Add(g.typ(t.Value)), jen.Id("valueNull").Bool(), jen.Id("recordTs").Int64()).Int64().Block(
			jen.If(jen.Id("valueNull")).Block(jen.Return(jen.Id("recordTs"))),
			jen.Return(ms),
		),
		jen.Line(),
	)
}

func (g *topoGen) split(n *spec.Node) {
	in := n.Inputs[0]
	var items []jen.Code
	for _, br := range n.Branches {
		d := jen.Dict{jen.Id("Name"): jen.Lit(br.Name)}
		if !br.Default && br.Fn != nil {
			d[jen.Id("Pred")] = g.fn(br, br.Fn, g.signature(spec.RolePredicate, in.Key, in.Value, nil, nil, nil))
		}
		items = append(items, jen.Values(d))
	}
	v := g.varName(n)
	g.add(jen.Id(v).Op(":=").Qual(pathSgstream, "Split").Call(g.in(n, 0), jen.Lit(n.Name),
		jen.Index().Qual(pathSgstream, "Branch").Types(g.typ(in.Key), g.typ(in.Value)).Values(items...)))
	for i, br := range n.Branches {
		if !g.read[br] {
			continue
		}
		bv := g.varName(br)
		g.add(jen.Id(bv).Op(":=").Id(v).Index(jen.Lit(i)))
	}
}

func (g *topoGen) sink(n *spec.Node) {
	in := n.Inputs[0]
	w := windowOf(in)
	cfg := jen.Dict{
		jen.Id("Key"):   g.serde(in.Key, w),
		jen.Id("Value"): g.serde(in.Value, nil),
	}
	if in.Key.Kind == spec.KindWindowed || in.Key.Kind == spec.KindSessionWindowed {
		cfg[jen.Id("Windowed")] = jen.True()
		cfg[jen.Id("PartitionKey")] = g.serde(in.Key, w).Dot("PartitionKey")
	}
	conf := jen.Qual(pathSgstream, "SinkConfig").Types(g.typ(in.Key), g.typ(in.Value)).Values(cfg)
	if n.Sink.Topic != nil {
		g.add(jen.Qual(pathSgstream, "To").Call(g.in(n, 0), jen.Lit(n.Name), jen.Lit(n.Sink.Topic.Name), conf))
		return
	}
	var topics []string
	for _, t := range g.prog.Topics {
		if t.Key.Equal(in.Key) && t.Value.Equal(in.Value) {
			topics = append(topics, t.Name)
		}
	}
	sort.Strings(topics)
	var lits []jen.Code
	for _, t := range topics {
		lits = append(lits, jen.Lit(t))
	}
	f := g.fn(n, n.Sink.Chooser, g.signature(spec.RoleTopic, in.Key, in.Value, nil, nil, nil))
	g.add(jen.Qual(pathSgstream, "ToDynamic").Call(g.in(n, 0), jen.Lit(n.Name), f, jen.Index().String().Values(lits...), conf))
}

func (g *topoGen) windowedBy(n *spec.Node) {
	kind, lit := windowsLit(n.Window)
	g.assign(n, jen.Qual(pathSgstream, "WindowedBy"+kind).Call(g.in(n, 0), jen.Lit(n.Name), lit))
}

// windowsLit is the runtime's windows value for w, and the suffix of the
// functions that take it ("" for TimeWindows, "Sliding", "Session"), as in
// WindowedBy and the windowed cogroups.
func windowsLit(w *spec.Window) (string, jen.Code) {
	d := jen.Dict{}
	if w.Grace != 0 {
		d[jen.Id("Grace")] = durationLit(w.Grace)
	}
	if w.Retention != 0 {
		d[jen.Id("Retention")] = durationLit(w.Retention)
	}
	switch w.Kind {
	case spec.WindowSliding:
		d[jen.Id("TimeDifference")] = durationLit(w.TimeDiff)
		return "Sliding", jen.Qual(pathSgstream, "SlidingWindows").Values(d)
	case spec.WindowSession:
		d[jen.Id("Gap")] = durationLit(w.Gap)
		return "Session", jen.Qual(pathSgstream, "SessionWindows").Values(d)
	}
	d[jen.Id("Size")] = durationLit(w.Size)
	if w.Kind == spec.WindowHopping && w.Advance != w.Size {
		d[jen.Id("Advance")] = durationLit(w.Advance)
	}
	return "", jen.Qual(pathSgstream, "TimeWindows").Values(d)
}

// windowStoreOpts are the WindowStoreOpt arguments for n's store.
func windowStoreOpts(n *spec.Node) []jen.Code {
	var opts []jen.Code
	if n.Store.InMemory {
		opts = append(opts, jen.Qual(pathSgstream, "WindowStoreInMemory").Call())
	}
	if !n.Store.Logged {
		opts = append(opts, jen.Qual(pathSgstream, "WindowStoreNotLogged").Call())
	}
	return opts
}

func emitLit(e spec.EmitStrategy) jen.Code {
	if e == spec.EmitOnClose {
		return jen.Qual(pathSgstream, "EmitOnClose")
	}
	return jen.Qual(pathSgstream, "EmitOnUpdate")
}

// aggregate emits count, reduce and aggregate for every input shape.
func (g *topoGen) aggregate(n *spec.Node) {
	in := n.Inputs[0]
	name, store := jen.Lit(n.Name), jen.Lit(n.Store.Name)
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
	if n.Op == spec.OpReduce && !windowed && in.Shape != spec.ShapeGroupedTable {
		// Reduce on a grouped stream needs no extra serde: the value serde
		// of the grouped stream is reused.
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
	expr := jen.Qual(pathSgstream, "Cogroup").Call(jen.Id(g.vars[first.Input]),
		g.fn(n, first.Aggregator, g.signature(spec.RoleAggregate, k, first.Input.Value, nil, nil, a)))
	for _, c := range n.Cogroup[1:] {
		expr = jen.Qual(pathSgstream, "CogroupWith").Call(expr, jen.Id(g.vars[c.Input]),
			g.fn(n, c.Aggregator, g.signature(spec.RoleAggregate, k, c.Input.Value, nil, nil, a)))
	}
	init := g.fn(n, n.Init, g.signature(spec.RoleInit, k, nil, nil, nil, a))
	if n.Window == nil {
		g.assign(n, jen.Qual(pathSgstream, "CogroupAggregate").Call(expr, jen.Lit(n.Name), jen.Lit(n.Store.Name), init, g.serde(a, nil)))
		return
	}
	kind, windows := windowsLit(n.Window)
	args := []jen.Code{expr, jen.Lit(n.Name), jen.Lit(n.Store.Name), windows, init}
	if kind == "Session" {
		args = append(args, g.fn(n, n.Merger, g.signature(spec.RoleMerge, k, nil, nil, nil, a)))
	}
	args = append(append(args, g.serde(a, nil)), windowStoreOpts(n)...)
	op := map[string]string{"": "CogroupWindowedAggregate", "Sliding": "CogroupSlidingAggregate", "Session": "CogroupSessionAggregate"}[kind]
	g.assign(n, jen.Qual(pathSgstream, op).Call(args...))
}

func (g *topoGen) suppress(n *spec.Node) {
	sp := n.Suppress
	d := jen.Dict{}
	var bufferTime jen.Code = jen.Nil()
	if sp.Kind == spec.SuppressUntilWindowCloses {
		d[jen.Id("UntilWindowCloses")] = jen.True()
		w := windowOf(n)
		grace := w.Grace
		if w.Kind == spec.WindowSession {
			grace += w.Gap
		}
		if grace != 0 {
			d[jen.Id("Grace")] = durationLit(grace)
		}
		bufferTime = jen.Qual(pathSgstream, "WindowEnd").Types(g.typ(n.Key.Elem))
	} else if sp.TimeLimit != 0 {
		d[jen.Id("TimeLimit")] = durationLit(sp.TimeLimit)
	}
	if sp.MaxRecords != 0 {
		d[jen.Id("MaxRecords")] = jen.Lit(sp.MaxRecords)
	}
	if sp.MaxBytes != 0 {
		d[jen.Id("MaxBytes")] = jen.Lit(sp.MaxBytes)
	}
	if sp.WhenFull == "emit_early" {
		d[jen.Id("EmitEarlyWhenFull")] = jen.True()
	}
	g.assign(n, jen.Qual(pathSgstream, "Suppress").Call(g.in(n, 0), jen.Lit(sp.Name), jen.Qual(pathSgstream, "SuppressConfig").Values(d), bufferTime))
}

func joinKindLit(k spec.JoinKind) jen.Code {
	switch k {
	case spec.JoinLeft:
		return jen.Qual(pathSgstream, "LeftJoin")
	case spec.JoinOuter:
		return jen.Qual(pathSgstream, "OuterJoin")
	}
	return jen.Qual(pathSgstream, "InnerJoin")
}

func (g *topoGen) join(n *spec.Node) {
	j := n.Join
	l, r := n.Inputs[0], n.Inputs[1]
	// A side whose key changed upstream is co-partitioned with the other
	// side through its repartition topic first.
	repartition := func(side jen.Code, in *spec.Node, rp *spec.Repartition) jen.Code {
		if rp == nil {
			return side
		}
		v := g.varName(&spec.Node{Name: rp.Name + "-repartitioned"})
		g.add(jen.Id(v).Op(":=").Qual(pathSgstream, "Repartition").Call(side, jen.Lit(rp.Name), jen.Lit(rp.Partitions), g.serde(in.Key, nil), g.serde(in.Value, nil)))
		return jen.Id(v)
	}
	left, right := g.in(n, 0), g.in(n, 1)
	if j.Shape == spec.JoinStreamStream {
		left = repartition(left, l, j.ThisRepartition)
		right = repartition(right, r, j.OtherRepartition)
	} else {
		rp := j.ThisRepartition
		if rp == nil {
			rp = n.Repartition
		}
		left = repartition(left, l, rp)
	}
	name := jen.Lit(n.Name)
	joiner := func(v2 *spec.Type) jen.Code {
		return g.fn(n, n.Fn, g.signature(spec.RoleJoin, l.Key, l.Value, nil, v2, n.Value))
	}
	switch j.Shape {
	case spec.JoinStreamStream:
		base := strings.TrimSuffix(j.ThisStore.Name, "-this")
		w := jen.Dict{}
		if j.Before != 0 {
			w[jen.Id("Before")] = durationLit(j.Before)
		}
		if j.After != 0 {
			w[jen.Id("After")] = durationLit(j.After)
		}
		if j.Grace != 0 {
			w[jen.Id("Grace")] = durationLit(j.Grace)
		}
		sd := jen.Qual(pathSgstream, "StreamJoinSerdes").Types(g.typ(l.Key), g.typ(l.Value), g.typ(r.Value)).Values(jen.Dict{
			jen.Id("Key"): g.serde(l.Key, nil), jen.Id("Left"): g.serde(l.Value, nil), jen.Id("Right"): g.serde(r.Value, nil),
		})
		g.assign(n, jen.Qual(pathSgstream, "JoinStreams").Call(left, right, jen.Lit(base), joinKindLit(j.Kind),
			jen.Qual(pathSgstream, "JoinWindows").Values(w), joiner(r.Value), sd))
	case spec.JoinStreamTable:
		g.assign(n, jen.Qual(pathSgstream, "JoinStreamTable").Call(left, right, name, joinKindLit(j.Kind), joiner(r.Value)))
	case spec.JoinStreamGlobal:
		var km jen.Code
		if j.KeyMapper != nil {
			km = g.fn(n, j.KeyMapper, g.signature(spec.RoleKeySelect, l.Key, l.Value, r.Key, nil, nil))
		} else {
			km = jen.Func().Params(jen.Id("key").Add(g.typ(l.Key)), jen.Id("_").Add(g.typ(l.Value))).Add(g.typ(l.Key)).Block(jen.Return(jen.Id("key")))
		}
		g.assign(n, jen.Qual(pathSgstream, "JoinStreamGlobal").Call(left, right, name, joinKindLit(j.Kind), km, joiner(r.Value)))
	case spec.JoinTableTable:
		store := ""
		if n.Store != nil {
			store = n.Store.Name
		}
		g.assign(n, jen.Qual(pathSgstream, "JoinTables").Call(left, right, name, joinKindLit(j.Kind), joiner(r.Value), jen.Lit(store), g.serde(n.Value, nil)))
	case spec.JoinForeignKey:
		base := strings.TrimSuffix(j.SubscriptionStore.Name, "-subscriptions")
		store := ""
		if n.Store != nil {
			store = n.Store.Name
		}
		fk := g.fn(n, j.ForeignKey, g.signature(spec.RoleForeignKey, l.Key, l.Value, r.Key, nil, nil))
		sd := jen.Qual(pathSgstream, "ForeignKeySerdes").Types(g.typ(l.Key), g.typ(l.Value), g.typ(r.Key), g.typ(n.Value)).Values(jen.Dict{
			jen.Id("Key"): g.serde(l.Key, nil), jen.Id("Value"): g.serde(l.Value, nil),
			jen.Id("ForeignKey"): g.serde(r.Key, nil), jen.Id("Result"): g.serde(n.Value, nil),
		})
		g.assign(n, jen.Qual(pathSgstream, "JoinForeignKey").Call(left, right, jen.Lit(base), joinKindLit(j.Kind), fk, joiner(r.Value), jen.Lit(store), sd))
	default:
		g.errorf(n.Pos, "node %q: join shape %q is not supported by the generator", n.Name, j.Shape)
	}
}

func storeKindLit(k spec.StoreKind) jen.Code {
	switch k {
	case spec.StoreWindow:
		return jen.Qual(pathSgstream, "WindowStore")
	case spec.StoreSession:
		return jen.Qual(pathSgstream, "SessionStore")
	}
	return jen.Qual(pathSgstream, "KeyValueStore")
}

// process emits a process or process_values step and declares the spec's
// stores it uses (once each).
func (g *topoGen) process(n *spec.Node) {
	in := n.Inputs[0]
	var names []jen.Code
	for _, st := range n.Stores {
		names = append(names, jen.Lit(st.Name))
		if g.declared[st] {
			continue
		}
		g.declared[st] = true
		d := jen.Dict{
			jen.Id("Name"): jen.Lit(st.Name),
			jen.Id("Kind"): storeKindLit(st.Kind),
		}
		if st.InMemory {
			d[jen.Id("InMemory")] = jen.True()
		}
		if st.Logged {
			d[jen.Id("Logged")] = jen.True()
		}
		if st.Retention != 0 {
			d[jen.Id("Retention")] = durationLit(st.Retention)
		}
		if st.WindowSize != 0 {
			d[jen.Id("WindowSize")] = durationLit(st.WindowSize)
		}
		if st.Custom != nil {
			d[jen.Id("Custom")] = g.fn(n, st.Custom, roleSig{results: []jen.Code{jen.Qual(pathSgstate, "Store")}, desc: "store"})
		}
		g.add(jen.Qual(pathSgstream, "AddStateStore").Call(jen.Id("b"), jen.Qual(pathSgstream, "StoreSpec").Values(d)))
	}
	kOut := n.Key
	op := "Process"
	if n.Op == spec.OpProcessValues {
		op, kOut = "ProcessValues", in.Key
	}
	ctor := g.fn(n, n.Fn, roleSig{
		results: []jen.Code{jen.Qual(pathSgstream, "Processor").Types(g.typ(in.Key), g.typ(in.Value), g.typ(kOut), g.typ(n.Value))},
		desc:    "processor|" + in.Key.String() + "|" + in.Value.String() + "|" + kOut.String() + "|" + n.Value.String(),
	})
	g.assign(n, jen.Qual(pathSgstream, op).Call(g.in(n, 0), jen.Lit(n.Name), ctor, jen.Index().String().Values(names...)))
}

// emit writes the file: AppID, BuildTopology, extractors, signature
// assertions, the App description and, for package main, main.
func (g *topoGen) emit(cfg Config) {
	f := g.f
	app := g.prog.App
	f.Commentf("AppID is the application id: the consumer group and the prefix of every internal topic.")
	f.Const().Id("AppID").Op("=").Lit(app.ID)
	f.Line()
	f.Commentf("BuildTopology wires the topology of %s. The runtime calls it once per task, so", cfg.SpecPath)
	f.Comment("every task owns its own nodes and stores.")
	f.Func().Id("BuildTopology").Params(jen.Id("b").Op("*").Qual(pathSgstream, "Builder")).Block(g.body...)
	f.Line()
	for _, c := range g.extractors {
		f.Add(c)
	}
	if len(g.asserts) > 0 {
		keys := make([]string, 0, len(g.asserts))
		for k := range g.asserts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var lines []jen.Code
		for _, k := range keys {
			a := g.asserts[k]
			g.c.funcAsserts = append(g.c.funcAsserts, a)
			lines = append(lines, jen.Comment(fmt.Sprintf("%s: %s of node %q", a.pos, a.role, a.node.Name)))
			lines = append(lines, jen.Id("_").Add(a.sig).Op("=").Id(a.name))
		}
		f.Comment("The user functions the spec names, with the signatures the topology needs: a")
		f.Comment("mismatch fails `go build` here, next to the spec position of the step.")
		f.Var().Defs(lines...)
		f.Line()
	}
	if len(g.importsUsed) > 0 {
		paths := make([]string, 0, len(g.importsUsed))
		for p := range g.importsUsed {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var lines []jen.Code
		for _, p := range paths {
			lines = append(lines, jen.Id("_").Op("=").Qual(p, g.importsUsed[p]))
		}
		f.Comment("Keep the imports that inline expressions use.")
		f.Var().Defs(lines...)
		f.Line()
	}
	g.emitApp()
}

func policyLit(p spec.ErrorPolicy) jen.Code {
	switch p {
	case spec.PolicyContinue:
		return jen.Qual(pathSgstream, "PolicyContinue")
	case spec.PolicyDeadLetter:
		return jen.Qual(pathSgstream, "PolicyDeadLetter")
	}
	return jen.Qual(pathSgstream, "PolicyFail")
}

func timestampPolicyLit(p spec.TimestampPolicy) jen.Code {
	switch p {
	case spec.TimestampSkip:
		return jen.Qual(pathSgstream, "TimestampSkip")
	case spec.TimestampPartitionTime:
		return jen.Qual(pathSgstream, "TimestampPartitionTime")
	case spec.TimestampDeadLetter:
		return jen.Qual(pathSgstream, "TimestampDeadLetter")
	}
	return jen.Qual(pathSgstream, "TimestampFail")
}

// emitApp writes NewApp (and main for package main): the description the
// generated binary's commands work from.
func (g *topoGen) emitApp() {
	f := g.f
	app := g.prog.App
	var codecs []jen.Code
	for _, t := range g.prog.Topics {
		codecs = append(codecs, g.codec(t))
	}
	guarantee := string(app.Guarantee)
	if guarantee == "" {
		guarantee = string(spec.AtLeastOnce)
	}
	d := jen.Dict{
		jen.Id("ID"):              jen.Id("AppID"),
		jen.Id("Build"):           jen.Id("BuildTopology"),
		jen.Id("Topics"):          jen.Index().Qual(pathSgreplay, "TopicCodec").Values(codecs...),
		jen.Id("Guarantee"):       jen.Lit(guarantee),
		jen.Id("Deserialization"): policyLit(app.OnDeserializationError),
		jen.Id("Processing"):      policyLit(app.OnProcessingError),
		jen.Id("InvalidTime"):     timestampPolicyLit(app.InvalidTimestamp),
		jen.Id("Run"):             jen.Qual(pathSgkafka, "Run"),
	}
	if app.CommitInterval != 0 {
		d[jen.Id("CommitInterval")] = durationLit(app.CommitInterval)
	}
	if app.DeadLetterTopic != "" {
		d[jen.Id("DeadLetterTopic")] = jen.Lit(app.DeadLetterTopic)
	}
	if len(driverStores(g.prog)) > 0 {
		d[jen.Id("Stores")] = jen.Id("queryStores").Call() // query.go
	}
	if len(g.hooks) > 0 {
		d[jen.Id("OnStart")] = jen.Index().Func().Params(jen.Qual("context", "Context")).Error().Values(g.hooks...)
	}
	f.Comment("NewApp describes the application for the standard commands (run, replay, describe).")
	f.Func().Id("NewApp").Params().Op("*").Qual(pathSgapp, "App").Block(
		jen.Return(jen.Op("&").Qual(pathSgapp, "App").Values(d)),
	)
	if g.prog.Package == "main" {
		f.Line()
		f.Func().Id("main").Params().Block(
			jen.Qual("os", "Exit").Call(jen.Qual(pathSgapp, "Main").Call(jen.Id("NewApp").Call(), jen.Qual("os", "Args").Index(jen.Lit(1).Op(":")))),
		)
	}
}

// codec is the replay/driver codec of a declared topic.
func (g *topoGen) codec(t *spec.Topic) jen.Code {
	switch t.Key.Kind {
	case spec.KindWindowed, spec.KindSessionWindowed:
		session := t.Key.Kind == spec.KindSessionWindowed
		var size time.Duration
		if w := g.windowFeeding(t); w != nil {
			size = windowSize(w)
		}
		return jen.Qual(pathSgreplay, "WindowedTopic").Call(jen.Lit(t.Name), g.serde(t.Key.Elem, nil), g.serde(t.Value, nil), jen.Lit(session), durationLit(size))
	}
	return jen.Qual(pathSgreplay, "Topic").Call(jen.Lit(t.Name), g.serde(t.Key, nil), g.serde(t.Value, nil))
}

// windowFeeding finds the window of the first sink that writes topic t.
func (g *topoGen) windowFeeding(t *spec.Topic) *spec.Window {
	for _, n := range g.prog.Nodes {
		if n.Op == spec.OpTo && n.Sink.Topic == t {
			return windowOf(n.Inputs[0])
		}
	}
	return nil
}
