package gen

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/streamgen/streamgen/spec"
)

// pathSerdestest holds the bodies of the generated record tests.
const pathSerdestest = pathSerdes + "/serdestest"

// generateRecordTests writes streamgen_records_test.go: a sample value per
// record, then a round-trip test, a fuzz target for each decoder, and
// marshal and unmarshal benchmarks, each a call per record into
// serdes/serdestest, which holds their bodies. They ship with the user's
// package so its serdes are tested, fuzzed and measured where they are
// used. Fuzz targets stay one function per record, Fuzz<Record>Decode,
// because `go test -fuzz` runs one target at a time.
func generateRecordTests(c *genCtx) error {
	if c.cfg.OmitTests || len(c.prog.Records) == 0 {
		return nil
	}
	f := c.newFile(recordsTestFile)
	f.ImportName(pathSerdestest, "serdestest")
	if c.samplesNeedPtr() {
		f.Comment("// streamgenPtr returns a pointer to a copy of v, for optional sample fields.")
		f.Func().Id("streamgenPtr").Types(jen.Id("T").Any()).Params(jen.Id("v").Id("T")).Op("*").Id("T").Block(jen.Return(jen.Op("&").Id("v")))
	}
	f.Comment("// Each streamgenSample<Record> sets every field of the record it returns to a")
	f.Comment("// distinct non-zero value, so a decoder that drops or swaps a field fails; depth")
	f.Comment("// stops recursive schemas from nesting forever.")
	for _, r := range c.prog.Records {
		f.Line()
		c.genSample(f, r)
	}
	perRecord := func(fn string, arg string, withZero bool) []jen.Code {
		var calls []jen.Code
		for _, r := range c.prog.Records {
			args := []jen.Code{jen.Id(arg)}
			if withZero {
				args = append(args, jen.Id(c.recordNames[r]).Values())
			}
			args = append(args, jen.Id(sampleName(c, r)).Call(jen.Lit(0)))
			calls = append(calls, jen.Qual(pathSerdestest, fn).Call(args...))
		}
		return calls
	}
	f.Comment("// TestStreamgenRoundTrip checks the serde of every record (serdestest.RoundTrip): a")
	f.Comment("// zero and a sample value decode to what was encoded and re-encode to the same bytes,")
	f.Comment("// and every truncation of their encoding fails with an error instead of a panic.")
	f.Func().Id("TestStreamgenRoundTrip").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(perRecord("RoundTrip", "t", true)...)
	f.Comment("// Each Fuzz<Record>Decode fuzzes the decoder of its record (serdestest.FuzzDecode).")
	for _, r := range c.prog.Records {
		name := c.recordNames[r]
		f.Line()
		f.Func().Id("Fuzz" + name + "Decode").Params(jen.Id("f").Op("*").Qual("testing", "F")).Block(
			jen.Qual(pathSerdestest, "FuzzDecode").Call(jen.Id("f"), jen.Id(name).Values(), jen.Id(sampleName(c, r)).Call(jen.Lit(0))))
	}
	f.Comment("// BenchmarkStreamgenMarshal measures AppendMsg of each record's sample into a reused")
	f.Comment("// buffer (0 allocs).")
	f.Func().Id("BenchmarkStreamgenMarshal").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(perRecord("BenchmarkMarshal", "b", false)...)
	f.Comment("// BenchmarkStreamgenUnmarshal measures UnmarshalMsg of each record's sample.")
	f.Func().Id("BenchmarkStreamgenUnmarshal").Params(jen.Id("b").Op("*").Qual("testing", "B")).Block(perRecord("BenchmarkUnmarshal", "b", false)...)
	return nil
}

// samplesNeedPtr reports whether a sample sets an optional scalar, enum or
// record, which takes streamgenPtr.
func (c *genCtx) samplesNeedPtr() bool {
	var needs func(t *spec.Type) bool
	needs = func(t *spec.Type) bool {
		switch t.Kind {
		case spec.KindOptional:
			return !nilable(t.Elem) || needs(t.Elem)
		case spec.KindList, spec.KindMap:
			return needs(t.Elem)
		}
		return false
	}
	for _, r := range c.prog.Records {
		for _, fl := range r.Fields {
			if needs(fl.Type) {
				return true
			}
		}
	}
	return false
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
	var widths []int
	for _, d := range direct {
		widths = append(widths, len(fmt.Sprintf("%#v", d)))
	}
	direct = rows(direct, widths)
	body := []jen.Code{jen.Return(jen.Id(name).Values(direct...))}
	if len(guarded) > 0 {
		body = []jen.Code{
			jen.Id("v").Op(":=").Id(name).Values(direct...),
			jen.If(jen.Id("depth").Op("<").Lit(2)).Block(guarded...),
			jen.Return(jen.Id("v")),
		}
	}
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

// genFormatTests writes the tests of a format's generated codecs into
// file: TestStreamgen<F>RoundTrip, calling serdestest.<F>RoundTrip on the
// zero value and the sample of every record, and a fuzz target per
// decoder, Fuzz<Record><F>Decode, calling serdestest.Fuzz<F>Decode,
// mirroring the msgpack Fuzz<Record>Decode. F is the format's name in
// those identifiers, word its name in prose, doc the two lines saying
// what the round trip checks.
func (c *genCtx) genFormatTests(file, F, word string, records []*spec.Record, doc ...string) {
	f := c.newFile(file)
	f.ImportName(pathSerdestest, "serdestest")
	var calls []jen.Code
	for _, r := range records {
		calls = append(calls, jen.Qual(pathSerdestest, F+"RoundTrip").Call(jen.Id("t"), jen.Id(c.recordNames[r]).Values(), jen.Id(sampleName(c, r)).Call(jen.Lit(0))))
	}
	test := "TestStreamgen" + F + "RoundTrip"
	f.Comment("// " + test + " " + doc[0])
	f.Comment("// " + doc[1])
	f.Func().Id(test).Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(calls...)
	f.Comment("// Each Fuzz<Record>" + F + "Decode fuzzes the " + word + " decoder of its record")
	f.Comment("// (serdestest.Fuzz" + F + "Decode).")
	for _, r := range records {
		name := c.recordNames[r]
		f.Line()
		f.Func().Id("Fuzz" + name + F + "Decode").Params(jen.Id("f").Op("*").Qual("testing", "F")).Block(
			jen.Qual(pathSerdestest, "Fuzz"+F+"Decode").Call(jen.Id("f"), jen.Id(name).Values(), jen.Id(sampleName(c, r)).Call(jen.Lit(0))))
	}
}
