package spec

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"strings"

	"go.yaml.in/yaml/v3"
)

// step is one pipeline step being resolved.
type step struct {
	p        *parser
	pipe     string
	op       Op
	def      *opDef // the row of op in opTable
	name     string // node name
	stepName string // explicit `name:` of the step, or ""
	namePos  Pos
	doc      string
	pos      Pos // position of the op key
	body     *yaml.Node
	in       *Node
	inBad    bool // the input failed to resolve: skip type checks
	failed   bool // this step failed: its output is not trustworthy
	hinted   bool // a type hint was given already
}

// ctx is the diagnostic prefix of the step: `join "enrich"`.
func (s *step) ctx() string { return fmt.Sprintf("%s %q", s.op, s.name) }

func (s *step) errf(pos Pos, format string, args ...any) {
	s.p.errf(pos, s.ctx()+": "+format, args...)
	s.failed = true
}

// obj reads the op's body as a mapping with the op's keys; a missing body
// (`to_stream:`) is an empty mapping. A `name` left in the body (readStep
// took it out where the op allows it) is reported with where it belongs.
func (s *step) obj() *obj {
	p := s.p
	if s.body.Kind == yaml.ScalarNode && s.body.Tag == "!!null" {
		return &obj{p: p, ctx: s.ctx(), n: s.body, m: map[string]entry{}}
	}
	if s.body.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(s.body.Content); i += 2 {
			if k := s.body.Content[i]; k.Value == "name" {
				p.errf(p.pos(k), "%s: unknown key \"name\"", s.ctx())
				p.hintf("name belongs to the step, next to %q:, not inside it:\n- %s: {...}\n  name: <name>", s.op, s.op)
				s.body.Content = append(s.body.Content[:i:i], s.body.Content[i+2:]...)
				break
			}
		}
	}
	o := p.object(s.body, s.ctx(), s.def.keys...)
	if o == nil {
		s.failed = true
	}
	return o
}

// start begins a resolver: it reads the body, makes the node and checks the
// input against the op's shapes.
func (s *step) start() (*obj, *Node) {
	o := s.obj()
	n := s.newNode()
	if s.def.inputs != nil {
		s.want(s.def.inputs...)
	}
	return o, n
}

// newNode makes the step's node with the input's shape and types.
func (s *step) newNode() *Node {
	n := &Node{Pos: s.pos, Name: s.name, Op: s.op, Inputs: []*Node{s.in}, Shape: s.in.Shape,
		Key: s.in.Key, Value: s.in.Value, Doc: s.doc, WindowedKey: s.in.WindowedKey}
	if s.in.WindowedKey {
		n.Window, n.KeyWindow = s.in.Window, s.in.KeyWindow
	}
	return n
}

var shapeNames = map[Shape]string{
	ShapeNone: "nothing", ShapeStream: "stream", ShapeTable: "table", ShapeGlobalTable: "global table",
	ShapeGroupedStream: "grouped stream", ShapeGroupedTable: "grouped table",
	ShapeTimeWindowedStream: "time-windowed stream", ShapeSessionWindowedStream: "session-windowed stream",
	ShapeCogrouped: "cogrouped stream", ShapeBranched: "split",
}

func orList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// want checks the input shape.
func (s *step) want(shapes ...Shape) bool {
	if s.inBad {
		return true
	}
	for _, sh := range shapes {
		if s.in.Shape == sh {
			return true
		}
	}
	var names []string
	for _, sh := range shapes {
		names = append(names, "a "+shapeNames[sh])
	}
	s.errf(s.pos, "input %q is a %s, want %s", s.in.Name, shapeNames[s.in.Shape], orList(names))
	grouped := false
	for _, sh := range shapes {
		grouped = grouped || sh == ShapeGroupedStream || sh == ShapeTimeWindowedStream
	}
	switch {
	case s.in.Shape == ShapeStream && grouped:
		s.p.hintf("group the stream first with group_by_key or group_by; see %s#steps", docURL)
	case (s.in.Shape == ShapeTable || s.in.Shape == ShapeGlobalTable) && shapes[0] == ShapeStream:
		s.p.hintf("convert the table with to_stream first; see %s#steps", docURL)
	case s.in.Shape == ShapeGroupedStream || s.in.Shape == ShapeGroupedTable:
		s.p.hintf("aggregate the grouped records first with count, reduce or aggregate; see %s#steps", docURL)
	}
	return false
}

