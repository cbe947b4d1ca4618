package gen

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// The avro format (docs/formats.md "Avro"): for every record and enum an
// avro topic side carries, directly or nested, streamgen_avro.go holds
// the generated .avsc (one constant per record and enum, schema_avro.go)
// and a generated encoder and decoder of the Avro binary encoding of that
// schema, calling the Avro primitives of serdes, with no reflection. The
// decoder reads the generated schema only: the bytes of another writer
// schema are transcoded into it first (serdes.ResolveAvro), so the fast
// path is one generated decoder and resolution is a generic, cached plan.

// Names of the files the avro step writes.
const (
	avroFile     = "streamgen_avro.go"
	avroTestFile = "streamgen_avro_test.go"
)

func avroEnumAppender(name string) string { return "sgAppendAvro" + name }
func avroEnumReader(name string) string   { return "sgReadAvro" + name }
func avroSymbolsVar(name string) string   { return "sgAvro" + name + "Symbols" }

// avroSchemaConst names the constant holding the .avsc of a record or enum.
func avroSchemaConst(goName string) string { return goName + "AvroSchema" }

// avroPrimSchemas are the schemas of primitives on avro sides.
var avroPrimSchemas = map[spec.TypeKind]string{
	spec.KindString: `"string"`, spec.KindBytes: `"bytes"`, spec.KindBool: `"boolean"`,
	spec.KindInt32: `"int"`, spec.KindInt64: `"long"`, spec.KindUint32: `"long"`, spec.KindUint64: `"long"`,
	spec.KindFloat32: `"float"`, spec.KindFloat64: `"double"`, spec.KindDuration: `"long"`,
	spec.KindTimestamp: `{"type":"long","logicalType":"timestamp-millis"}`,
}

// avroCodec is the serdes.SchemaCodec of an avro side of type ty.
func (c *genCtx) avroCodec(ty *spec.Type) *jen.Statement {
	switch ty.Kind {
	case spec.KindRecord:
		name := c.recordNames[ty.Record]
		return jen.Qual(pathSerdes, "Avro").Types(jen.Id(name)).Call(jen.Id(avroSchemaConst(name)))
	case spec.KindEnum:
		name := c.enumNames[ty.Enum]
		return jen.Qual(pathSerdes, "AvroEnum").Call(jen.Id(avroSchemaConst(name)), jen.Id(avroEnumAppender(name)), jen.Id(avroEnumReader(name)))
	}
	fn := primFuncs[ty.Kind]
	return jen.Qual(pathSerdes, "AvroValue").Call(jen.Lit(avroPrimSchemas[ty.Kind]), jen.Qual(pathSerdes, "AppendAvro"+fn), jen.Qual(pathSerdes, "ReadAvro"+fn))
}

// generateAvro is the generator step writing streamgen_avro.go (and its
// tests) when a topic has an avro side.
func generateAvro(c *genCtx) error {
	u := formatUse(c.prog, func(f spec.Format) bool { return f == spec.FormatAvro })
	if len(u.records) == 0 && len(u.enums) == 0 {
		return nil
	}
	f := c.newFile(avroFile)
	for _, e := range u.enums {
		if err := c.genAvroEnum(f, e); err != nil {
			return err
		}
	}
	for _, r := range u.records {
		if err := c.genAvroRecord(f, r); err != nil {
			return err
		}
	}
	if !c.cfg.OmitTests && len(u.records) > 0 {
		c.genAvroTests(u.records)
	}
	return nil
}

// avroSchemaDecl declares the .avsc constant of a record or enum.
func (c *genCtx) avroSchemaDecl(f *jen.File, goName, what string, pos spec.Pos, schema func() (string, error)) error {
	doc, err := schema()
	if err != nil {
		return fmt.Errorf("%s: Avro schema: %w", what, err)
	}
	name := avroSchemaConst(goName)
	c.pkgScope.reserve(&c.diags, name, "Avro schema of "+what, pos)
	f.Line()
	f.Commentf("// %s is the Avro schema (.avsc) of %s: what an avro topic", name, goName)
	f.Comment("// registers for it (`streamgen schema avro` prints it).")
	f.Const().Id(name).Op("=").Lit(doc)
	return nil
}

