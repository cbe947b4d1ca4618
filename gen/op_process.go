package gen

import (
	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// Process: the Processor API steps (process, process_values) and the
// stores of the spec's stores section they use.

// storeKindLit is the sgstream store kind of k (key-value unless window or
// session).
func storeKindLit(k spec.StoreKind) jen.Code {
	return sgstreamLit(map[spec.StoreKind]string{spec.StoreWindow: "WindowStore", spec.StoreSession: "SessionStore"}, k, "KeyValueStore")
}

// process emits a process or process_values step and declares the spec's
// stores it uses (once each).
func (g *topoGen) process(n *spec.Node) {
	in := n.Inputs[0]
	var names []jen.Code
	for _, st := range n.Stores {
		names = append(names, g.m.storeName(st))
		if !g.declared[st] {
			g.declared[st] = true
			g.addStateStore(n, st)
		}
	}
	kOut := n.Key
	op := "Process"
	if n.Op == spec.OpProcessValues {
		op, kOut = "ProcessValues", in.Key
	}
	// The processor sees every record, null values too: a pointer where
	// they can be null.
	vIn := g.val(in)
	ctor := g.fn(n, n.Fn, roleSig{
		results: []jen.Code{jen.Qual(pathSgstream, "Processor").Types(g.typ(in.Key), g.typ(vIn), g.typ(kOut), g.typ(n.Value))},
		desc:    "processor|" + in.Key.String() + "|" + g.typeDesc(vIn) + "|" + kOut.String() + "|" + n.Value.String(),
	})
	g.assign(n, jen.Qual(pathSgstream, op).Call(g.in(n, 0), jen.Lit(n.Name), ctor, jen.Index().String().Values(names...)))
}

// addStateStore declares store st of the stores section, which processor
// node n is the first to use.
func (g *topoGen) addStateStore(n *spec.Node, st *spec.Store) {
	var k keyed
	k.add("Name", g.m.storeName(st))
	k.add("Kind", storeKindLit(st.Kind))
	if st.InMemory {
		k.add("InMemory", jen.True())
	}
	if st.Logged {
		// A process step's store holds whatever bytes its processor
		// writes, which Kafka Streams did not write the same way: its
		// changelog carries streamgen's layout marker.
		k.add("Logged", jen.True())
		k.add("OwnLayout", jen.True())
	}
	if st.Retention != 0 {
		k.add("Retention", durationLit(st.Retention))
	}
	if st.WindowSize != 0 {
		k.add("WindowSize", durationLit(st.WindowSize))
	}
	if st.Custom != nil {
		k.add("Custom", g.fn(n, st.Custom, roleSig{results: []jen.Code{jen.Qual(pathSgstate, "Store")}, desc: "store"}))
	}
	g.add(jen.Qual(pathSgstream, "AddStateStore").Call(jen.Id("b"), jen.Qual(pathSgstream, "StoreSpec").Values(k.items()...)))
}
