package gen

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/streamgen/streamgen/spec"
)

// generateRecordTests writes streamgen_records_test.go: for every record a
// round-trip test over a zero and a fully populated value, a fuzz target for
// its decoder, and marshal and unmarshal benchmarks. They ship with the
// user's package so its serdes are tested, fuzzed and measured where they
// are used. The tests compare with
// reflect.DeepEqual rather than go-cmp so the user's module needs no extra
// dependency.
func generateRecordTests(c *genCtx) error {
	if c.cfg.OmitTests || len(c.prog.Records) == 0 {
		return nil
	}
	f := c.newFile(recordsTestFile)
	f.Comment("// streamgenPtr returns a pointer to a copy of v, for optional sample fields.")
	f.Func().Id("streamgenPtr").Types(jen.Id("T").Any()).Params(jen.Id("v").Id("T")).Op("*").Id("T").Block(jen.Return(jen.Op("&").Id("v")))
	for _, r := range c.prog.Records {
		c.genSample(f, r)
		c.genRoundTripTest(f, r)
		c.genFuzz(f, r)
		c.genBenchmarks(f, r)
	}
	return nil
}

// containsRecord reports whether t reaches a record through an optional,
// list or map: such fields can recurse, so samples fill them only near the
// top.
func containsRecord(t *spec.Type) bool {
	switch t.Kind {
	case spec.KindOptional, spec.KindList, spec.KindMap:
		return t.Elem.Kind == spec.KindRecord || containsRecord(t.Elem)
	}
	return false
}

func sampleName(c *genCtx, r *spec.Record) string { return "streamgenSample" + c.recordNames[r] }

func (c *genCtx) genSample(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	var direct []jen.Code
	var guarded []jen.Code
	for _, fl := range r.Fields {
		v := c.sampleValue(fl.Type, fl.ID*10)
		if containsRecord(fl.Type) {
			guarded = append(guarded, jen.Id("v").Dot(c.fieldNames[fl]).Op("=").Add(v))
		} else {
			direct = append(direct, jen.Id(c.fieldNames[fl]).Op(":").Add(v))
		}
	}
	body := []jen.Code{jen.Id("v").Op(":=").Id(name).Values(direct...)}
	if len(guarded) > 0 {
		body = append(body, jen.If(jen.Id("depth").Op("<").Lit(2)).Block(guarded...))
	}
	body = append(body, jen.Return(jen.Id("v")))
	f.Commentf("// %s returns a %s with every field set to a distinct non-zero value;", sampleName(c, r), name)
	f.Comment("// depth stops recursive schemas from nesting forever.")
	f.Func().Id(sampleName(c, r)).Params(jen.Id("depth").Int()).Id(name).Block(body...)
}

// sampleValue is a non-zero value of Go type goType(t). seed makes values
// differ between fields, so a decoder that swaps fields fails the test.
func (c *genCtx) sampleValue(t *spec.Type, seed int) jen.Code {
	s := strconv.Itoa(seed)
	switch t.Kind {
	case spec.KindString:
		return jen.Lit("s" + s + "-héllo")
	case spec.KindBytes:
		return jen.Index().Byte().Call(jen.Lit("b" + s))
	case spec.KindBool:
		return jen.True()
	case spec.KindInt32:
		return jen.Lit(-(seed*1000 + 7))
	case spec.KindInt64:
		return jen.Id(strconv.FormatInt(1<<40+int64(seed), 10))
	case spec.KindUint32:
		return jen.Id(strconv.FormatUint(4000000000+uint64(seed), 10))
	case spec.KindUint64:
		return jen.Id(strconv.FormatUint(1<<63+uint64(seed), 10))
	case spec.KindFloat32:
		return jen.Id(s + ".5")
	case spec.KindFloat64:
		return jen.Id("-" + s + ".25")
	case spec.KindTimestamp:
		return jen.Qual("time", "UnixMilli").Call(jen.Id(strconv.FormatInt(1700000000000+int64(seed), 10))).Dot("UTC").Call()
	case spec.KindDuration:
		return jen.Id(s).Op("*").Qual("time", "Second")
	case spec.KindEnum:
		if n := len(t.Enum.Values); n > 0 {
			return jen.Id(c.valueNames[t.Enum.Values[n-1]])
		}
		return jen.Id(c.enumNames[t.Enum]).Call(jen.Lit(seed))
	case spec.KindRecord:
		return jen.Id(sampleName(c, t.Record)).Call(jen.Id("depth").Op("+").Lit(1))
	case spec.KindOptional:
		switch {
		case nilable(t.Elem):
			return c.sampleValue(t.Elem, seed)
		case t.Elem.Kind == spec.KindRecord:
			return jen.Id("streamgenPtr").Call(c.sampleValue(t.Elem, seed))
		}
		return jen.Id("streamgenPtr").Types(c.goType(t.Elem)).Call(c.sampleValue(t.Elem, seed))
	case spec.KindList:
		second := c.sampleValue(t.Elem, seed+1)
		if t.Elem.Kind == spec.KindOptional && !nilable(t.Elem.Elem) {
			second = jen.Nil() // nil elements must survive too
		}
		return c.goType(t).Values(c.sampleValue(t.Elem, seed), second)
	case spec.KindMap:
		return c.goType(t).Values(jen.Dict{
			jen.Lit("a"):  c.sampleValue(t.Elem, seed),
			jen.Lit("eu"): c.sampleValue(t.Elem, seed+1),
		})
	}
	panic(fmt.Sprintf("gen: sampleValue of %v", t.Kind))
}

