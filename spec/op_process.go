package spec

// The Processor API: process and process_values run a user processor with
// the stores it names.

func (p *parser) stepProcess(s *step) *Node {
	o, n := s.start()
	if o == nil {
		return n
	}
	if !o.has("fn") {
		s.errf(s.pos, "missing required key \"fn\" (the processor constructor)")
	} else if name, ok := o.str("fn"); ok && p.checkFnName(o.valPos("fn"), s.ctx()+": fn", name) {
		n.Fn = &Func{Pos: o.valPos("fn"), Role: s.def.role, Name: name}
	} else {
		s.failed = true
	}
	if o.has("key") {
		n.Key = s.keyType(o, true)
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
	if s.op == OpProcess {
		// Like Kafka Streams, a processor may forward any key.
		p.changeKey(n)
		s.keyWindow(o, n)
	} else {
		p.keepKey(n, s.in)
	}
	return n
}
