package spec

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The topology: pipelines, their steps and the references between them.
// readStep finds each step's operation in opTable (ops.go), whose resolver
// lives in the op_*.go file of its family; step.go holds what resolvers
// share.

// pipeline is one entry of `topology`, read before any is resolved so that
// references to later pipelines are recognised as such.
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
		case opByName[k] != nil:
			if opKey != nil {
				p.errf(p.pos(e.key), "%s: has both %q and %q, want exactly one operation per step", sctx, opKey.Value, k)
				bad = true
				continue
			}
			opKey, s.body = e.key, e.val
		default:
			if dym := didYouMean(k, append(opNames(), "name", "doc")); dym != "" {
				p.errf(p.pos(e.key), "%s: unknown key %q%s", sctx, k, dym)
			} else {
				p.errf(p.pos(e.key), "%s: unknown operation %q, want one of %s", sctx, k, strings.Join(opNames(), ", "))
			}
			bad = true
		}
	}
	if opKey == nil {
		if !bad {
			p.errf(p.pos(it), "%s: missing operation, want one of %s", sctx, strings.Join(opNames(), ", "))
		}
		return nil
	}
	if !p.noAlias(s.body, sctx) {
		return nil
	}
	s.def = opByName[opKey.Value]
	s.op, s.pos = s.def.op, p.pos(opKey)
	if s.def.nameInBody && !s.takeBodyName(sctx) {
		bad = true
	}
	switch {
	case i == count-1 && pl.name != "":
		s.name = pl.name
	case s.stepName != "":
		s.name = pl.name + "." + s.stepName
	default:
		s.name = pl.name + "." + string(s.op) + strconv.Itoa(i+1)
	}
	if bad {
		s.failed = true
	}
	return s
}

// takeBodyName moves a `name` inside the op's mapping to the step: the
// reference lets the ops that create internal topics or stores take their
// name there, too. It reports false when that name is invalid or differs
// from the step's.
func (s *step) takeBodyName(sctx string) bool {
	p := s.p
	if s.body.Kind != yaml.MappingNode {
		return true
	}
	for j := 0; j+1 < len(s.body.Content); j += 2 {
		k, v := s.body.Content[j], s.body.Content[j+1]
		if k.Value != "name" {
			continue
		}
		s.body.Content = append(s.body.Content[:j:j], s.body.Content[j+2:]...)
		name, ok := p.scalarString(v, sctx+": "+string(s.op)+": name")
		switch {
		case !ok || !p.checkName(p.pos(v), "step", name):
			return false
		case s.stepName != "" && s.stepName != name:
			p.errf(p.pos(v), "%s: %s: name %q differs from the step's name %q", sctx, s.op, name, s.stepName)
			return false
		}
		s.stepName, s.namePos = name, p.pos(v)
		return true
	}
	return true
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
	n.WindowedKey, n.Window, n.KeyWindow = false, nil, nil
}

// terminal makes n an end of the graph: it produces nothing.
func (p *parser) terminal(n *Node) {
	n.Shape, n.Key, n.Value, n.WindowedKey, n.Window, n.KeyWindow = ShapeNone, nil, nil, false, nil, nil
}