// genAvroEnum writes an enum's schema, its appender (the symbol's index)
// and reader.
func (c *genCtx) genAvroEnum(f *jen.File, e *spec.Enum) error {
	name := c.enumNames[e]
	if err := c.avroSchemaDecl(f, name, fmt.Sprintf("enum %q", e.Name), e.Pos, func() (string, error) { return EnumAvroSchema(e) }); err != nil {
		return err
	}
	app, read, syms := avroEnumAppender(name), avroEnumReader(name), avroSymbolsVar(name)
	for _, n := range []string{app, read, syms} {
		c.pkgScope.reserve(&c.diags, n, fmt.Sprintf("Avro codec of enum %q", e.Name), e.Pos)
	}
	var cases, values []jen.Code
	for i, v := range e.Values {
		cases = append(cases, jen.Case(jen.Id(c.valueNames[v])).Block(jen.Return(avroIndexAppend(i), jen.Nil())))
		values = append(values, jen.Id(c.valueNames[v]))
	}
	f.Line()
	f.Commentf("// %s are the values of %s in the order of its Avro symbols.", syms, name)
	f.Var().Id(syms).Op("=").Index(jen.Op("...")).Id(name).Values(values...)
	f.Line()
	f.Commentf("// %s appends the index of v's Avro symbol; a number the", app)
	f.Comment("// schema does not declare has none.")
	f.Func().Id(app).Params(jen.Id("b").Index().Byte(), jen.Id("v").Id(name)).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Switch(jen.Id("v")).Block(cases...),
		jen.Return(jen.Id("b"), jen.Qual(pathSerdes, "UnknownAvroEnum").Call(jen.Lit(e.Name), jen.Int32().Call(jen.Id("v")))),
	)
	f.Line()
	f.Commentf("// %s reads the index of an Avro symbol of %s.", read, name)
	f.Func().Id(read).Params(jen.Id("b").Index().Byte()).Params(jen.Id(name), jen.Index().Byte(), jen.Error()).Block(
		jen.List(jen.Id("i"), jen.Id("rest"), jen.Err()).Op(":=").Qual(pathSerdes, "ReadAvroIndex").Call(jen.Id("b"), jen.Len(jen.Id(syms)), jen.Lit("enum "+e.Name+" symbol")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Lit(0), jen.Id("b"), jen.Err())),
		jen.Return(jen.Id(syms).Index(jen.Id("i")), jen.Id("rest"), jen.Nil()),
	)
	return nil
}

// avroIndexAppend appends the varint of index i (a constant byte below 64).
func avroIndexAppend(i int) jen.Code {
	if i < 64 {
		return jen.Append(jen.Id("b"), jen.Lit(2*i))
	}
	return jen.Qual(pathSerdes, "AppendAvroLong").Call(jen.Id("b"), jen.Lit(i))
}

// genAvroRecord writes a record's schema and Avro methods.
func (c *genCtx) genAvroRecord(f *jen.File, r *spec.Record) error {
	name := c.recordNames[r]
	if err := c.avroSchemaDecl(f, name, fmt.Sprintf("record %q", r.Name), r.Pos, func() (string, error) { return RecordAvroSchema(r) }); err != nil {
		return err
	}
	recv := jen.Id("r").Op("*").Id(name)
	buf := jen.Id("b").Index().Byte()
	f.Line()
	f.Var().Id("_").Qual(pathSerdes, "AvroRecord").Op("=").Parens(jen.Op("*").Id(name)).Parens(jen.Nil())
	f.Line()
	f.Comment("// AppendAvro implements serdes.AvroRecord.")
	f.Func().Params(recv.Clone()).Id("AppendAvro").Params(buf.Clone()).Params(jen.Index().Byte(), jen.Error()).Block(c.avroEncodeBody(r)...)
	f.Line()
	f.Comment("// DecodeAvro implements serdes.AvroRecord.")
	f.Func().Params(recv.Clone()).Id("DecodeAvro").Params(buf.Clone()).Error().Block(
		jen.Return(jen.Qual(pathSerdes, "DecodeAvroTop").Call(jen.Id("b"),
			jen.Func().Params(buf.Clone()).Params(jen.Index().Byte(), jen.Error()).Block(
				jen.Return(jen.Id("r").Dot("sgDecodeAvro").Call(jen.Id("b"), jen.Lit(0)))))))
	f.Line()
	f.Comment("// sgDecodeAvro is DecodeAvro for a record nested depth deep, from the start")
	f.Comment("// of b; it returns the bytes after the record. Every field is on the wire,")
	f.Comment("// in schema order, so each is assigned.")
	f.Func().Params(recv.Clone()).Id("sgDecodeAvro").Params(buf.Clone(), jen.Id("depth").Int()).Params(jen.Id("_").Index().Byte(), jen.Err().Error()).Block(
		c.avroDecodeBody(r)...)
	return nil
}

