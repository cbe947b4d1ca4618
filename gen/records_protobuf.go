package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// The protobuf format (docs/formats.md "Protobuf"): for every record a
// protobuf topic side carries, directly or nested, streamgen_protobuf.go
// holds a generated proto3 encoder and decoder calling the wire
// primitives of serdes (proto_*.go) and the collection helpers of sgimpl,
// and, for each record on a side, the .proto file it registers
// (<Record>Proto, schema_protobuf.go). The side's serde is
// serdes.Protobuf over them, framed by the registry serde (registry.go).
//
// Encoders leave out fields holding their zero value (proto3's implicit
// presence) but write optional fields whenever they are set and nested
// records always; a nested message goes after a one-byte length that
// serdes.ProtoEndLen fixes. Decoders match fields by tag (number and wire
// type), skip every other field, and merge a repeated singular message
// into the one before, as protobuf does; proto3 has no defaults, so a
// missing field is zero whatever the spec's default says.

// Names of the files the protobuf step writes.
const (
	protobufFile     = "streamgen_protobuf.go"
	protobufTestFile = "streamgen_protobuf_test.go"
)

// protobufConst is the name of the constant holding r's .proto file.
func (c *genCtx) protobufConst(r *spec.Record) string { return c.recordNames[r] + "Proto" }

// protobufCodec is the serdes.SchemaCodec of a protobuf side of type ty
// (a record: the spec allows no other).
func (c *genCtx) protobufCodec(ty *spec.Type) *jen.Statement {
	return jen.Qual(pathSerdes, "Protobuf").Types(jen.Id(c.recordNames[ty.Record])).Call(jen.Id(c.protobufConst(ty.Record)))
}

// protobufUse are the records of protobuf sides (tops) and every record
// they reach (all), in spec order.
func protobufUse(prog *spec.Program) (tops, all []*spec.Record) {
	top, reached := map[*spec.Record]bool{}, map[*spec.Record]bool{}
	for _, t := range prog.Topics {
		for _, key := range []bool{true, false} {
			ty := t.Value
			if key {
				ty = t.Key
			}
			if formatOf(t, key) != spec.FormatProtobuf || ty.Kind != spec.KindRecord {
				continue
			}
			top[ty.Record] = true
			for _, r := range spec.ProtobufFileOf(ty.Record).Records {
				reached[r] = true
			}
		}
	}
	for _, r := range prog.Records {
		if top[r] {
			tops = append(tops, r)
		}
		if reached[r] {
			all = append(all, r)
		}
	}
	return tops, all
}

// generateProtobuf is the generator step writing streamgen_protobuf.go (and
// its tests) when a topic has a protobuf side.
func generateProtobuf(c *genCtx) error {
	tops, all := protobufUse(c.prog)
	if len(all) == 0 {
		return nil
	}
	f := c.newFile(protobufFile)
	for _, r := range tops {
		name := c.protobufConst(r)
		c.pkgScope.reserve(&c.diags, name, fmt.Sprintf(".proto of record %q", r.Name), r.Pos)
		f.Line()
		f.Commentf("// %s is the .proto file of %s, its message first: what a protobuf topic", name, c.recordNames[r])
		f.Comment("// side registers for it (`streamgen schema protobuf` prints every record's message).")
		f.Const().Id(name).Op("=").Lit(RecordProto(r, c.prog.Package))
	}
	for _, r := range all {
		c.genProtoRecord(f, r)
	}
	if !c.cfg.OmitTests {
		c.genProtoTests(all)
	}
	return nil
}

