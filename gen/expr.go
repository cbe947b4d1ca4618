package gen

import (
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// topoType is the Go type of a key or value type in the topology: records are
// pointers (nil is a tombstone) and windowed keys are sgstream.Windowed.
func (c *genCtx) topoType(t *spec.Type) *jen.Statement {
	if t.Kind == spec.KindWindowed || t.Kind == spec.KindSessionWindowed {
		return jen.Qual(pathSgstream, "Windowed").Types(c.topoType(t.Elem))
	}
	return c.valueType(t)
}

// topoSerde is the expression of a serde for a key or value type. Windowed
// keys need the window (time windows decode their end from the size).
func (c *genCtx) topoSerde(t *spec.Type, w *spec.Window) *jen.Statement {
	switch t.Kind {
	case spec.KindWindowed:
		var size time.Duration
		if w != nil {
			size = windowSize(w)
		}
		var k keyed
		k.add("Inner", c.topoSerde(t.Elem, nil))
		k.add("Size", durationLit(size))
		return jen.Qual(pathSgstream, "TimeWindowedSerde").Types(c.topoType(t.Elem)).Values(k.items()...)
	case spec.KindSessionWindowed:
		return jen.Qual(pathSgstream, "SessionWindowedSerde").Types(c.topoType(t.Elem)).Values(jen.Id("Inner").Op(":").Add(c.topoSerde(t.Elem, nil)))
	}
	e, err := c.serdeExpr(t)
	if err != nil {
		// spec restricts topic and store types to what has a serde, so
		// this is a generator bug; report it rather than crash.
		c.diags.add(c.prog.Pos, "internal error: %v", err)
		return jen.Nil()
	}
	return e
}

// typ is the Go type of t in the wiring: a pointer for the pointer types
// of nullable values (nulls.go).
func (g *topoGen) typ(t *spec.Type) *jen.Statement {
	if b, ok := g.nulls.base[t]; ok {
		return jen.Op("*").Add(g.c.topoType(b))
	}
	return g.c.topoType(t)
}

func (g *topoGen) serde(t *spec.Type, w *spec.Window) *jen.Statement { return g.c.topoSerde(t, w) }

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

// keyWindow is the window the windowed key of n's records decodes with
// (nil when the key is not windowed): the one the re-keying step that
// declared the key resolved, or the windowed aggregation's.
func keyWindow(n *spec.Node) *spec.Window {
	for n != nil && n.Key != nil && (n.Key.Kind == spec.KindWindowed || n.Key.Kind == spec.KindSessionWindowed) {
		if n.KeyWindow != nil {
			return n.KeyWindow
		}
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
