package spec

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Stateless operations: record-at-a-time filters and mappers, split, merge,
// and the conversions between streams, tables and topics.

// stepFilter resolves filter and filter_not; `filter: {not_null: true}`
// takes no function and drops null values (on streams only: a table's
// predicate never sees a delete).
func (p *parser) stepFilter(s *step) *Node {
	o, n := s.start()
	if o != nil && o.has("not_null") {
		p.notNull(s, o, n)
		p.keepKey(n, s.in)
		return n
	}
	n.Fn = s.fn(o, s.def.role, "fn", "expr", true)
	p.keepKey(n, s.in)
	return n
}

// notNull checks a `not_null` filter: alone, true, on a stream.
func (p *parser) notNull(s *step, o *obj, n *Node) {
	switch {
	case o.has("fn") || o.has("expr"):
		s.errf(o.keyPos("not_null"), "want not_null or fn/expr, not both")
	case !o.bool("not_null", false):
		s.errf(o.keyPos("not_null"), "not_null: want true (leave it out for a predicate)")
	case s.in != nil && s.in.Shape != ShapeStream:
		s.errf(o.keyPos("not_null"), "not_null filters a stream: a table's predicate never sees a deleted row")
	default:
		n.NotNull = true
		return
	}
	s.failed = true
}

// stepMap resolves map and flat_map, which declare a new key and value.
func (p *parser) stepMap(s *step) *Node {
	o, n := s.start()
	n.Fn = s.fn(o, s.def.role, "fn", "expr", true)
	n.Key, n.Value = s.keyType(o, true), s.typ(o, "value", true)
	p.changeKey(n)
	s.keyWindow(o, n)
	return n
}

// stepMapValues resolves map_values, whose value type defaults to the
// input's, and flat_map_values, which must declare it.
func (p *parser) stepMapValues(s *step) *Node {
	o, n := s.start()
	n.Fn = s.fn(o, s.def.role, "fn", "expr", true)
	if o != nil && o.has("value") || s.op == OpFlatMapValues {
		n.Value = s.typ(o, "value", true)
	}
	p.keepKey(n, s.in)
	return n
}

func (p *parser) stepSelectKey(s *step) *Node {
	o, n := s.start()
	n.Fn = s.fn(o, s.def.role, "fn", "expr", true)
	n.Key = s.keyType(o, true)
	p.changeKey(n)
	s.keyWindow(o, n)
	return n
}

// stepPeek resolves peek and foreach, which ends the pipeline.
func (p *parser) stepPeek(s *step) *Node {
	o, n := s.start()
	n.Fn = s.fn(o, s.def.role, "fn", "expr", true)
	if s.op == OpForeach {
		p.terminal(n)
	} else {
		p.keepKey(n, s.in)
	}
	return n
}

func (p *parser) stepToTable(s *step) *Node {
	o, n := s.start()
	n.Shape = ShapeTable
	n.Store = s.store(o, StoreKeyValue, n.Key, n.Value, nil)
	p.maybeRepartition(s, n, s.in)
	return n
}

func (p *parser) stepToStream(s *step) *Node {
	_, n := s.start()
	n.Shape = ShapeStream
	return n
}

func (p *parser) stepSplit(s *step) *Node {
	o, n := s.start()
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
			fn := s.fn(bo, s.def.role, "fn", "expr", true)
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
	o, n := s.start()
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
	s.want(s.def.inputs...) // before the body, which may be a bare topic name
	in := s.in
	p.terminal(n)
	sink := &Sink{}
	n.Sink = sink
	var topicName string
	var topicPos Pos
	if s.body.Kind == yaml.ScalarNode && s.body.Tag != "!!null" {
		topicName, topicPos = s.body.Value, p.pos(s.body)
	} else {
		o := s.obj()
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
			sink.Chooser = s.fn(o, s.def.role, "topic_fn", "topic_expr", true)
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