// genProtoRecord writes a record's protobuf methods.
func (c *genCtx) genProtoRecord(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	recv := jen.Id("r").Op("*").Id(name)
	buf := jen.Id("b").Index().Byte()
	f.Line()
	f.Var().Id("_").Qual(pathSerdes, "ProtoRecord").Op("=").Parens(jen.Op("*").Id(name)).Parens(jen.Nil())
	f.Line()
	f.Comment("// AppendProto implements serdes.ProtoRecord.")
	f.Func().Params(recv.Clone()).Id("AppendProto").Params(buf.Clone()).Index().Byte().Block(c.protoEncodeBody(r)...)
	f.Line()
	f.Comment("// sgAppendProtoLen appends the record as the value of a message field:")
	f.Comment("// its length, then its fields.")
	f.Func().Params(recv.Clone()).Id("sgAppendProtoLen").Params(buf.Clone()).Index().Byte().Block(
		jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(0)),
		jen.Id("at").Op(":=").Len(jen.Id("b")),
		jen.Return(jen.Qual(pathSerdes, "ProtoEndLen").Call(jen.Id("r").Dot("AppendProto").Call(jen.Id("b")), jen.Id("at"))))
	f.Line()
	f.Comment("// DecodeProto implements serdes.ProtoRecord.")
	f.Func().Params(recv.Clone()).Id("DecodeProto").Params(buf.Clone()).Error().Block(
		jen.Op("*").Id("r").Op("=").Id(name).Values(),
		jen.Return(jen.Qual(pathSerdes, "Locate").Call(jen.Id("r").Dot("sgMergeProto").Call(jen.Id("b"), jen.Lit(0)), jen.Id("b"))))
	f.Line()
	f.Comment("// sgMergeProto merges the fields of the message b into the record, nested")
	f.Comment("// depth deep.")
	f.Func().Params(recv.Clone()).Id("sgMergeProto").Params(buf.Clone(), jen.Id("depth").Int()).Error().Block(c.protoDecodeBody(r)...)
}

// protoTag is the tag of field number n with wire type wt, as the bytes
// of its varint.
func protoTag(n, wt int) []jen.Code {
	v := uint64(n)<<3 | uint64(wt)
	var out []jen.Code
	for v >= 0x80 {
		out = append(out, protoHex(v&0x7f|0x80))
		v >>= 7
	}
	return append(out, protoHex(v))
}

// protoTagNum is the tag of field number n with wire type wt as a number.
func protoTagNum(n, wt int) jen.Code { return protoHex(uint64(n)<<3 | uint64(wt)) }

// protoHex is v as a hexadecimal literal, as tags are read in protobuf.
func protoHex(v uint64) jen.Code { return jen.Id(fmt.Sprintf("0x%02x", v)) }

// appendTag is b with the tag appended.
func appendTag(tag []jen.Code) *jen.Statement {
	return jen.Append(append([]jen.Code{jen.Id("b")}, tag...)...)
}

// protoWire is the wire type of a value of type t (a scalar, an enum or
// a record).
func protoWire(t *spec.Type) int {
	switch t.Kind {
	case spec.KindFloat32:
		return 5
	case spec.KindFloat64:
		return 1
	case spec.KindBool, spec.KindInt32, spec.KindInt64, spec.KindUint32, spec.KindUint64, spec.KindEnum:
		return 0
	}
	return 2
}

// protoPacked reports whether a list of t is packed (numbers, bools and
// enums).
func protoPacked(t *spec.Type) bool { return protoWire(t) != 2 }

// protoFixedSize is the byte size of a fixed32 or fixed64 value of t, 0
// for varints.
func protoFixedSize(t *spec.Type) int {
	switch protoWire(t) {
	case 5:
		return 4
	case 1:
		return 8
	}
	return 0
}

// protoFunc is the serdes function (prefix Append or Read) of a scalar or
// enum value of type t.
func (c *genCtx) protoFunc(prefix string, t *spec.Type) jen.Code {
	switch t.Kind {
	case spec.KindEnum:
		return jen.Qual(pathSerdes, prefix+"ProtoEnum").Index(jen.Id(c.enumNames[t.Enum]))
	case spec.KindTimestamp:
		return jen.Qual(pathSerdes, prefix+"ProtoTimestamp")
	case spec.KindDuration:
		return jen.Qual(pathSerdes, prefix+"ProtoDuration")
	}
	return jen.Qual(pathSerdes, prefix+"Proto"+primFuncs[t.Kind])
}