func (c *genCtx) genRoundTripTest(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	fatal := func(format string, args ...jen.Code) jen.Code {
		return jen.Id("t").Dot("Fatalf").Call(append([]jen.Code{jen.Lit(format)}, args...)...)
	}
	f.Commentf("// TestRoundTrip%s checks that a zero and a fully populated %s decode to", name, name)
	f.Comment("// what was encoded, re-encode to the same bytes, and that every truncation of")
	f.Comment("// the encoding fails with an error instead of a panic.")
	f.Func().Id("TestRoundTrip"+name).Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.Id("cases").Op(":=").Index().Id(name).Values(jen.Values(), jen.Id(sampleName(c, r)).Call(jen.Lit(0))),
		jen.For(jen.Id("i").Op(":=").Range().Id("cases")).Block(
			jen.Id("want").Op(":=").Op("&").Id("cases").Index(jen.Id("i")),
			jen.Id("b").Op(":=").Id("want").Dot("AppendMsg").Call(jen.Nil()),
			jen.Var().Id("got").Id(name),
			jen.List(jen.Id("rest"), jen.Err()).Op(":=").Id("got").Dot("UnmarshalMsg").Call(jen.Id("b")),
			jen.If(jen.Err().Op("!=").Nil()).Block(fatal("case %d: UnmarshalMsg: %v", jen.Id("i"), jen.Err())),
			jen.If(jen.Len(jen.Id("rest")).Op("!=").Lit(0)).Block(fatal("case %d: %d bytes left over", jen.Id("i"), jen.Len(jen.Id("rest")))),
			jen.If(jen.Op("!").Qual("reflect", "DeepEqual").Call(jen.Op("&").Id("got"), jen.Id("want"))).Block(
				fatal("case %d: round trip changed the record:\n got %+v\nwant %+v", jen.Id("i"), jen.Id("got"), jen.Op("*").Id("want"))),
			jen.If(jen.Id("b2").Op(":=").Id("got").Dot("AppendMsg").Call(jen.Nil()), jen.Op("!").Qual("bytes", "Equal").Call(jen.Id("b"), jen.Id("b2"))).Block(
				fatal("case %d: re-encoding differs:\n% x\n% x", jen.Id("i"), jen.Id("b"), jen.Id("b2"))),
			jen.For(jen.Id("n").Op(":=").Lit(0), jen.Id("n").Op("<").Len(jen.Id("b")), jen.Id("n").Op("++")).Block(
				jen.Var().Id("x").Id(name),
				jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("x").Dot("UnmarshalMsg").Call(jen.Id("b").Index(jen.Op(":").Id("n"))), jen.Err().Op("==").Nil()).Block(
					fatal("case %d: truncated to %d of %d bytes, decoded without error", jen.Id("i"), jen.Id("n"), jen.Len(jen.Id("b")))),
			),
		),
	)
}

