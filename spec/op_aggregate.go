package spec

import "fmt"

// Aggregations: count, reduce, aggregate and cogroup, which turn grouped or
// windowed records into a table backed by a store.

// aggKind describes the input of an aggregation.
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

// aggregation is what count, reduce and aggregate share while resolving.
type aggregation struct {
	o                        *obj
	n                        *Node
	grouped, table, windowed bool
	w                        *Window // the input's window, if windowed
}

// startAggregation reads the body, checks the input and resolves the
// windowed key and emit strategy. It returns nil when the body is not a
// mapping, with the node to return.
func (s *step) startAggregation() (*aggregation, *Node) {
	o, n := s.start()
	n.Shape = ShapeTable
	a := &aggregation{o: o, n: n}
	a.grouped, a.table, a.windowed, a.w = s.aggKind()
	if s.inBad {
		a.grouped, a.table = true, o != nil && (o.has("adder") || o.has("subtractor"))
	}
	if o == nil {
		return nil, n
	}
	if a.windowed {
		n.Window, n.WindowedKey, n.Key = a.w, true, windowedOf(s.in.Key, a.w)
	}
	n.Emit = s.emitStrategy(o, a.windowed, s.in.Emit)
	return a, n
}

// finishAggregation adds the store; the result keeps the grouping key,
// which needs no repartition downstream.
func (s *step) finishAggregation(a *aggregation) *Node {
	n := a.n
	n.Store = s.store(a.o, aggStoreKind(a.windowed, a.w), s.in.Key, n.Value, a.w)
	s.p.keepKey(n, s.in)
	delete(s.p.keyChangedAt, n)
	return n
}

// aggStoreKind is the store of an aggregation over an (un)windowed input.
func aggStoreKind(windowed bool, w *Window) StoreKind {
	switch {
	case !windowed:
		return StoreKeyValue
	case w != nil && w.Kind == WindowSession:
		return StoreSession
	}
	return StoreWindow
}

// tableAdders reads the adder and subtractor of a reduce or aggregate on a
// grouped table; it reports false when they are not both there (or fn is).
func (s *step) tableAdders(a *aggregation) bool {
	o, n := a.o, a.n
	n.Adder, n.Subtractor = s.subFn(o, "adder", s.def.role), s.subFn(o, "subtractor", s.def.role)
	if !o.has("adder") || !o.has("subtractor") || o.has("fn") || o.has("expr") {
		s.errf(s.pos, "%s on a grouped table needs adder and subtractor (and no fn or expr)", s.op)
		return false
	}
	return true
}

// streamAggregator reads the fn of a reduce or aggregate on a grouped
// stream, where adder and subtractor do not belong.
func (s *step) streamAggregator(a *aggregation) {
	a.n.Fn = s.fn(a.o, s.def.role, "fn", "expr", true)
	for _, k := range []string{"adder", "subtractor"} {
		if a.o.has(k) && a.grouped {
			s.errf(a.o.keyPos(k), "%s is only for grouped tables; a grouped stream takes fn or expr", k)
		}
	}
}

// initializer reads the required init of aggregate and cogroup.
func (s *step) initializer(o *obj) *Func {
	f := s.subFn(o, "init", RoleInit)
	if !o.has("init") {
		s.errf(s.pos, "missing required key \"init\" (the initializer)")
	}
	return f
}

func (p *parser) stepCount(s *step) *Node {
	a, n := s.startAggregation()
	if a == nil {
		return n
	}
	n.Value = &Type{Kind: KindInt64}
	return s.finishAggregation(a)
}

func (p *parser) stepReduce(s *step) *Node {
	a, n := s.startAggregation()
	if a == nil {
		return n
	}
	if !a.table {
		s.streamAggregator(a)
	} else if !s.tableAdders(a) {
		p.hintf("the subtractor removes a record's old value when the table row changes; see %s#steps", docURL)
	}
	return s.finishAggregation(a)
}

func (p *parser) stepAggregate(s *step) *Node {
	a, n := s.startAggregation()
	if a == nil {
		return n
	}
	o := a.o
	n.Init = s.initializer(o)
	n.Agg = s.typ(o, "value", true)
	n.Value = n.Agg
	if a.table {
		s.tableAdders(a)
	} else {
		s.streamAggregator(a)
	}
	switch {
	case a.w != nil && a.w.Kind == WindowSession:
		n.Merger = s.subFn(o, "merger", RoleMerge)
		if !o.has("merger") {
			s.errf(s.pos, "session-windowed aggregate needs a merger")
			p.hintf("add `merger: <func(key K, a A, b A) A>`: it combines two sessions that a record bridges")
		}
	case o.has("merger") && !s.inBad:
		s.errf(o.keyPos("merger"), "merger is only for session-windowed aggregates")
	}
	return s.finishAggregation(a)
}

func (p *parser) stepCogroup(s *step) *Node {
	o, n := s.start()
	n.Shape = ShapeTable
	if o == nil {
		return n
	}
	n.Cogroup = []*CogroupInput{{Pos: s.pos, Input: s.in, Aggregator: s.fn(o, s.def.role, "fn", "expr", true)}}
	n.Init = s.initializer(o)
	n.Agg = s.typ(o, "value", true)
	n.Value = n.Agg
	s.cogroupWith(o, n)
	w := s.cogroupWindow(o, n)
	n.Store = s.store(o, aggStoreKind(w != nil, w), s.in.Key, n.Value, w)
	return n
}

// cogroupWith adds the other grouped streams of a cogroup, each with its
// aggregator.
func (s *step) cogroupWith(o *obj, n *Node) {
	p := s.p
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
		ci := &CogroupInput{Pos: p.pos(it), Aggregator: s.fn(io, s.def.role, "fn", "expr", true)}
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
}

// cogroupWindow reads a cogroup's own window (Kafka Streams windows a
// CogroupedKStream, not its inputs), its emit strategy and merger, and
// returns the window, or nil.
func (s *step) cogroupWindow(o *obj, n *Node) *Window {
	p := s.p
	var w *Window
	if o.has("window") {
		if wo := p.object(o.val("window"), s.ctx()+": window", "tumbling", "hopping", "sliding", "session", "retention"); wo != nil {
			w = s.parseWindow(wo, "window")
		} else {
			s.failed = true
		}
	}
	if w != nil {
		n.Window, n.WindowedKey, n.Key = w, true, windowedOf(s.in.Key, w)
	}
	n.Emit = s.emitStrategy(o, o.has("window"), "")
	if n.Emit == EmitOnClose && !s.inBad {
		// Kafka's TimeWindowedCogroupedKStream and
		// SessionWindowedCogroupedKStream have no emitStrategy: every
		// input's processor forwards each update.
		s.errf(o.valPos("emit"), "emit %q is not available for a windowed cogroup, which emits every update as in Kafka Streams", n.Emit)
		p.hintf("for final results, remove emit and add `- suppress: {until: window_closes, name: <name>}` after the cogroup")
		n.Emit = EmitOnUpdate
	}
	if w != nil && w.Kind == WindowSession {
		n.Merger = s.subFn(o, "merger", RoleMerge)
		if !o.has("merger") {
			s.errf(s.pos, "session-windowed cogroup needs a merger")
		}
	} else if o.has("merger") && w != nil {
		s.errf(o.keyPos("merger"), "merger is only for session windows")
	}
	return w
}
