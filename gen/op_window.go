package gen

import (
	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// Windows: windowed_by and suppress, and the window literals the windowed
// aggregations share.

func (g *topoGen) windowedBy(n *spec.Node) {
	kind, lit := windowsLit(n.Window)
	g.assign(n, jen.Qual(pathSgstream, "WindowedBy"+kind).Call(g.in(n, 0), jen.Lit(n.Name), lit))
}

// windowsLit is the runtime's windows value for w, and the suffix of the
// functions that take it ("" for TimeWindows, "Sliding", "Session"), as in
// WindowedBy and the windowed cogroups.
func windowsLit(w *spec.Window) (string, jen.Code) {
	var k keyed
	switch w.Kind {
	case spec.WindowSliding:
		k.add("TimeDifference", durationLit(w.TimeDiff))
		graceRetention(&k, w)
		return "Sliding", jen.Qual(pathSgstream, "SlidingWindows").Values(k.items()...)
	case spec.WindowSession:
		k.add("Gap", durationLit(w.Gap))
		graceRetention(&k, w)
		return "Session", jen.Qual(pathSgstream, "SessionWindows").Values(k.items()...)
	}
	k.add("Size", durationLit(w.Size))
	if w.Kind == spec.WindowHopping && w.Advance != w.Size {
		k.add("Advance", durationLit(w.Advance))
	}
	graceRetention(&k, w)
	return "", jen.Qual(pathSgstream, "TimeWindows").Values(k.items()...)
}

// graceRetention adds the fields every windows literal ends with.
func graceRetention(k *keyed, w *spec.Window) {
	if w.Grace != 0 {
		k.add("Grace", durationLit(w.Grace))
	}
	if w.Retention != 0 {
		k.add("Retention", durationLit(w.Retention))
	}
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

// suppress emits Suppress with its config and, until a window closes, the
// window end as the buffer time.
func (g *topoGen) suppress(n *spec.Node) {
	sp := n.Suppress
	var k keyed
	var bufferTime jen.Code = jen.Nil()
	if sp.Kind == spec.SuppressUntilWindowCloses {
		k.add("UntilWindowCloses", jen.True())
		w := windowOf(n)
		grace := w.Grace
		if w.Kind == spec.WindowSession {
			grace += w.Gap
		}
		if grace != 0 {
			k.add("Grace", durationLit(grace))
		}
		bufferTime = jen.Qual(pathSgstream, "WindowEnd").Types(g.typ(n.Key.Elem))
	} else if sp.TimeLimit != 0 {
		k.add("TimeLimit", durationLit(sp.TimeLimit))
	}
	if sp.MaxRecords != 0 {
		k.add("MaxRecords", jen.Lit(sp.MaxRecords))
	}
	if sp.MaxBytes != 0 {
		k.add("MaxBytes", jen.Lit(sp.MaxBytes))
	}
	if sp.WhenFull == "emit_early" {
		k.add("EmitEarlyWhenFull", jen.True())
	}
	g.assign(n, jen.Qual(pathSgstream, "Suppress").Call(g.in(n, 0), jen.Lit(sp.Name), jen.Qual(pathSgstream, "SuppressConfig").Values(k.items()...), bufferTime))
}