// genFuzz writes Fuzz<Record>Decode: the decoder reads bytes from the
// network, so no input may make it panic or hang, every failure must be a
// serdes decode error (the runtime routes those to the deserialization
// policy), and whatever it accepts must re-encode to bytes that decode to
// the same encoding again. Encodings are compared rather than values: NaN
// floats are never DeepEqual to themselves.
func (c *genCtx) genFuzz(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	fatal := func(format string, args ...jen.Code) jen.Code {
		return jen.Id("t").Dot("Fatalf").Call(append([]jen.Code{jen.Lit(format)}, args...)...)
	}
	f.Commentf("// Fuzz%sDecode checks that UnmarshalMsg never panics, fails only with a", name)
	f.Comment("// serdes decode error, and that what it accepts re-encodes stably.")
	f.Func().Id("Fuzz"+name+"Decode").Params(jen.Id("f").Op("*").Qual("testing", "F")).Block(
		jen.Id("f").Dot("Add").Call(jen.Parens(jen.Op("&").Id(name).Values()).Dot("AppendMsg").Call(jen.Nil())),
		jen.Id("sample").Op(":=").Id(sampleName(c, r)).Call(jen.Lit(0)),
		jen.Id("f").Dot("Add").Call(jen.Id("sample").Dot("AppendMsg").Call(jen.Nil())),
		jen.Id("f").Dot("Fuzz").Call(jen.Func().Params(jen.Id("t").Op("*").Qual("testing", "T"), jen.Id("b").Index().Byte()).Block(
			jen.Var().Id("v").Id(name),
			jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("v").Dot("UnmarshalMsg").Call(jen.Id("b")), jen.Err().Op("!=").Nil()).Block(
				jen.If(jen.Op("!").Qual("errors", "Is").Call(jen.Err(), jen.Qual(pathSerdes, "ErrDecode"))).Block(
					fatal("error %v is not a serdes decode error", jen.Err())),
				jen.Return(),
			),
			jen.Id("b2").Op(":=").Id("v").Dot("AppendMsg").Call(jen.Nil()),
			jen.Var().Id("v2").Id(name),
			jen.List(jen.Id("rest"), jen.Err()).Op(":=").Id("v2").Dot("UnmarshalMsg").Call(jen.Id("b2")),
			jen.If(jen.Err().Op("!=").Nil().Op("||").Len(jen.Id("rest")).Op("!=").Lit(0)).Block(
				fatal("re-decoding % x (from % x): %v, %d bytes left", jen.Id("b2"), jen.Id("b"), jen.Err(), jen.Len(jen.Id("rest")))),
			jen.If(jen.Id("b3").Op(":=").Id("v2").Dot("AppendMsg").Call(jen.Nil()), jen.Op("!").Qual("bytes", "Equal").Call(jen.Id("b2"), jen.Id("b3"))).Block(
				fatal("encoding is not stable:\n% x\n% x", jen.Id("b2"), jen.Id("b3"))),
		)),
	)
}

func (c *genCtx) genBenchmarks(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	setup := []jen.Code{
		jen.Id("v").Op(":=").Id(sampleName(c, r)).Call(jen.Lit(0)),
		jen.Id("buf").Op(":=").Id("v").Dot("AppendMsg").Call(jen.Nil()),
		jen.Id("b").Dot("SetBytes").Call(jen.Int64().Call(jen.Len(jen.Id("buf")))),
		jen.Id("b").Dot("ReportAllocs").Call(),
	}
	f.Commentf("// BenchmarkMarshal%s measures AppendMsg into a reused buffer (0 allocs).", name)
	f.Func().Id("BenchmarkMarshal" + name).Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(append(setup,
		jen.For(jen.Id("b").Dot("Loop").Call()).Block(
			jen.Id("buf").Op("=").Id("v").Dot("AppendMsg").Call(jen.Id("buf").Index(jen.Op(":").Lit(0))),
		),
	)...)
	f.Commentf("// BenchmarkUnmarshal%s measures UnmarshalMsg of a fully populated %s.", name, name)
	f.Func().Id("BenchmarkUnmarshal" + name).Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(append(setup[:len(setup):len(setup)],
		jen.Var().Id("out").Id(name),
		jen.For(jen.Id("b").Dot("Loop").Call()).Block(
			jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("out").Dot("UnmarshalMsg").Call(jen.Id("buf")), jen.Err().Op("!=").Nil()).Block(
				jen.Id("b").Dot("Fatal").Call(jen.Err()),
			),
		),
	)...)
}