// protoNonZero is the condition that field v of type t does not hold its
// zero value (for optional fields: is set), without which proto3 leaves
// it out; nil for types always written (records).
func protoNonZero(t *spec.Type, v expr) jen.Code {
	switch t.Kind {
	case spec.KindString:
		return v().Op("!=").Lit("")
	case spec.KindBytes, spec.KindList, spec.KindMap:
		return jen.Len(v()).Op(">").Lit(0)
	case spec.KindBool:
		return v()
	case spec.KindFloat32:
		return jen.Qual("math", "Float32bits").Call(v()).Op("!=").Lit(0)
	case spec.KindFloat64:
		return jen.Qual("math", "Float64bits").Call(v()).Op("!=").Lit(0)
	case spec.KindTimestamp:
		return jen.Op("!").Add(v()).Dot("IsZero").Call()
	case spec.KindRecord:
		return nil
	case spec.KindOptional:
		return v().Op("!=").Nil()
	}
	return v().Op("!=").Lit(0)
}

// protoEncodeBody is the body of AppendProto: the fields in id order.
func (c *genCtx) protoEncodeBody(r *spec.Record) []jen.Code {
	if len(r.Fields) == 0 {
		return []jen.Code{jen.Return(jen.Id("b"))}
	}
	body := []jen.Code{jen.If(jen.Id("r").Op("==").Nil()).Block(jen.Return(jen.Id("b")))}
	for _, fl := range r.Fields {
		v := field("r", c.fieldNames[fl])
		stmts := c.protoAppendField(fl, v)
		if cond := protoNonZero(fl.Type, v); cond != nil {
			body = append(body, jen.If(cond).Block(stmts...))
		} else {
			body = append(body, stmts...)
		}
	}
	return append(body, jen.Return(jen.Id("b")))
}

// protoAppendField returns statements appending field fl, whose value is
// v (known to be set, or not zero).
func (c *genCtx) protoAppendField(fl *spec.Field, v expr) []jen.Code {
	t := fl.Type
	switch t.Kind {
	case spec.KindOptional:
		if !nilable(t.Elem) && t.Elem.Kind != spec.KindRecord {
			v = deref(v)
		}
		return c.protoAppendValue(fl.ID, t.Elem, v)
	case spec.KindList:
		e := t.Elem
		switch {
		case protoPacked(e):
			return []jen.Code{jen.Id("b").Op("=").Qual(pathSerdes, "AppendProtoPacked").Call(appendTag(protoTag(fl.ID, 2)), v(), c.protoFunc("Append", e))}
		case e.Kind == spec.KindRecord:
			return []jen.Code{jen.For(jen.Id("i").Op(":=").Range().Add(v())).Block(c.protoAppendValue(fl.ID, e, index(v, "i"))...)}
		}
		return []jen.Code{jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Add(v())).Block(c.protoAppendValue(fl.ID, e, id("e"))...)}
	case spec.KindMap:
		return c.protoAppendMap(fl.ID, t.Elem, v)
	}
	return c.protoAppendValue(fl.ID, t, v)
}

// protoAppendValue returns statements appending a value v of type t (a
// scalar, an enum or a record) as field n.
func (c *genCtx) protoAppendValue(n int, t *spec.Type, v expr) []jen.Code {
	tagged := appendTag(protoTag(n, protoWire(t)))
	switch t.Kind {
	case spec.KindRecord:
		return []jen.Code{jen.Id("b").Op("=").Add(v()).Dot("sgAppendProtoLen").Call(tagged)}
	case spec.KindBool:
		return []jen.Code{jen.Id("b").Op("=").Qual(pathSerdes, "AppendProtoBool").Call(tagged, v())}
	}
	return []jen.Code{jen.Id("b").Op("=").Add(c.protoFunc("Append", t)).Call(tagged, v())}
}