// fn reads user logic from fnKey/exprKey of o.
func (s *step) fn(o *obj, role FuncRole, fnKey, exprKey string, required bool) *Func {
	if o == nil {
		return nil
	}
	hasFn, hasExpr := o.has(fnKey), o.has(exprKey)
	switch {
	case hasFn && hasExpr:
		s.errf(o.keyPos(exprKey), "want %s or %s, not both", fnKey, exprKey)
		return nil
	case !hasFn && !hasExpr:
		if required {
			s.errf(s.pos, "missing %s or %s (the %s)", fnKey, exprKey, strings.ReplaceAll(string(role), "_", " "))
		}
		return nil
	case hasFn:
		name, ok := o.str(fnKey)
		if !ok || !s.p.checkFnName(o.valPos(fnKey), s.ctx()+": "+fnKey, name) {
			s.failed = true
			return nil
		}
		return &Func{Pos: o.valPos(fnKey), Role: role, Name: name}
	}
	e, ok := o.str(exprKey)
	if !ok || !s.checkExpr(o.valPos(exprKey), exprKey, e, role) {
		s.failed = true
		return nil
	}
	return &Func{Pos: o.valPos(exprKey), Role: role, Expr: e}
}

// checkExpr requires exactly one Go expression, or for a key-value mapper
// (map, a table's group_by) exactly two separated by a comma: the new key
// and the new value, as the mapper's Go function would return them.
func (s *step) checkExpr(pos Pos, key, e string, role FuncRole) bool {
	if strings.TrimSpace(e) == "" {
		s.errf(pos, "%s: empty expression", key)
		return false
	}
	if role == RoleKeyValueMap {
		return s.checkPair(pos, key, e)
	}
	if _, err := goparser.ParseExpr(e); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "\n"); i >= 0 {
			msg = msg[:i]
		}
		s.errf(pos, "%s: invalid Go expression %q: %s", key, e, msg)
		if strings.Contains(e, ";") || strings.Contains(e, "return") {
			s.p.hintf("expr takes a single expression; put statements in a function and use fn")
		}
		return false
	}
	return true
}

// checkPair requires "<key expression>, <value expression>". It parses them
// as the two arguments of a call, so a comma inside either (a call, a
// composite literal) is theirs, and text that would close the call early
// is refused.
func (s *step) checkPair(pos Pos, key, e string) bool {
	x, err := goparser.ParseExpr("streamgenPair(" + e + ")")
	call, ok := x.(*ast.CallExpr)
	if err != nil || !ok || call.Ellipsis.IsValid() || len(call.Args) != 2 {
		s.errf(pos, "%s: want the new key and the new value as two Go expressions, \"<key>, <value>\"; have %q", key, e)
		s.p.hintf(`e.g. expr: "value.UserID, value"`)
		return false
	}
	if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "streamgenPair" {
		s.errf(pos, "%s: invalid Go expressions %q", key, e)
		return false
	}
	return true
}

// subFn reads a function-valued key (init, adder, subtractor, merger): a
// function name, or a mapping {fn} / {expr}.
func (s *step) subFn(o *obj, key string, role FuncRole) *Func {
	v := o.val(key)
	if v == nil {
		return nil
	}
	if v.Kind == yaml.MappingNode {
		so := s.p.object(v, s.ctx()+": "+key, "fn", "expr")
		if so == nil {
			s.failed = true
			return nil
		}
		f := s.fn(so, role, "fn", "expr", true)
		return f
	}
	name, ok := o.str(key)
	if !ok || !s.p.checkFnName(o.valPos(key), s.ctx()+": "+key, name) {
		s.failed = true
		return nil
	}
	return &Func{Pos: o.valPos(key), Role: role, Name: name}
}

// typ reads an output type, which may not be windowed.
func (s *step) typ(o *obj, key string, required bool) *Type {
	return s.typeOf(o, key, required, false)
}

