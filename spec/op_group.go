package spec

// Grouping and re-keying: repartition, group_by_key and group_by, and the
// repartition topic a key change upstream implies.

func (p *parser) stepRepartition(s *step) *Node {
	o, n := s.start()
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
}

func (p *parser) stepGroupByKey(s *step) *Node {
	_, n := s.start()
	n.Shape = ShapeGroupedStream
	p.maybeRepartition(s, n, s.in)
	return n
}

func (p *parser) stepGroupBy(s *step) *Node {
	o, n := s.start()
	n.WindowedKey, n.Window, n.KeyWindow = false, nil, nil
	isTable := s.in.Shape == ShapeTable && !s.inBad
	if isTable {
		n.Shape = ShapeGroupedTable
		n.Fn = s.fn(o, RoleKeyValueMap, "fn", "expr", true)
		n.Key, n.Value = s.keyType(o, true), s.typ(o, "value", true)
	} else {
		n.Shape = ShapeGroupedStream
		n.Fn = s.fn(o, RoleKeySelect, "fn", "expr", true)
		n.Key = s.keyType(o, true)
		if o != nil && o.has("value") {
			s.errf(o.keyPos("value"), "value is only for group_by on a table; on a stream the value is unchanged")
			p.hintf("change the value with map_values before group_by")
		}
	}
	s.keyWindow(o, n)
	if s.needName("group_by always repartitions, and the repartition topic needs a name") {
		n.Repartition = s.repartition(n, s.stepName, 0)
	}
	return n
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
		s.nameHint("<repartition name>", "internal topics")
		return
	}
	n.Repartition = s.repartition(n, s.stepName, 0)
}