// avroFallible reports whether appending a value of type t can fail: it
// holds an enum or a record.
func avroFallible(t *spec.Type) bool {
	switch t.Kind {
	case spec.KindEnum, spec.KindRecord:
		return true
	case spec.KindOptional, spec.KindList, spec.KindMap:
		return avroFallible(t.Elem)
	}
	return false
}

// avroEncodeBody is the body of AppendAvro: the fields in schema (id)
// order.
func (c *genCtx) avroEncodeBody(r *spec.Record) []jen.Code {
	body := []jen.Code{jen.If(jen.Id("r").Op("==").Nil()).Block(jen.Return(jen.Id("b"), jen.Qual(pathSerdes, "ErrAvroNil")))}
	fallible := false
	for _, fl := range r.Fields {
		fallible = fallible || avroFallible(fl.Type)
	}
	if fallible {
		body = append(body, jen.Var().Err().Error())
	}
	for _, fl := range r.Fields {
		body = append(body, c.avroAppend(fl.Type, field("r", c.fieldNames[fl]), 0)...)
	}
	return append(body, jen.Return(jen.Id("b"), jen.Nil()))
}

// avroTry is `if b, err = call; err != nil { return b, err }`.
func avroTry(call jen.Code) jen.Code {
	return jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Add(call), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("b"), jen.Err()))
}

// avroAppend returns statements appending v, of Go type goType(t), in
// the Avro encoding; depth makes loop variables unique.
func (c *genCtx) avroAppend(t *spec.Type, v expr, depth int) []jen.Code {
	d := strconv.Itoa(depth)
	switch t.Kind {
	case spec.KindEnum:
		return []jen.Code{avroTry(jen.Id(avroEnumAppender(c.enumNames[t.Enum])).Call(jen.Id("b"), v()))}
	case spec.KindRecord:
		return []jen.Code{avroTry(v().Dot("AppendAvro").Call(jen.Id("b")))}
	case spec.KindOptional:
		inner := v
		if !nilable(t.Elem) && t.Elem.Kind != spec.KindRecord {
			inner = deref(v)
		}
		present := append([]jen.Code{jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(2))}, c.avroAppend(t.Elem, inner, depth)...)
		return []jen.Code{jen.If(v().Op("==").Nil()).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(0))).Else().Block(present...)}
	case spec.KindList:
		i := "i" + d
		return []jen.Code{
			jen.If(jen.Len(v()).Op(">").Lit(0)).Block(
				bAssign("AppendAvroLong", jen.Int64().Call(jen.Len(v()))),
				jen.For(jen.Id(i).Op(":=").Range().Add(v())).Block(c.avroAppend(t.Elem, index(v, i), depth+1)...)),
			jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(0)),
		}
	case spec.KindMap:
		kb, k, val := "kb"+d, "k"+d, "v"+d
		body := []jen.Code{bAssign("AppendAvroString", jen.Id(k)), jen.Id(val).Op(":=").Add(v()).Index(jen.Id(k))}
		body = append(body, c.avroAppend(t.Elem, id(val), depth+1)...)
		return []jen.Code{
			jen.If(jen.Len(v()).Op(">").Lit(0)).Block(
				jen.Comment("// Keys in sorted order: equal records encode to equal bytes."),
				jen.Var().Id(kb).Index(jen.Lit(16)).String(),
				bAssign("AppendAvroLong", jen.Int64().Call(jen.Len(v()))),
				jen.For(jen.List(jen.Id("_"), jen.Id(k)).Op(":=").Range().Qual(pathSgimpl, "SortedKeys").Call(v(), jen.Id(kb).Index(jen.Op(":").Lit(0)))).Block(body...)),
			jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(0)),
		}
	}
	return []jen.Code{bAssign("AppendAvro"+primFuncs[t.Kind], v())}
}