// typeOf reads an output type; windowedOK allows windowed<K> and
// session_windowed<K> (a key).
func (s *step) typeOf(o *obj, key string, required, windowedOK bool) *Type {
	if o == nil {
		return nil
	}
	if !o.has(key) {
		if required {
			s.errf(s.pos, "missing required key %q (the output %s type)", key, key)
			if s.hinted {
				return nil
			}
			s.hinted = true
			s.p.hintf("streamgen does not infer types from Go code: declare them, e.g.\n- %s", s.def.example)
		}
		return nil
	}
	str, ok := o.str(key)
	if !ok {
		s.failed = true
		return nil
	}
	t := s.p.resolveType(str, o.valPos(key), s.ctx()+": "+key)
	if !windowedOK {
		t = s.p.checkNotWindowed(t, o.valPos(key), s.ctx()+": "+key)
	}
	if t == nil {
		s.failed = true
	}
	return t
}

// needName requires the step's `name:`, which names an internal topic or
// store.
func (s *step) needName(why string) bool {
	if s.stepName != "" {
		return true
	}
	s.errf(s.pos, "missing name: %s", why)
	s.nameHint("<name>", "internal topics and stores")
	return false
}

// nameHint is the remedy for a missing step name. Kafka Streams generates
// such names unless ensure.explicit.internal.resource.naming=true; streamgen
// always behaves as with that setting.
func (s *step) nameHint(placeholder, what string) {
	s.p.hintf("add `name: %s` to the step, next to %q:. streamgen requires explicit names for\n"+
		"%s, as Kafka Streams does with ensure.explicit.internal.resource.naming=true (KIP-1111),\n"+
		"so they never move when the topology changes; see %s#names-that-never-move", placeholder, s.op, what, docURL)
}

// repartition creates a repartition topic named after the step.
func (s *step) repartition(n *Node, name string, partitions int) *Repartition {
	r := &Repartition{Pos: s.pos, Name: name, Partitions: partitions}
	if s.stepName != "" {
		r.Pos = s.namePos
	}
	if s.p.checkName(r.Pos, "repartition", name) {
		s.p.addInternal(&InternalTopic{Pos: r.Pos, Name: name, Partitions: partitions, Node: n, Kind: InternalRepartition})
	}
	return r
}

// store creates the store named by the step's `store:` key.
func (s *step) store(o *obj, kind StoreKind, key, value *Type, w *Window) *Store {
	if o == nil {
		return nil
	}
	if !o.has("store") {
		s.errf(s.pos, "missing required key \"store\"")
		s.p.hintf("name the state store, e.g. `store: %s-store`: the name also fixes its changelog topic; see %s#names-that-never-move", s.pipe, docURL)
		return nil
	}
	name, ok := o.str("store")
	if !ok || !s.p.checkName(o.valPos("store"), "store", name) {
		s.failed = true
		return nil
	}
	st := &Store{Pos: o.valPos("store"), Name: name, Kind: kind, Key: key, Value: value, Logged: true, Cached: true}
	if w != nil {
		st.Retention = effectiveRetention(w)
		switch w.Kind {
		case WindowTumbling, WindowHopping:
			st.WindowSize = w.Size
		case WindowSliding:
			st.WindowSize = w.TimeDiff
		}
	}
	if !s.p.addStore(st) {
		s.failed = true
		return nil
	}
	return st
}

// internalStore registers a store implied by a step.
func (p *parser) internalStore(s *step, name string, kind StoreKind, key, value *Type) *Store {
	return p.internalStoreAt(s, s.namePos, name, kind, key, value)
}

// internalStoreAt is internalStore for a store whose name is written at pos
// rather than by the step's name.
func (p *parser) internalStoreAt(s *step, pos Pos, name string, kind StoreKind, key, value *Type) *Store {
	st := &Store{Pos: pos, Name: name, Kind: kind, Key: key, Value: value, Logged: true}
	if !p.checkName(st.Pos, "store", name) || !p.addStore(st) {
		s.failed = true
		return nil
	}
	return st
}