// protoAppendMap returns statements appending map field n, of values of
// type t: through sgimpl.AppendProtoMap for scalars and enums, and a loop
// here for records, which are appended where they are.
func (c *genCtx) protoAppendMap(n int, t *spec.Type, v expr) []jen.Code {
	if t.Kind != spec.KindRecord {
		return []jen.Code{jen.Id("b").Op("=").Qual(pathSgimpl, "AppendProtoMap").Call(jen.Id("b"), protoTagNum(n, 2), v(),
			protoTagNum(2, protoWire(t)), c.protoFunc("Append", t))}
	}
	return []jen.Code{
		jen.Var().Id("keys").Index(jen.Lit(16)).String(),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Qual(pathSgimpl, "SortedKeys").Call(v(), jen.Id("keys").Index(jen.Op(":").Lit(0)))).Block(
			jen.Id("e").Op(":=").Add(v()).Index(jen.Id("k")),
			jen.Id("b").Op("=").Append(append(append([]jen.Code{jen.Id("b")}, protoTag(n, 2)...), jen.Lit(0))...),
			jen.Id("at").Op(":=").Len(jen.Id("b")),
			jen.Id("b").Op("=").Qual(pathSerdes, "AppendProtoString").Call(jen.Append(jen.Id("b"), protoHex(0x0a)), jen.Id("k")),
			jen.Id("b").Op("=").Qual(pathSerdes, "ProtoEndLen").Call(jen.Id("e").Dot("sgAppendProtoLen").Call(jen.Append(jen.Id("b"), protoHex(0x12))), jen.Id("at")),
		),
	}
}

// protoDecodeBody is the body of sgMergeProto: a loop over the fields,
// one case per tag, every other field skipped.
func (c *genCtx) protoDecodeBody(r *spec.Record) []jen.Code {
	var cases []jen.Code
	for _, fl := range r.Fields {
		cases = append(cases, c.protoFieldCases(fl)...)
	}
	cases = append(cases, jen.Default().Block(
		jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Qual(pathSerdes, "SkipProtoField").Call(jen.Id("rest"), jen.Id("tag"), jen.Id("depth")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Err()))))
	return []jen.Code{
		jen.If(jen.Id("depth").Op(">").Qual(pathSerdes, "MaxDepth")).Block(jen.Return(jen.Qual(pathSerdes, "TooDeep").Call(jen.Id("b")))),
		jen.For(jen.Len(jen.Id("b")).Op(">").Lit(0)).Block(
			jen.List(jen.Id("tag"), jen.Id("rest"), jen.Err()).Op(":=").Qual(pathSerdes, "ReadProtoTag").Call(jen.Id("b")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Switch(jen.Id("tag")).Block(cases...),
		),
		jen.Return(jen.Nil()),
	}
}

