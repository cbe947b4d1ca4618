package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// wire names what the generated decoder of one wire format calls, so one
// generator (readWire) writes the decoders of every format: msgpack
// (records.go) and json (records_json.go) differ only in these names.
type wire struct {
	// decode is the generated method decoding a nested record.
	decode string
	// isNull is the test that the next value is null, and skipNull the
	// statement consuming it.
	isNull, skipNull func() jen.Code
	// present, when set, consumes the marker of a present optional value
	// (Avro's union branch index), leaving any error in err.
	present func() jen.Code
	// recordList, list and mapOf are the collection readers.
	recordList, list, mapOf jen.Code
	// prim is the reader of a scalar or enum, nil for other types.
	prim func(t *spec.Type) jen.Code
}

// readWire returns statements decoding a value of type t from b into dst,
// an assignable expression of Go type goType(t), leaving any error in err
// for the enclosing function to return at once (the record loop adds the
// field name to it, the collection readers the index or key). present is
// set for the element of an optional list, map or bytes: an empty value
// then decodes as non-nil, because nil means absent.
func (c *genCtx) readWire(w *wire, t *spec.Type, dst expr, present bool) []jen.Code {
	read := func(call jen.Code) []jen.Code {
		return []jen.Code{jen.List(dst(), jen.Id("b"), jen.Err()).Op("=").Add(call)}
	}
	var out []jen.Code
	switch t.Kind {
	case spec.KindRecord:
		return []jen.Code{jen.List(jen.Id("b"), jen.Err()).Op("=").Add(dst()).Dot(w.decode).Call(jen.Id("b"), jen.Id("depth").Op("+").Lit(1))}
	case spec.KindOptional:
		present := c.readWirePresent(w, t.Elem, dst)
		if w.present != nil {
			present = []jen.Code{jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Add(w.present()), jen.Err().Op("==").Nil()).Block(present...)}
		}
		return []jen.Code{jen.If(w.isNull()).Block(w.skipNull(), dst().Op("=").Nil()).Else().Block(present...)}
	case spec.KindList:
		if t.Elem.Kind == spec.KindRecord {
			// In place: see sgimpl.ReadRecordList.
			name := c.recordNames[t.Elem.Record]
			decode := jen.Func().Params(jen.Id("b").Index().Byte(), jen.Id("v").Op("*").Id(name)).Params(jen.Index().Byte(), jen.Error()).Block(
				jen.Return(jen.Id("v").Dot(w.decode).Call(jen.Id("b"), jen.Id("depth").Op("+").Lit(1))))
			out = read(jen.Add(w.recordList).Call(jen.Id("b"), decode))
			break
		}
		out = read(jen.Add(w.list).Call(jen.Id("b"), c.wireElemReader(w, t.Elem)))
	case spec.KindMap:
		out = read(jen.Add(w.mapOf).Call(jen.Id("b"), c.wireElemReader(w, t.Elem)))
	default:
		out = read(jen.Add(c.wireElemReader(w, t)).Call(jen.Id("b")))
	}
	if present && nilable(t) {
		out = append(out, jen.If(dst().Op("==").Nil()).Block(dst().Op("=").Add(c.goType(t)).Values()))
	}
	return out
}

// wireElemReader is a function of type func([]byte) (goType(t), []byte,
// error) decoding one value of type t: the reader of a scalar or enum,
// else a function literal around readWire.
func (c *genCtx) wireElemReader(w *wire, t *spec.Type) jen.Code {
	if fn := w.prim(t); fn != nil {
		return fn
	}
	body := append(c.readWire(w, t, id("v"), false), jen.Return(jen.Id("v"), jen.Id("b"), jen.Err()))
	return jen.Func().Params(jen.Id("b").Index().Byte()).
		Params(jen.Id("v").Add(c.goType(t)), jen.Id("_").Index().Byte(), jen.Err().Error()).Block(body...)
}

// readWirePresent decodes the element of an optional value known not to
// be null into dst, of Go type goType(optional<t>).
func (c *genCtx) readWirePresent(w *wire, t *spec.Type, dst expr) []jen.Code {
	switch {
	case nilable(t):
		return c.readWire(w, t, dst, true)
	case t.Kind == spec.KindRecord:
		return append([]jen.Code{dst().Op("=").New(jen.Id(c.recordNames[t.Record]))}, c.readWire(w, t, dst, false)...)
	}
	// A scalar or an enum: sgimpl.ReadPtr allocates the pointer only once
	// the value has decoded.
	return []jen.Code{jen.List(dst(), jen.Id("b"), jen.Err()).Op("=").Qual(pathSgimpl, "ReadPtr").Call(jen.Id("b"), c.wireElemReader(w, t))}
}

// msgpackWire is the msgpack decoder's wire.
func (c *genCtx) msgpackWire() *wire {
	return &wire{
		decode:     "sgDecode",
		isNull:     func() jen.Code { return jen.Qual(pathSerdes, "IsNil").Call(jen.Id("b")) },
		skipNull:   func() jen.Code { return jen.Id("b").Op("=").Id("b").Index(jen.Lit(1).Op(":")) },
		recordList: jen.Qual(pathSgimpl, "ReadRecordList"), list: jen.Qual(pathSgimpl, "ReadList"),
		mapOf: jen.Qual(pathSgimpl, "ReadMap"),
		prim:  func(t *spec.Type) jen.Code { return c.primFunc("Read", t) },
	}
}

// defaultsLit is the elements of the record literal that sets a record to
// its declared defaults before a decoder fills it, laid out in rows.
func (c *genCtx) defaultsLit(r *spec.Record) []jen.Code {
	var defaults []jen.Code
	var widths []int
	for _, fl := range r.Fields {
		if d := c.defaultValue(r, fl); d != nil {
			e := jen.Id(c.fieldNames[fl]).Op(":").Add(d)
			defaults = append(defaults, e)
			widths = append(widths, len(fmt.Sprintf("%#v", e)))
		}
	}
	return rows(defaults, widths)
}

// fieldCases are the cases of a record decoder's switch over its fields,
// one per field, labelled by label (an id or a JSON name), each decoding
// the field's value with w.
func (c *genCtx) fieldCases(w *wire, r *spec.Record, label func(*spec.Field) jen.Code) []jen.Code {
	var cases []jen.Code
	for _, fl := range r.Fields {
		v := field("r", c.fieldNames[fl])
		var stmts []jen.Code
		if fl.Type.Kind == spec.KindOptional {
			stmts = c.readWirePresent(w, fl.Type.Elem, v)
		} else {
			stmts = c.readWire(w, fl.Type, v, false)
		}
		cases = append(cases, jen.Case(label(fl)).Block(stmts...))
	}
	return cases
}
