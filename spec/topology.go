package spec

import (
	"fmt"
	goparser "go/parser"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// stepOps are the operation keys of a pipeline step, in reference order.
var stepOps = []string{
	"filter", "filter_not", "map", "map_values", "flat_map", "flat_map_values", "select_key",
	"peek", "foreach", "split", "merge", "repartition", "to", "to_table", "to_stream",
	"group_by_key", "group_by", "windowed_by", "count", "reduce", "aggregate", "cogroup",
	"suppress", "join", "process", "process_values",
}

// typeExample shows each op with its declared output types, for hints.
var typeExample = map[string]string{
	"map":             "map: {fn: ToUser, key: string, value: User}",
	"flat_map":        "flat_map: {fn: Items, key: string, value: Item}",
	"flat_map_values": "flat_map_values: {fn: Items, value: Item}",
	"select_key":      "select_key: {expr: \"value.UserID\", key: string}",
	"group_by":        "group_by: {expr: \"value.UserID\", key: string, name: orders-by-user}",
	"aggregate":       "aggregate: {init: NewStats, fn: AddOrder, value: Stats, store: stats}",
	"cogroup":         "cogroup: {fn: AddOrder, with: [...], init: NewStats, value: Stats, store: stats}",
	"join":            "join: {with: users, fn: Enrich, value: EnrichedOrder}",
	"process":         "process: {fn: NewProcessor, key: string, value: Order}",
	"process_values":  "process_values: {fn: NewProcessor, value: Order}",
	"map_values":      "map_values: {fn: ToSummary, value: Summary}",
}

// nameInBodyOps may carry `name` inside their op mapping, as well as at the
// step level.
var nameInBodyOps = []string{"repartition", "group_by_key", "group_by", "suppress", "join"}

// step is one pipeline step being resolved.
type step struct {
	p        *parser
	pipe     string
	op       string
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

// obj reads the op's body as a mapping with the given keys; a missing body
// (`to_stream:`) is an empty mapping.
func (s *step) obj(allowed ...string) *obj {
	p := s.p
	if s.body.Kind == yaml.ScalarNode && s.body.Tag == "!!null" {
		return &obj{p: p, ctx: s.ctx(), n: s.body, m: map[string]entry{}}
	}
	if s.body.Kind == yaml.MappingNode && !contains(allowed, "name") {
		for i := 0; i+1 < len(s.body.Content); i += 2 {
			if k := s.body.Content[i]; k.Value == "name" {
				p.errf(p.pos(k), "%s: unknown key \"name\"", s.ctx())
				p.hintf("name belongs to the step, next to %q:, not inside it:\n- %s: {...}\n  name: <name>", s.op, s.op)
				s.body.Content = append(s.body.Content[:i:i], s.body.Content[i+2:]...)
				break
			}
		}
	}
	o := p.object(s.body, s.ctx(), allowed...)
	if o == nil {
		s.failed = true
	}
	return o
}

// newNode makes the step's node with the input's shape and types.
func (s *step) newNode() *Node {
	n := &Node{Pos: s.pos, Name: s.name, Op: Op(s.op), Inputs: []*Node{s.in}, Shape: s.in.Shape,
		Key: s.in.Key, Value: s.in.Value, Doc: s.doc, WindowedKey: s.in.WindowedKey}
	if s.in.WindowedKey {
		n.Window = s.in.Window
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
	if !ok || !s.checkExpr(o.valPos(exprKey), exprKey, e) {
		s.failed = true
		return nil
	}
	return &Func{Pos: o.valPos(exprKey), Role: role, Expr: e}
}

// checkExpr requires exactly one Go expression.
func (s *step) checkExpr(pos Pos, key, e string) bool {
	if strings.TrimSpace(e) == "" {
		s.errf(pos, "%s: empty expression", key)
		return false
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

// typ reads an output type.
func (s *step) typ(o *obj, key string, required bool) *Type {
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
			s.p.hintf("streamgen does not infer types from Go code: declare them, e.g.\n- %s", typeExample[s.op])
		}
		return nil
	}
	str, ok := o.str(key)
	if !ok {
		s.failed = true
		return nil
	}
	t := s.p.checkNotWindowed(s.p.resolveType(str, o.valPos(key), s.ctx()+": "+key), o.valPos(key), s.ctx()+": "+key)
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
	s.p.hintf("add `name: <name>` to the step, next to %q:. Kafka Streams requires explicit names for\n"+
		"internal topics and stores (KIP-1111) so they never move when the topology changes; see %s#names-that-never-move", s.op, docURL)
	return false
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

// ---- pipelines ----

type pipeline struct {
	o    *obj
	name string
	pos  Pos
}

func (p *parser) parseTopology(n *yaml.Node) {
	items, ok := p.seq(n, "topology")
	if !ok {
		return
	}
	if len(items) == 0 {
		p.errf(p.pos(n), "topology: want at least one pipeline")
		return
	}
	var pipes []*pipeline
	seen := map[string]Pos{}
	p.pipeNames = map[string]Pos{}
	for i, it := range items {
		o := p.object(it, fmt.Sprintf("topology[%d]", i), "name", "from", "steps")
		if o == nil {
			continue
		}
		pl := &pipeline{o: o, pos: p.pos(it)}
		if !o.has("name") {
			p.errf(p.pos(it), "topology[%d]: missing required key \"name\"", i)
			p.hintf("every pipeline needs a name: it names its last node, and later pipelines read it by that name")
		} else if name, ok := o.str("name"); ok && p.checkName(o.valPos("name"), "pipeline", name) {
			if prev, dup := seen[name]; dup {
				p.errf(o.valPos("name"), "duplicate pipeline name %q (first at %d:%d)", name, prev.Line, prev.Col)
			} else if t := p.topics[name]; t != nil {
				p.errf(o.valPos("name"), "pipeline %q: name is already used by topic %q (at %d:%d)", name, name, t.Pos.Line, t.Pos.Col)
				p.hintf("pipelines and topics share one namespace so that `from` is never ambiguous; rename the pipeline")
			} else {
				seen[name] = o.valPos("name")
				p.pipeNames[name] = o.valPos("name")
				p.laterPipes[name] = true
				pl.name = name
			}
		}
		pipes = append(pipes, pl)
	}
	for _, pl := range pipes {
		p.parsePipeline(pl)
		delete(p.laterPipes, pl.name)
	}
}

func (p *parser) parsePipeline(pl *pipeline) {
	o := pl.o
	ctx := fmt.Sprintf("pipeline %q", pl.name)
	if pl.name == "" {
		ctx = "pipeline"
	}
	var in *Node
	if from, ok := o.reqStr("from"); ok {
		in = p.lookup(from, o.valPos("from"), ctx+": from", pl.name)
	}
	if in == nil {
		// Keep checking the steps' own syntax, but not their types.
		in = &Node{Name: "?", Shape: ShapeStream}
		p.bad[in] = true
	}
	items, ok := o.list("steps")
	if !o.has("steps") {
		o.missing("steps")
		return
	}
	if !ok {
		return
	}
	if len(items) == 0 {
		p.errf(o.valPos("steps"), "%s: steps: want at least one step", ctx)
		return
	}
	var terminal *Node
	for i, it := range items {
		s := p.readStep(pl, ctx, i, len(items), it)
		if s == nil {
			continue
		}
		if terminal != nil {
			p.errf(s.pos, "%s: step %d (%s) comes after %q, which ends the pipeline", ctx, i+1, s.op, terminal.Op)
			if terminal.Op == OpSplit {
				p.hintf("start a new pipeline `from:` one of the split's branches")
			}
			break
		}
		s.in = in
		s.inBad = p.bad[in]
		n := p.runStep(s)
		if n == nil {
			break
		}
		// Only unknown types poison downstream checks; other mistakes in a
		// step leave its output well-defined.
		if s.inBad || n.Shape != ShapeNone && n.Shape != ShapeBranched && (n.Key == nil || n.Value == nil) {
			p.bad[n] = true
		}
		p.emit(n)
		for _, b := range n.Branches {
			p.emit(b)
		}
		if n.Shape == ShapeNone || n.Shape == ShapeBranched {
			terminal = n
		}
		in = n
	}
	if pl.name != "" && in.Name == pl.name {
		p.readable[pl.name] = in
	}
}

// emit adds a node to the program, in topological order.
func (p *parser) emit(n *Node) {
	if prev := p.nodes[n.Name]; prev != nil {
		p.errf(n.Pos, "duplicate node name %q (first at %d:%d)", n.Name, prev.Pos.Line, prev.Pos.Col)
		p.bad[n] = true
		return
	}
	p.nodes[n.Name] = n
	p.prog.Nodes = append(p.prog.Nodes, n)
}

// readStep parses the step mapping: its op key, name and doc.
func (p *parser) readStep(pl *pipeline, ctx string, i, count int, it *yaml.Node) *step {
	sctx := fmt.Sprintf("%s: step %d", ctx, i+1)
	es, ok := p.entries(it, sctx)
	if !ok {
		return nil
	}
	s := &step{p: p, pipe: pl.name}
	var opKey *yaml.Node
	bad := false
	for _, e := range es {
		switch k := e.key.Value; {
		case k == "name":
			if name, ok := p.scalarString(e.val, sctx+": name"); ok && p.checkName(p.pos(e.val), "step", name) {
				s.stepName, s.namePos = name, p.pos(e.val)
			} else {
				bad = true
			}
		case k == "doc":
			s.doc, _ = p.scalarString(e.val, sctx+": doc")
		case contains(stepOps, k):
			if opKey != nil {
				p.errf(p.pos(e.key), "%s: has both %q and %q, want exactly one operation per step", sctx, opKey.Value, k)
				bad = true
				continue
			}
			opKey, s.body = e.key, e.val
		default:
			if dym := didYouMean(k, append(stepOps, "name", "doc")); dym != "" {
				p.errf(p.pos(e.key), "%s: unknown key %q%s", sctx, k, dym)
			} else {
				p.errf(p.pos(e.key), "%s: unknown operation %q, want one of %s", sctx, k, strings.Join(stepOps, ", "))
			}
			bad = true
		}
	}
	if opKey == nil {
		if !bad {
			p.errf(p.pos(it), "%s: missing operation, want one of %s", sctx, strings.Join(stepOps, ", "))
		}
		return nil
	}
	if !p.noAlias(s.body, sctx) {
		return nil
	}
	s.op, s.pos = opKey.Value, p.pos(opKey)
	// The reference lets the ops that create internal topics or stores
	// take their name inside the op mapping, too.
	if contains(nameInBodyOps, s.op) && s.body.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(s.body.Content); j += 2 {
			k, v := s.body.Content[j], s.body.Content[j+1]
			if k.Value != "name" {
				continue
			}
			s.body.Content = append(s.body.Content[:j:j], s.body.Content[j+2:]...)
			name, ok := p.scalarString(v, sctx+": "+s.op+": name")
			switch {
			case !ok || !p.checkName(p.pos(v), "step", name):
				bad = true
			case s.stepName != "" && s.stepName != name:
				p.errf(p.pos(v), "%s: %s: name %q differs from the step's name %q", sctx, s.op, name, s.stepName)
				bad = true
			default:
				s.stepName, s.namePos = name, p.pos(v)
			}
			break
		}
	}
	switch {
	case i == count-1 && pl.name != "":
		s.name = pl.name
	case s.stepName != "":
		s.name = pl.name + "." + s.stepName
	default:
		s.name = pl.name + "." + s.op + strconv.Itoa(i+1)
	}
	if bad {
		s.failed = true
	}
	return s
}

// lookup resolves a `from`/`with` reference to a node.
func (p *parser) lookup(name string, pos Pos, ctx, self string) *Node {
	if n := p.readable[name]; n != nil {
		switch n.Shape {
		case ShapeNone:
			p.errf(pos, "%s: pipeline %q ends with %s and has no output", ctx, name, n.Op)
			return nil
		case ShapeBranched:
			var bs []string
			for _, b := range n.Branches {
				bs = append(bs, strconv.Quote(b.Name))
			}
			p.errf(pos, "%s: pipeline %q ends with a split; read one of its branches (%s)", ctx, name, strings.Join(bs, ", "))
			return nil
		}
		return n
	}
	if t := p.topics[name]; t != nil {
		return p.source(t)
	}
	if name == self && self != "" {
		p.errf(pos, "%s: pipeline %q cannot read itself", ctx, name)
		return nil
	}
	if p.laterPipes[name] {
		p.errf(pos, "%s: pipeline %q is defined later; a pipeline may only read earlier pipelines", ctx, name)
		p.hintf("move pipeline %q above this one", name)
		return nil
	}
	if _, ok := p.pipeNames[name]; ok {
		// An earlier pipeline that failed to resolve: already reported.
		return nil
	}
	var cands []string
	for n := range p.readable {
		cands = append(cands, n)
	}
	cands = append(cands, p.topicNames()...)
	p.errf(pos, "%s: unknown topic or pipeline %q%s", ctx, name, didYouMean(name, sortedCopy(cands)))
	return nil
}

// source returns the (single) source node of a topic.
func (p *parser) source(t *Topic) *Node {
	if n := p.sources[t]; n != nil {
		return n
	}
	shape := map[TopicKind]Shape{TopicStream: ShapeStream, TopicTable: ShapeTable, TopicGlobalTable: ShapeGlobalTable}[t.Kind]
	n := &Node{Pos: t.Pos, Name: t.Name, Op: OpSource, Shape: shape, Key: t.Key, Value: t.Value, Topic: t, Store: t.Store, Doc: t.Doc}
	if t.Key == nil || t.Value == nil || (t.Kind != TopicStream && t.Store == nil) {
		p.bad[n] = true
	}
	p.sources[t] = n
	p.emit(n)
	return n
}

// ---- steps ----

func (p *parser) runStep(s *step) *Node {
	switch s.op {
	case "filter", "filter_not":
		o := s.obj("fn", "expr")
		n := s.newNode()
		s.want(ShapeStream, ShapeTable)
		n.Fn = s.fn(o, RolePredicate, "fn", "expr", true)
		p.keepKey(n, s.in)
		return n
	case "map", "flat_map":
		o := s.obj("fn", "expr", "key", "value")
		n := s.newNode()
		s.want(ShapeStream)
		role := RoleKeyValueMap
		if s.op == "flat_map" {
			role = RoleFlatMap
		}
		n.Fn = s.fn(o, role, "fn", "expr", true)
		n.Key, n.Value = s.typ(o, "key", true), s.typ(o, "value", true)
		p.changeKey(n)
		return n
	case "map_values", "flat_map_values":
		o := s.obj("fn", "expr", "value")
		n := s.newNode()
		role := RoleValueMap
		if s.op == "flat_map_values" {
			role = RoleFlatMapValues
			s.want(ShapeStream)
		} else {
			s.want(ShapeStream, ShapeTable)
		}
		n.Fn = s.fn(o, role, "fn", "expr", true)
		if o != nil && o.has("value") || s.op == "flat_map_values" {
			n.Value = s.typ(o, "value", true)
		}
		p.keepKey(n, s.in)
		return n
	case "select_key":
		o := s.obj("fn", "expr", "key")
		n := s.newNode()
		s.want(ShapeStream)
		n.Fn = s.fn(o, RoleKeySelect, "fn", "expr", true)
		n.Key = s.typ(o, "key", true)
		p.changeKey(n)
		return n
	case "peek", "foreach":
		o := s.obj("fn", "expr")
		n := s.newNode()
		s.want(ShapeStream)
		n.Fn = s.fn(o, RoleAction, "fn", "expr", true)
		if s.op == "foreach" {
			p.terminal(n)
		} else {
			p.keepKey(n, s.in)
		}
		return n
	case "split":
		return p.stepSplit(s)
	case "merge":
		return p.stepMerge(s)
	case "repartition":
		o := s.obj("partitions")
		n := s.newNode()
		s.want(ShapeStream)
		parts := 0
		if o != nil {
			if v, ok := o.int("partitions", 1, 1<<20); ok {
				parts = int(v)
			}
		}
		if s.needName("it names the repartition topic") {
			n.Repartition = s.repartition(n, s.stepName, parts)
		}
		return n
	case "to":
		return p.stepTo(s)
	case "to_table":
		o := s.obj("store")
		n := s.newNode()
		s.want(ShapeStream)
		n.Shape = ShapeTable
		n.Store = s.store(o, StoreKeyValue, n.Key, n.Value, nil)
		p.maybeRepartition(s, n, s.in)
		return n
	case "to_stream":
		s.obj()
		n := s.newNode()
		s.want(ShapeTable)
		n.Shape = ShapeStream
		return n
	case "group_by_key":
		s.obj()
		n := s.newNode()
		s.want(ShapeStream)
		n.Shape = ShapeGroupedStream
		p.maybeRepartition(s, n, s.in)
		return n
	case "group_by":
		return p.stepGroupBy(s)
	case "windowed_by":
		return p.stepWindowedBy(s)
	case "count", "reduce", "aggregate":
		return p.stepAggregate(s)
	case "cogroup":
		return p.stepCogroup(s)
	case "suppress":
		return p.stepSuppress(s)
	case "join":
		return p.stepJoin(s)
	case "process", "process_values":
		return p.stepProcess(s)
	}
	panic("unreachable: op " + s.op)
}

// keepKey marks n as keeping its input's key (and its key-change state).
func (p *parser) keepKey(n, in *Node) {
	if c := p.keyChangedAt[in]; c != nil {
		p.keyChangedAt[n] = c
	}
}

// changeKey marks n as replacing the key: grouping or joining downstream
// must repartition.
func (p *parser) changeKey(n *Node) {
	p.keyChangedAt[n] = n
	n.WindowedKey, n.Window = false, nil
}

func (p *parser) terminal(n *Node) {
	n.Shape, n.Key, n.Value, n.WindowedKey, n.Window = ShapeNone, nil, nil, false, nil
}

// maybeRepartition adds a repartition topic before n when the key of in
// changed upstream (Kafka Streams' repartitionRequired).
func (p *parser) maybeRepartition(s *step, n, in *Node) {
	c := p.keyChangedAt[in]
	if c == nil || s.inBad {
		return
	}
	if s.stepName == "" {
		s.errf(s.pos, "missing name: the key changed upstream (%s %q), so records must be repartitioned and the repartition topic needs a name", c.Op, c.Name)
		s.p.hintf("add `name: <repartition name>` to the step, next to %q:. Kafka Streams requires explicit names for\n"+
			"internal topics (KIP-1111) so they never move when the topology changes; see %s#names-that-never-move", s.op, docURL)
		return
	}
	n.Repartition = s.repartition(n, s.stepName, 0)
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

func (p *parser) stepSplit(s *step) *Node {
	o := s.obj("branches", "default")
	n := s.newNode()
	s.want(ShapeStream)
	n.Shape = ShapeBranched
	if o == nil {
		return n
	}
	addBranch := func(name string, pos Pos, doc string, fn *Func, def bool) {
		if !p.checkName(pos, "branch", name) {
			return
		}
		if pp, ok := p.pipeNames[name]; ok {
			p.errf(pos, "%s: branch name %q is already used by a pipeline (at %d:%d)", s.ctx(), name, pp.Line, pp.Col)
			return
		}
		if t := p.topics[name]; t != nil {
			p.errf(pos, "%s: branch name %q is already used by a topic (at %d:%d)", s.ctx(), name, t.Pos.Line, t.Pos.Col)
			return
		}
		b := &Node{Pos: pos, Name: name, Op: OpBranch, Inputs: []*Node{n}, Shape: ShapeStream,
			Key: n.Key, Value: n.Value, Doc: doc, Fn: fn, Default: def, WindowedKey: n.WindowedKey, Window: n.Window}
		if p.bad[s.in] || fn == nil && !def {
			p.bad[b] = true
		}
		p.keepKey(b, s.in)
		n.Branches = append(n.Branches, b)
		p.readable[name] = b
	}
	items, ok := o.list("branches")
	if !o.has("branches") {
		s.errf(s.pos, "missing required key \"branches\"")
	}
	if ok {
		if len(items) == 0 && !o.has("default") {
			s.errf(o.valPos("branches"), "branches: want at least one branch")
		}
		for i, it := range items {
			bo := p.object(it, fmt.Sprintf("%s: branches[%d]", s.ctx(), i), "name", "fn", "expr", "doc")
			if bo == nil {
				continue
			}
			doc, _ := bo.str("doc")
			fn := s.fn(bo, RolePredicate, "fn", "expr", true)
			if name, ok := bo.reqStr("name"); ok {
				addBranch(name, bo.valPos("name"), doc, fn, false)
			}
		}
	}
	if def, ok := o.str("default"); ok {
		addBranch(def, o.valPos("default"), "", nil, true)
	}
	return n
}

func (p *parser) stepMerge(s *step) *Node {
	o := s.obj("with")
	n := s.newNode()
	s.want(ShapeStream)
	p.keepKey(n, s.in)
	if o == nil {
		return n
	}
	if !o.has("with") {
		s.errf(s.pos, "missing required key \"with\"")
		return n
	}
	items, ok := o.list("with")
	if !ok {
		s.failed = true
		return n
	}
	if len(items) == 0 {
		s.errf(o.valPos("with"), "with: want at least one pipeline")
	}
	for _, it := range items {
		name, ok := p.scalarString(it, s.ctx()+": with")
		if !ok {
			s.failed = true
			continue
		}
		other := p.lookup(name, p.pos(it), s.ctx()+": with", s.pipe)
		if other == nil {
			s.failed = true
			continue
		}
		n.Inputs = append(n.Inputs, other)
		if s.inBad || p.bad[other] {
			s.failed = true
			continue
		}
		if other.Shape != ShapeStream {
			s.errf(p.pos(it), "%q is a %s, want a stream", name, shapeNames[other.Shape])
			continue
		}
		if !other.Key.Equal(s.in.Key) {
			s.errf(p.pos(it), "key type %q of %q does not match %q of %q", typeString(other.Key), name, typeString(s.in.Key), s.in.Name)
		} else if !other.Value.Equal(s.in.Value) {
			s.errf(p.pos(it), "value type %q of %q does not match %q of %q", typeString(other.Value), name, typeString(s.in.Value), s.in.Name)
			p.hintf("merge needs streams of one key and value type; convert one side with map_values first")
		}
		if p.keyChangedAt[n] == nil {
			p.keepKey(n, other)
		}
	}
	return n
}

func (p *parser) stepTo(s *step) *Node {
	n := s.newNode()
	s.want(ShapeStream)
	in := s.in
	p.terminal(n)
	sink := &Sink{}
	n.Sink = sink
	var topicName string
	var topicPos Pos
	if s.body.Kind == yaml.ScalarNode && s.body.Tag != "!!null" {
		topicName, topicPos = s.body.Value, p.pos(s.body)
	} else {
		o := s.obj("topic", "topic_fn", "topic_expr")
		if o == nil {
			return n
		}
		count := 0
		for _, k := range []string{"topic", "topic_fn", "topic_expr"} {
			if o.has(k) {
				count++
			}
		}
		if count != 1 {
			s.errf(s.pos, "want exactly one of topic, topic_fn or topic_expr")
			return n
		}
		if o.has("topic") {
			var ok bool
			if topicName, ok = o.str("topic"); !ok {
				s.failed = true
				return n
			}
			topicPos = o.valPos("topic")
		} else {
			sink.Chooser = s.fn(o, RoleTopic, "topic_fn", "topic_expr", true)
			return n
		}
	}
	t := p.topics[topicName]
	if t == nil {
		s.errf(topicPos, "unknown topic %q%s", topicName, didYouMean(topicName, p.topicNames()))
		p.hintf("declare it under topics with its key and value types")
		return n
	}
	sink.Topic = t
	if s.inBad || in.Shape != ShapeStream || t.Key == nil || t.Value == nil {
		return n
	}
	if !in.Key.Equal(t.Key) {
		s.errf(topicPos, "key type %q of %q does not match %q of topic %q", typeString(in.Key), in.Name, t.Key, t.Name)
		if hasWindowed(in.Key) && !hasWindowed(t.Key) {
			p.hintf("records of a windowed aggregation have windowed keys: declare the topic's key as %q,\nor replace the key first with map or select_key", in.Key)
		}
	}
	if !in.Value.Equal(t.Value) {
		s.errf(topicPos, "value type %q of %q does not match %q of topic %q", typeString(in.Value), in.Name, t.Value, t.Name)
	}
	return n
}

func (p *parser) stepGroupBy(s *step) *Node {
	o := s.obj("fn", "expr", "key", "value")
	n := s.newNode()
	s.want(ShapeStream, ShapeTable)
	n.WindowedKey, n.Window = false, nil
	isTable := s.in.Shape == ShapeTable && !s.inBad
	if isTable {
		n.Shape = ShapeGroupedTable
		n.Fn = s.fn(o, RoleKeyValueMap, "fn", "expr", true)
		n.Key, n.Value = s.typ(o, "key", true), s.typ(o, "value", true)
	} else {
		n.Shape = ShapeGroupedStream
		n.Fn = s.fn(o, RoleKeySelect, "fn", "expr", true)
		n.Key = s.typ(o, "key", true)
		if o != nil && o.has("value") {
			s.errf(o.keyPos("value"), "value is only for group_by on a table; on a stream the value is unchanged")
			p.hintf("change the value with map_values before group_by")
		}
	}
	if s.needName("group_by always repartitions, and the repartition topic needs a name") {
		n.Repartition = s.repartition(n, s.stepName, 0)
	}
	return n
}

var windowKinds = []string{"tumbling", "hopping", "sliding", "session"}

// parseWindow reads one of tumbling/hopping/sliding/session plus retention
// from o.
func (s *step) parseWindow(o *obj, ctx string) *Window {
	p := s.p
	var kind string
	for _, k := range windowKinds {
		if o.has(k) {
			if kind != "" {
				s.errf(o.keyPos(k), "%shas both %s and %s, want exactly one window", prefix(ctx), kind, k)
				return nil
			}
			kind = k
		}
	}
	if kind == "" {
		s.errf(p.pos(o.n), "%smissing window, want one of tumbling, hopping, sliding or session", prefix(ctx))
		return nil
	}
	w := &Window{Pos: o.keyPos(kind), Kind: WindowKind(kind)}
	wctx := s.ctx() + ": " + prefix(ctx) + kind
	var keys []string
	switch w.Kind {
	case WindowTumbling:
		keys = []string{"size", "grace"}
	case WindowHopping:
		keys = []string{"size", "advance", "grace"}
	case WindowSliding:
		keys = []string{"time_difference", "grace"}
	case WindowSession:
		keys = []string{"gap", "grace"}
	}
	wo := p.object(o.val(kind), wctx, keys...)
	if wo == nil {
		s.failed = true
		return nil
	}
	ok := true
	positive := func(k string) time.Duration {
		if !wo.has(k) {
			wo.missing(k)
			ok = false
			return 0
		}
		d, valid := wo.dur(k)
		if valid && d <= 0 {
			p.errf(wo.valPos(k), "%s: %s: want a positive duration", wctx, k)
			valid = false
		}
		ok = ok && valid
		return d
	}
	w.Grace, _ = wo.dur("grace")
	switch w.Kind {
	case WindowTumbling:
		w.Size = positive("size")
		w.Advance = w.Size
	case WindowHopping:
		w.Size, w.Advance = positive("size"), positive("advance")
		if ok && w.Advance > w.Size {
			p.errf(wo.valPos("advance"), "%s: advance %s is larger than size %s", wctx, fmtDur(w.Advance), fmtDur(w.Size))
			ok = false
		}
	case WindowSliding:
		w.TimeDiff = positive("time_difference")
	case WindowSession:
		w.Gap = positive("gap")
	}
	if r, has := o.dur("retention"); has {
		w.Retention = r
		if min, what := minRetention(w); ok && r < min {
			p.errf(o.valPos("retention"), "%s: %sretention %s is smaller than %s (%s)", s.ctx(), prefix(ctx), fmtDur(r), what, fmtDur(min))
			p.hintf("omit retention to use the minimum, or raise it to at least %s", fmtDur(min))
			ok = false
		}
	}
	if !ok {
		s.failed = true
		return nil
	}
	return w
}

// minRetention is Kafka Streams' minimum (and default) store retention.
func minRetention(w *Window) (time.Duration, string) {
	switch w.Kind {
	case WindowSliding:
		return 2*w.TimeDiff + w.Grace, "twice the time difference plus grace"
	case WindowSession:
		return w.Gap + w.Grace, "gap plus grace"
	}
	return w.Size + w.Grace, "size plus grace"
}

func effectiveRetention(w *Window) time.Duration {
	min, _ := minRetention(w)
	return max(min, w.Retention)
}

func (p *parser) stepWindowedBy(s *step) *Node {
	o := s.obj("tumbling", "hopping", "sliding", "session", "retention", "emit")
	n := s.newNode()
	if !s.inBad && s.in.Shape == ShapeStream {
		s.errf(s.pos, "windowed_by on an ungrouped stream %q", s.in.Name)
		p.hintf("add group_by_key (or group_by) before windowed_by; see %s#steps", docURL)
	} else {
		s.want(ShapeGroupedStream)
	}
	if o == nil {
		return n
	}
	n.Window = s.parseWindow(o, "")
	n.Shape = ShapeTimeWindowedStream
	if n.Window != nil && n.Window.Kind == WindowSession {
		n.Shape = ShapeSessionWindowedStream
	}
	if e, ok := o.enum("emit", string(EmitOnUpdate), string(EmitOnClose)); ok {
		n.Emit = EmitStrategy(e)
	}
	p.keepKey(n, s.in)
	return n
}

// aggInput describes the input of an aggregation.
func (s *step) aggKind() (grouped, table, windowed bool, w *Window) {
	switch s.in.Shape {
	case ShapeGroupedStream:
		return true, false, false, nil
	case ShapeGroupedTable:
		return true, true, false, nil
	case ShapeTimeWindowedStream, ShapeSessionWindowedStream:
		return true, false, true, s.in.Window
	}
	return false, false, false, nil
}

// emit resolves the emit strategy of an aggregation from its own `emit`
// and the windowed_by's.
func (s *step) emitStrategy(o *obj, windowed bool, upstream EmitStrategy) EmitStrategy {
	e, ok := o.enum("emit", string(EmitOnUpdate), string(EmitOnClose))
	if ok && !windowed && !s.inBad {
		if e == string(EmitOnClose) {
			s.errf(o.valPos("emit"), "emit %q needs a windowed aggregation", e)
			s.p.hintf("add a windowed_by step before %s, or remove emit", s.op)
		} else {
			s.errf(o.keyPos("emit"), "emit is only for windowed aggregations")
		}
		return ""
	}
	if ok && upstream != "" && EmitStrategy(e) != upstream {
		s.errf(o.valPos("emit"), "emit %q conflicts with emit %q of %q", e, upstream, s.in.Name)
		return ""
	}
	if !windowed {
		return ""
	}
	if ok {
		return EmitStrategy(e)
	}
	if upstream != "" {
		return upstream
	}
	return EmitOnUpdate
}

func (p *parser) stepAggregate(s *step) *Node {
	var o *obj
	switch s.op {
	case "count":
		o = s.obj("store", "emit")
	case "reduce":
		o = s.obj("fn", "expr", "adder", "subtractor", "store", "emit")
	default:
		o = s.obj("init", "fn", "expr", "adder", "subtractor", "merger", "value", "store", "emit")
	}
	n := s.newNode()
	n.Shape = ShapeTable
	s.want(ShapeGroupedStream, ShapeGroupedTable, ShapeTimeWindowedStream, ShapeSessionWindowedStream)
	grouped, table, windowed, w := s.aggKind()
	if s.inBad {
		grouped, table = true, o != nil && (o.has("adder") || o.has("subtractor"))
	}
	if o == nil {
		return n
	}
	if windowed {
		n.Window, n.WindowedKey, n.Key = w, true, windowedOf(s.in.Key, w)
	}
	n.Emit = s.emitStrategy(o, windowed, s.in.Emit)
	session := w != nil && w.Kind == WindowSession
	switch s.op {
	case "count":
		n.Value = &Type{Kind: KindInt64}
	case "reduce":
		if table {
			n.Adder, n.Subtractor = s.subFn(o, "adder", RoleReduce), s.subFn(o, "subtractor", RoleReduce)
			if !o.has("adder") || !o.has("subtractor") || o.has("fn") || o.has("expr") {
				s.errf(s.pos, "reduce on a grouped table needs adder and subtractor (and no fn or expr)")
				p.hintf("the subtractor removes a record's old value when the table row changes; see %s#steps", docURL)
			}
		} else {
			n.Fn = s.fn(o, RoleReduce, "fn", "expr", true)
			for _, k := range []string{"adder", "subtractor"} {
				if o.has(k) && grouped {
					s.errf(o.keyPos(k), "%s is only for grouped tables; a grouped stream takes fn or expr", k)
				}
			}
		}
	case "aggregate":
		n.Init = s.subFn(o, "init", RoleInit)
		if !o.has("init") {
			s.errf(s.pos, "missing required key \"init\" (the initializer)")
		}
		n.Agg = s.typ(o, "value", true)
		n.Value = n.Agg
		if table {
			n.Adder, n.Subtractor = s.subFn(o, "adder", RoleAggregate), s.subFn(o, "subtractor", RoleAggregate)
			if !o.has("adder") || !o.has("subtractor") || o.has("fn") || o.has("expr") {
				s.errf(s.pos, "aggregate on a grouped table needs adder and subtractor (and no fn or expr)")
			}
		} else {
			n.Fn = s.fn(o, RoleAggregate, "fn", "expr", true)
			for _, k := range []string{"adder", "subtractor"} {
				if o.has(k) && grouped {
					s.errf(o.keyPos(k), "%s is only for grouped tables; a grouped stream takes fn or expr", k)
				}
			}
		}
		switch {
		case session:
			n.Merger = s.subFn(o, "merger", RoleMerge)
			if !o.has("merger") {
				s.errf(s.pos, "session-windowed aggregate needs a merger")
				p.hintf("add `merger: <func(key K, a A, b A) A>`: it combines two sessions that a record bridges")
			}
		case o.has("merger") && !s.inBad:
			s.errf(o.keyPos("merger"), "merger is only for session-windowed aggregates")
		}
	}
	kind := StoreKeyValue
	if windowed {
		kind = StoreWindow
		if session {
			kind = StoreSession
		}
	}
	n.Store = s.store(o, kind, s.in.Key, n.Value, w)
	p.keepKey(n, s.in)
	delete(p.keyChangedAt, n)
	return n
}

func (p *parser) stepCogroup(s *step) *Node {
	o := s.obj("fn", "expr", "with", "init", "value", "store", "window", "merger", "emit")
	n := s.newNode()
	n.Shape = ShapeTable
	s.want(ShapeGroupedStream)
	if o == nil {
		return n
	}
	n.Cogroup = []*CogroupInput{{Pos: s.pos, Input: s.in, Aggregator: s.fn(o, RoleAggregate, "fn", "expr", true)}}
	n.Init = s.subFn(o, "init", RoleInit)
	if !o.has("init") {
		s.errf(s.pos, "missing required key \"init\" (the initializer)")
	}
	n.Agg = s.typ(o, "value", true)
	n.Value = n.Agg
	items, ok := o.list("with")
	if !o.has("with") {
		s.errf(s.pos, "missing required key \"with\"")
	} else if ok && len(items) == 0 {
		s.errf(o.valPos("with"), "with: want at least one grouped pipeline")
	}
	for i, it := range items {
		io := p.object(it, fmt.Sprintf("%s: with[%d]", s.ctx(), i), "from", "fn", "expr")
		if io == nil {
			s.failed = true
			continue
		}
		ci := &CogroupInput{Pos: p.pos(it), Aggregator: s.fn(io, RoleAggregate, "fn", "expr", true)}
		from, ok := io.reqStr("from")
		if !ok {
			s.failed = true
			continue
		}
		other := p.lookup(from, io.valPos("from"), s.ctx()+": with", s.pipe)
		if other == nil {
			s.failed = true
			continue
		}
		ci.Input = other
		n.Cogroup = append(n.Cogroup, ci)
		n.Inputs = append(n.Inputs, other)
		if p.bad[other] || s.inBad {
			continue
		}
		if other.Shape != ShapeGroupedStream {
			s.errf(io.valPos("from"), "%q is a %s, want a grouped stream", from, shapeNames[other.Shape])
			p.hintf("cogroup reads pipelines that end with group_by_key or group_by")
		} else if !other.Key.Equal(s.in.Key) {
			s.errf(io.valPos("from"), "key type %q of %q does not match %q of %q", typeString(other.Key), from, typeString(s.in.Key), s.in.Name)
		}
	}
	var w *Window
	if o.has("window") {
		if wo := p.object(o.val("window"), s.ctx()+": window", "tumbling", "hopping", "sliding", "session", "retention"); wo != nil {
			w = s.parseWindow(wo, "window")
		} else {
			s.failed = true
		}
	}
	windowed := o.has("window")
	if w != nil {
		n.Window, n.WindowedKey, n.Key = w, true, windowedOf(s.in.Key, w)
	}
	n.Emit = s.emitStrategy(o, windowed, "")
	if n.Emit == EmitOnClose && !s.inBad {
		// Kafka's TimeWindowedCogroupedKStream and
		// SessionWindowedCogroupedKStream have no emitStrategy: every
		// input's processor forwards each update.
		s.errf(o.valPos("emit"), "emit %q is not available for a windowed cogroup, which emits every update as in Kafka Streams", n.Emit)
		p.hintf("for final results, remove emit and add `- suppress: {until: window_closes, name: <name>}` after the cogroup")
		n.Emit = EmitOnUpdate
	}
	session := w != nil && w.Kind == WindowSession
	if session {
		n.Merger = s.subFn(o, "merger", RoleMerge)
		if !o.has("merger") {
			s.errf(s.pos, "session-windowed cogroup needs a merger")
		}
	} else if o.has("merger") && w != nil {
		s.errf(o.keyPos("merger"), "merger is only for session windows")
	}
	kind := StoreKeyValue
	if w != nil {
		kind = StoreWindow
		if session {
			kind = StoreSession
		}
	}
	n.Store = s.store(o, kind, s.in.Key, n.Value, w)
	return n
}

func (p *parser) stepSuppress(s *step) *Node {
	o := s.obj("until", "time_limit", "max_records", "max_bytes", "when_full")
	n := s.newNode()
	s.want(ShapeTable)
	p.keepKey(n, s.in)
	if o == nil {
		return n
	}
	sup := &Suppress{Pos: s.pos, WhenFull: "shutdown", Name: s.stepName}
	n.Suppress = sup
	if !o.has("until") {
		s.errf(s.pos, "missing required key \"until\", want window_closes or time_limit")
	}
	if u, ok := o.enum("until", "window_closes", "time_limit"); ok {
		sup.Kind = map[string]SuppressKind{"window_closes": SuppressUntilWindowCloses, "time_limit": SuppressUntilTimeLimit}[u]
	}
	if v, ok := o.int("max_records", 0, 1<<62); ok {
		sup.MaxRecords = int(v)
	}
	if v, ok := o.int("max_bytes", 0, 1<<62); ok {
		sup.MaxBytes = v
	}
	if wf, ok := o.enum("when_full", "shutdown", "emit_early"); ok {
		sup.WhenFull = wf
	}
	switch sup.Kind {
	case SuppressUntilTimeLimit:
		if !o.has("time_limit") {
			s.errf(s.pos, "until time_limit needs time_limit")
		} else if d, ok := o.dur("time_limit"); ok {
			sup.TimeLimit = d
		}
	case SuppressUntilWindowCloses:
		if o.has("time_limit") {
			s.errf(o.keyPos("time_limit"), "time_limit is only for until time_limit")
		}
		if sup.WhenFull == "emit_early" {
			s.errf(o.valPos("when_full"), "until window_closes needs when_full shutdown: emitting early would break the final-result guarantee")
		}
		if !s.inBad && s.in.Shape == ShapeTable && (!s.in.WindowedKey || s.in.Window == nil) {
			s.errf(o.valPos("until"), "until window_closes needs a windowed aggregation upstream, but %q is not windowed", s.in.Name)
			p.hintf("suppress until window_closes only applies to the result of count, reduce or aggregate after windowed_by;\nuse until: time_limit for other tables")
		}
	}
	if s.needName("it names the suppression buffer (and its changelog)") {
		n.Store = s.p.internalStore(s, s.stepName+"-store", StoreKeyValue, n.Key, n.Value)
	}
	return n
}

// internalStore registers a store implied by a step.
func (p *parser) internalStore(s *step, name string, kind StoreKind, key, value *Type) *Store {
	st := &Store{Pos: s.namePos, Name: name, Kind: kind, Key: key, Value: value, Logged: true}
	if !p.checkName(st.Pos, "store", name) || !p.addStore(st) {
		s.failed = true
		return nil
	}
	return st
}

func (p *parser) stepProcess(s *step) *Node {
	var o *obj
	if s.op == "process" {
		o = s.obj("fn", "stores", "key", "value")
	} else {
		o = s.obj("fn", "stores", "value")
	}
	n := s.newNode()
	s.want(ShapeStream)
	if o == nil {
		return n
	}
	if !o.has("fn") {
		s.errf(s.pos, "missing required key \"fn\" (the processor constructor)")
	} else if name, ok := o.str("fn"); ok && p.checkFnName(o.valPos("fn"), s.ctx()+": fn", name) {
		n.Fn = &Func{Pos: o.valPos("fn"), Role: RoleProcessor, Name: name}
	} else {
		s.failed = true
	}
	if o.has("key") {
		n.Key = s.typ(o, "key", true)
	}
	if o.has("value") {
		n.Value = s.typ(o, "value", true)
	}
	items, _ := o.list("stores")
	seen := map[string]bool{}
	for _, it := range items {
		name, ok := p.scalarString(it, s.ctx()+": stores")
		if !ok {
			continue
		}
		st := p.stores[name]
		switch {
		case st == nil:
			var names []string
			for n := range p.stores {
				names = append(names, n)
			}
			s.errf(p.pos(it), "stores: unknown store %q%s", name, didYouMean(name, sortedCopy(names)))
			p.hintf("declare it under the top-level stores section")
		case seen[name]:
			s.errf(p.pos(it), "stores: duplicate store %q", name)
		default:
			seen[name] = true
			n.Stores = append(n.Stores, st)
		}
	}
	if s.op == "process" {
		// Like Kafka Streams, a processor may forward any key.
		p.changeKey(n)
	} else {
		p.keepKey(n, s.in)
	}
	return n
}

// shapeWords spells a join shape for messages: "stream-table".
func shapeWords(js JoinShape) string {
	if js == JoinForeignKey {
		return "foreign-key"
	}
	return strings.ReplaceAll(strings.ReplaceAll(string(js), "global_table", "global table"), "_", "-")
}

func (p *parser) stepJoin(s *step) *Node {
	o := s.obj("with", "kind", "fn", "expr", "value", "window", "key_fn", "key_expr", "foreign_key_fn", "foreign_key_expr")
	n := s.newNode()
	if o == nil {
		return n
	}
	j := &Join{Pos: s.pos, Kind: JoinInner}
	n.Join = j
	if k, ok := o.enum("kind", string(JoinInner), string(JoinLeft), string(JoinOuter)); ok {
		j.Kind = JoinKind(k)
	}
	n.Fn = s.fn(o, RoleJoin, "fn", "expr", true)
	n.Value = s.typ(o, "value", true)
	var right *Node
	if !o.has("with") {
		s.errf(s.pos, "missing required key \"with\"")
	} else if name, ok := o.str("with"); ok {
		right = p.lookup(name, o.valPos("with"), s.ctx()+": with", s.pipe)
	}
	if right == nil {
		s.failed = true
		return n
	}
	n.Inputs = append(n.Inputs, right)
	left := s.in
	if s.inBad || p.bad[right] {
		s.failed = true
		return n
	}
	hasFK := o.has("foreign_key_fn") || o.has("foreign_key_expr")
	switch {
	case left.Shape == ShapeStream && right.Shape == ShapeStream:
		j.Shape = JoinStreamStream
	case left.Shape == ShapeStream && right.Shape == ShapeTable:
		j.Shape = JoinStreamTable
	case left.Shape == ShapeStream && right.Shape == ShapeGlobalTable:
		j.Shape = JoinStreamGlobal
	case left.Shape == ShapeTable && right.Shape == ShapeTable && hasFK:
		j.Shape = JoinForeignKey
	case left.Shape == ShapeTable && right.Shape == ShapeTable:
		j.Shape = JoinTableTable
	case left.Shape == ShapeTable && right.Shape == ShapeStream:
		s.errf(o.valPos("with"), "a table cannot join stream %q", right.Name)
		p.hintf("start the join from the stream side: a stream-table join looks each stream record up in the table")
		return n
	default:
		s.errf(o.valPos("with"), "cannot join a %s with a %s", shapeNames[left.Shape], shapeNames[right.Shape])
		p.hintf("joins take a stream or table on the left and a stream, table or global table on the right; see %s#joins", docURL)
		return n
	}
	n.Shape = ShapeStream
	if j.Shape == JoinTableTable || j.Shape == JoinForeignKey {
		n.Shape = ShapeTable
	}
	n.WindowedKey, n.Window = false, nil
	// Options that belong to other join shapes.
	if j.Shape != JoinStreamStream && o.has("window") {
		s.errf(o.keyPos("window"), "window is only for stream-stream joins, not %s", shapeWords(j.Shape))
	}
	for _, k := range []string{"key_fn", "key_expr"} {
		if j.Shape != JoinStreamGlobal && o.has(k) {
			s.errf(o.keyPos(k), "%s is only for stream-global table joins, not %s", k, shapeWords(j.Shape))
		}
	}
	for _, k := range []string{"foreign_key_fn", "foreign_key_expr"} {
		if j.Shape != JoinForeignKey && o.has(k) {
			s.errf(o.keyPos(k), "%s is only for table-table joins, not %s", k, shapeWords(j.Shape))
		}
	}
	if j.Kind == JoinOuter && (j.Shape == JoinStreamTable || j.Shape == JoinStreamGlobal || j.Shape == JoinForeignKey) {
		s.errf(o.valPos("kind"), "kind %q is not supported for %s joins, want inner or left", j.Kind, shapeWords(j.Shape))
	}
	keyMismatch := func() {
		s.errf(s.pos, "key type %q of %q does not match %q of %q", typeString(right.Key), right.Name, typeString(left.Key), left.Name)
	}
	if left.WindowedKey || right.WindowedKey {
		s.errf(s.pos, "cannot join records with windowed keys")
		return n
	}
	switch j.Shape {
	case JoinStreamStream:
		if !left.Key.Equal(right.Key) {
			keyMismatch()
			p.hintf("re-key one side with select_key (or map) so that both keys have the same type; see %s#joins", docURL)
		}
		if !o.has("window") {
			s.errf(s.pos, "stream-stream join needs a window")
			p.hintf("add `window: {time_difference: 5m}` (or before/after, and grace): records join when their timestamps are that close")
		} else if wo := p.object(o.val("window"), s.ctx()+": window", "time_difference", "before", "after", "grace"); wo != nil {
			td, hasTD := wo.dur("time_difference")
			j.Before, j.After = td, td
			if b, ok := wo.dur("before"); ok {
				j.Before = b
			}
			if a, ok := wo.dur("after"); ok {
				j.After = a
			}
			j.Grace, _ = wo.dur("grace")
			if !hasTD && !wo.has("time_difference") && (!wo.has("before") || !wo.has("after")) {
				s.errf(p.pos(wo.n), "window: want time_difference, or both before and after")
			}
		}
		if s.needName("a stream-stream join creates state stores, which are named after it") {
			size := j.Before + j.After
			ret := size + j.Grace
			mk := func(suffix string, value *Type, kind StoreKind) *Store {
				st := p.internalStore(s, s.stepName+suffix, kind, left.Key, value)
				if st != nil && kind == StoreWindow {
					st.RetainDuplicates, st.WindowSize, st.Retention = true, size, ret
				}
				return st
			}
			j.ThisStore = mk("-this", left.Value, StoreWindow)
			j.OtherStore = mk("-other", right.Value, StoreWindow)
			if j.Kind != JoinInner {
				j.OuterStore = mk("-outer", left.Value, StoreKeyValue)
			}
			if p.keyChangedAt[left] != nil {
				j.ThisRepartition = s.repartition(n, s.stepName+"-left", 0)
			}
			if p.keyChangedAt[right] != nil {
				j.OtherRepartition = s.repartition(n, s.stepName+"-right", 0)
			}
		}
	case JoinStreamTable:
		if !left.Key.Equal(right.Key) {
			keyMismatch()
			p.hintf("re-key the stream with select_key (or map) to the table's key type; see %s#joins", docURL)
		}
		if c := p.keyChangedAt[left]; c != nil {
			if s.stepName == "" {
				s.errf(s.pos, "missing name: the key changed upstream (%s %q), so the stream must be repartitioned and the repartition topic needs a name", c.Op, c.Name)
				p.hintf("add `name: <join name>` to the step, next to \"join\":; see %s#names-that-never-move", docURL)
			} else {
				j.ThisRepartition = s.repartition(n, s.stepName, 0)
			}
		}
	case JoinStreamGlobal:
		j.KeyMapper = s.fn(o, RoleKeySelect, "key_fn", "key_expr", false)
		if j.KeyMapper == nil && !o.has("key_fn") && !o.has("key_expr") && !left.Key.Equal(right.Key) {
			keyMismatch()
			p.hintf("add key_fn or key_expr to map each stream record to the global table's key (%s)", typeString(right.Key))
		}
	case JoinTableTable:
		if !left.Key.Equal(right.Key) {
			keyMismatch()
			p.hintf("to join on a field of the value, use foreign_key_fn or foreign_key_expr; see %s#joins", docURL)
		}
	case JoinForeignKey:
		j.ForeignKey = s.fn(o, RoleForeignKey, "foreign_key_fn", "foreign_key_expr", true)
		if s.needName("a foreign-key join creates a state store and internal topics, which are named after it") {
			j.SubscriptionStore = p.internalStore(s, s.stepName+"-subscriptions", StoreKeyValue, right.Key, left.Key)
			for _, k := range []InternalTopicKind{InternalSubscriptionRegistration, InternalSubscriptionResponse} {
				name := s.stepName + "-" + strings.ReplaceAll(string(k), "_", "-")
				if p.checkName(s.namePos, "internal topic", name) {
					p.addInternal(&InternalTopic{Pos: s.namePos, Name: name, Node: n, Kind: k})
				}
			}
		}
	}
	if j.Shape == JoinStreamGlobal {
		p.keepKey(n, left)
	}
	return n
}