// avroDecodeBody is the body of sgDecodeAvro: each field in schema order,
// an error returned at once with the field's name on its path.
func (c *genCtx) avroDecodeBody(r *spec.Record) []jen.Code {
	body := []jen.Code{jen.If(jen.Id("depth").Op(">").Qual(pathSerdes, "MaxDepth")).Block(jen.Return(jen.Id("b"), jen.Qual(pathSerdes, "TooDeep").Call(jen.Id("b"))))}
	w := c.avroWire()
	for _, fl := range r.Fields {
		body = append(body, c.readWire(w, fl.Type, field("r", c.fieldNames[fl]), false)...)
		body = append(body, jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("b"), jen.Qual(pathSerdes, "WrapField").Call(jen.Err(), jen.Lit(fl.Name)))))
	}
	return append(body, jen.Return(jen.Id("b"), jen.Nil()))
}

// avroWire is the Avro decoder's wire: an optional value is the union
// ["null", T], its branch index a byte.
func (c *genCtx) avroWire() *wire {
	return &wire{
		decode:     "sgDecodeAvro",
		isNull:     func() jen.Code { return jen.Qual(pathSerdes, "IsAvroNull").Call(jen.Id("b")) },
		skipNull:   func() jen.Code { return jen.Id("b").Op("=").Id("b").Index(jen.Lit(1).Op(":")) },
		present:    func() jen.Code { return jen.Qual(pathSerdes, "ReadAvroPresent").Call(jen.Id("b")) },
		recordList: jen.Qual(pathSgimpl, "ReadAvroRecordList"), list: jen.Qual(pathSgimpl, "ReadAvroList"),
		mapOf: jen.Qual(pathSgimpl, "ReadAvroMap"),
		prim: func(t *spec.Type) jen.Code {
			if fn, ok := primFuncs[t.Kind]; ok {
				return jen.Qual(pathSerdes, "ReadAvro"+fn)
			}
			if t.Kind == spec.KindEnum {
				return jen.Id(avroEnumReader(c.enumNames[t.Enum]))
			}
			return nil
		},
	}
}

// genAvroTests writes streamgen_avro_test.go: an Avro round trip of every
// record the avro topics carry, with the samples of the record tests, and
// a fuzz target per decoder, Fuzz<Record>AvroDecode.
func (c *genCtx) genAvroTests(records []*spec.Record) {
	f := c.newFile(avroTestFile)
	f.ImportName(pathSerdestest, "serdestest")
	var calls []jen.Code
	for _, r := range records {
		calls = append(calls, jen.Qual(pathSerdestest, "AvroRoundTrip").Call(jen.Id("t"), jen.Id(c.recordNames[r]).Values(), jen.Id(sampleName(c, r)).Call(jen.Lit(0))))
	}
	f.Comment("// TestStreamgenAvroRoundTrip checks the Avro codec of every record an avro")
	f.Comment("// topic carries (serdestest.AvroRoundTrip).")
	f.Func().Id("TestStreamgenAvroRoundTrip").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(calls...)
	f.Comment("// Each Fuzz<Record>AvroDecode fuzzes the Avro decoder of its record")
	f.Comment("// (serdestest.FuzzAvroDecode).")
	for _, r := range records {
		name := c.recordNames[r]
		f.Line()
		f.Func().Id("Fuzz" + name + "AvroDecode").Params(jen.Id("f").Op("*").Qual("testing", "F")).Block(
			jen.Qual(pathSerdestest, "FuzzAvroDecode").Call(jen.Id("f"), jen.Id(name).Values(), jen.Id(sampleName(c, r)).Call(jen.Lit(0))))
	}
}