// protoFieldCases are the cases decoding field fl: one per tag it may
// come with (packed and unpacked for a list of scalars).
func (c *genCtx) protoFieldCases(fl *spec.Field) []jen.Code {
	v := field("r", c.fieldNames[fl])
	wrap := func(err jen.Code) jen.Code {
		return jen.Return(jen.Qual(pathSerdes, "WrapField").Call(err, jen.Lit(fl.Name)))
	}
	// read is a case assigning what call returns to dst and b.
	read := func(wt int, dst jen.Code, call jen.Code) jen.Code {
		return jen.Case(protoTagNum(fl.ID, wt)).Block(
			jen.If(jen.List(dst, jen.Id("b"), jen.Err()).Op("=").Add(call), jen.Err().Op("!=").Nil()).Block(wrap(jen.Err())))
	}
	// msg is a case merging a nested message into the record at dst.
	msg := func(pre []jen.Code, dst jen.Code, err jen.Code) jen.Code {
		stmts := append(pre, jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Qual(pathSerdes, "ReadProtoMsg").Call(jen.Id("rest"), jen.Id("depth"), jen.Add(dst).Dot("sgMergeProto")), jen.Err().Op("!=").Nil()).Block(wrap(err)))
		return jen.Case(protoTagNum(fl.ID, 2)).Block(stmts...)
	}
	t := fl.Type
	switch {
	case t.Kind == spec.KindRecord:
		return []jen.Code{msg(nil, v(), jen.Err())}
	case t.Kind == spec.KindOptional && t.Elem.Kind == spec.KindRecord:
		return []jen.Code{msg([]jen.Code{jen.If(v().Op("==").Nil()).Block(v().Op("=").New(jen.Id(c.recordNames[t.Elem.Record])))}, v(), jen.Err())}
	case t.Kind == spec.KindOptional && t.Elem.Kind == spec.KindBytes:
		return []jen.Code{read(2, v(), jen.Qual(pathSerdes, "ReadProtoBytes").Call(jen.Id("rest")))}
	case t.Kind == spec.KindOptional:
		return []jen.Code{read(protoWire(t.Elem), v(), jen.Qual(pathSgimpl, "ReadPtr").Call(jen.Id("rest"), c.protoFunc("Read", t.Elem)))}
	case t.Kind == spec.KindList && t.Elem.Kind == spec.KindRecord:
		last := v().Index(jen.Len(v()).Op("-").Lit(1))
		grow := v().Op("=").Append(v(), jen.Id(c.recordNames[t.Elem.Record]).Values())
		return []jen.Code{msg([]jen.Code{grow}, last, jen.Qual(pathSerdes, "WrapIndex").Call(jen.Err(), jen.Len(v()).Op("-").Lit(1)))}
	case t.Kind == spec.KindList:
		e := t.Elem
		cases := []jen.Code{read(protoWire(e), v(), jen.Qual(pathSgimpl, "ReadProtoElem").Call(v(), jen.Id("rest"), c.protoFunc("Read", e)))}
		if protoPacked(e) {
			cases = append(cases, read(2, v(), jen.Qual(pathSgimpl, "ReadProtoPacked").Call(v(), jen.Id("rest"), jen.Lit(protoFixedSize(e)), c.protoFunc("Read", e))))
		}
		return cases
	case t.Kind == spec.KindMap:
		return []jen.Code{read(2, v(), jen.Qual(pathSgimpl, "ReadProtoMapEntry").Call(v(), jen.Id("rest"), jen.Id("depth"), protoTagNum(2, protoWire(t.Elem)), c.protoMapValueReader(t.Elem)))}
	}
	return []jen.Code{read(protoWire(t), v(), jen.Add(c.protoFunc("Read", t)).Call(jen.Id("rest")))}
}

// protoMapValueReader reads a map value of type t: the serdes reader of a
// scalar or enum, else a literal merging a nested message into a new
// record.
func (c *genCtx) protoMapValueReader(t *spec.Type) jen.Code {
	if t.Kind != spec.KindRecord {
		return c.protoFunc("Read", t)
	}
	return jen.Func().Params(jen.Id("b").Index().Byte()).Params(jen.Id("v").Id(c.recordNames[t.Record]), jen.Id("_").Index().Byte(), jen.Err().Error()).Block(
		jen.List(jen.Id("b"), jen.Err()).Op("=").Qual(pathSerdes, "ReadProtoMsg").Call(jen.Id("b"), jen.Id("depth"), jen.Id("v").Dot("sgMergeProto")),
		jen.Return(jen.Id("v"), jen.Id("b"), jen.Err()))
}

// genProtoTests writes streamgen_protobuf_test.go: a protobuf round trip
// of every record the protobuf sides carry, with the samples of the record
// tests, and a fuzz target per decoder, Fuzz<Record>ProtoDecode.
func (c *genCtx) genProtoTests(records []*spec.Record) {
	c.genFormatTests(protobufTestFile, "Proto", "protobuf", records,
		"checks the protobuf codec of every record a", "protobuf topic carries (serdestest.ProtoRoundTrip).")
}
