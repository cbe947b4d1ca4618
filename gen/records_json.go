package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// The json format (docs/formats.md): for every record and enum a topic
// with key_format or value_format json carries, directly or nested,
// streamgen_json.go holds generated encoders and decoders that call the
// JSON primitives of serdes, with no reflection. Only those records get
// them: a spec without JSON topics generates exactly what it did before,
// and a record's JSON methods are code to read and fuzz only where a
// topic needs them.

// Names of the files the json step writes.
const (
	jsonFile     = "streamgen_json.go"
	jsonTestFile = "streamgen_json_test.go"
)

// jsonTypes are the records and enums of JSON topic sides, in spec order.
type jsonTypes struct {
	records []*spec.Record
	enums   []*spec.Enum
}

// jsonUse collects the records and enums the JSON topics carry.
func jsonUse(prog *spec.Program) jsonTypes { return formatUse(prog, spec.Format.IsJSON) }

// formatUse collects the records and enums the topic sides whose format
// is one of carry, directly or nested, in spec order.
func formatUse(prog *spec.Program, of func(spec.Format) bool) jsonTypes {
	recs, enums := map[*spec.Record]bool{}, map[*spec.Enum]bool{}
	var walk func(t *spec.Type)
	walk = func(t *spec.Type) {
		switch {
		case t == nil:
		case t.Kind == spec.KindRecord && !recs[t.Record]:
			recs[t.Record] = true
			for _, f := range t.Record.Fields {
				walk(f.Type)
			}
		case t.Kind == spec.KindEnum:
			enums[t.Enum] = true
		default:
			walk(t.Elem)
		}
	}
	for _, t := range prog.Topics {
		if of(t.KeyFormat) {
			walk(t.Key)
		}
		if of(t.ValueFormat) {
			walk(t.Value)
		}
	}
	var u jsonTypes
	for _, r := range prog.Records {
		if recs[r] {
			u.records = append(u.records, r)
		}
	}
	for _, e := range prog.Enums {
		if enums[e] {
			u.enums = append(u.enums, e)
		}
	}
	return u
}

// generateJSON is the generator step writing streamgen_json.go (and its
// tests) when the spec has JSON topics.
func generateJSON(c *genCtx) error {
	u := jsonUse(c.prog)
	if len(u.records) == 0 && len(u.enums) == 0 {
		return nil
	}
	f := c.newFile(jsonFile)
	for _, e := range u.enums {
		c.genJSONEnum(f, e)
	}
	for _, r := range u.records {
		c.genJSONRecord(f, r)
	}
	if !c.cfg.OmitTests && len(u.records) > 0 {
		c.genJSONTests(u.records)
	}
	return nil
}

// jsonLit is s as a JSON string, for keys and enum names written as
// constants: escaped at generation, never at run time.
func jsonLit(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func jsonEnumAppender(name string) string { return "sgAppendJSON" + name }
func jsonEnumReader(name string) string   { return "sgReadJSON" + name }

// genJSONEnum writes an enum's JSON appender (its name) and reader.
func (c *genCtx) genJSONEnum(f *jen.File, e *spec.Enum) {
	name := c.enumNames[e]
	app, read := jsonEnumAppender(name), jsonEnumReader(name)
	c.pkgScope.reserve(&c.diags, app, fmt.Sprintf("JSON appender of enum %q", e.Name), e.Pos)
	c.pkgScope.reserve(&c.diags, read, fmt.Sprintf("JSON reader of enum %q", e.Name), e.Pos)
	var enc, dec []jen.Code
	for _, v := range e.Values {
		enc = append(enc, jen.Case(jen.Id(c.valueNames[v])).Block(jen.Return(jen.Append(jen.Id("b"), jen.Lit(jsonLit(v.Name)).Op("...")))))
		dec = append(dec, jen.Case(jen.Lit(v.Name)).Block(jen.Return(jen.Id(c.valueNames[v]), jen.Id("rest"), jen.Nil())))
	}
	f.Line()
	f.Commentf("// %s appends the name of v as a JSON string, or its number for a value", app)
	f.Comment("// the schema does not declare (kept from a newer writer).")
	f.Func().Id(app).Params(jen.Id("b").Index().Byte(), jen.Id("v").Id(name)).Index().Byte().Block(
		jen.Switch(jen.Id("v")).Block(enc...),
		jen.Return(jen.Qual(pathSerdes, "AppendJSONInt32").Call(jen.Id("b"), jen.Int32().Call(jen.Id("v")))),
	)
	f.Line()
	f.Commentf("// %s reads the name of a value of %s, or its number. A name the", read, name)
	f.Comment("// schema does not declare is an error: it has no number to keep.")
	f.Func().Id(read).Params(jen.Id("b").Index().Byte()).Params(jen.Id(name), jen.Index().Byte(), jen.Error()).Block(
		jen.Var().Id("scratch").Index(jen.Lit(32)).Byte(),
		jen.List(jen.Id("s"), jen.Id("n"), jen.Id("rest"), jen.Err()).Op(":=").Qual(pathSerdes, "ReadJSONEnumName").Call(jen.Id("b"), jen.Id("scratch").Index(jen.Op(":").Lit(0))),
		jen.If(jen.Err().Op("!=").Nil().Op("||").Id("s").Op("==").Nil()).Block(jen.Return(jen.Id(name).Call(jen.Id("n")), jen.Id("rest"), jen.Err())),
		jen.Switch(jen.String().Call(jen.Id("s"))).Block(dec...),
		jen.Return(jen.Lit(0), jen.Id("b"), jen.Qual(pathSerdes, "UnknownEnumName").Call(jen.Id("b"), jen.Lit(e.Name), jen.Id("s"))),
	)
}

// genJSONRecord writes a record's JSON methods.
func (c *genCtx) genJSONRecord(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	recv := jen.Id("r").Op("*").Id(name)
	buf := jen.Id("b").Index().Byte()
	f.Line()
	f.Var().Id("_").Qual(pathSerdes, "JSONRecord").Op("=").Parens(jen.Op("*").Id(name)).Parens(jen.Nil())
	f.Line()
	f.Comment("// AppendJSON appends the record as a JSON object, timestamps as RFC 3339.")
	f.Func().Params(recv.Clone()).Id("AppendJSON").Params(buf.Clone()).Index().Byte().Block(
		jen.Return(jen.Id("r").Dot("AppendJSONWith").Call(jen.Id("b"), jen.Qual(pathSerdes, "JSONOptions").Values())))
	f.Line()
	f.Comment("// AppendJSONWith implements serdes.JSONRecord.")
	f.Func().Params(recv.Clone()).Id("AppendJSONWith").Params(buf.Clone(), jen.Id("o").Qual(pathSerdes, "JSONOptions")).Index().Byte().Block(c.jsonEncodeBody(r)...)
	f.Line()
	f.Comment("// DecodeJSON implements serdes.JSONRecord.")
	f.Func().Params(recv.Clone()).Id("DecodeJSON").Params(buf.Clone()).Error().Block(
		jen.Return(jen.Qual(pathSerdes, "DecodeJSONTop").Call(jen.Id("b"),
			jen.Func().Params(buf.Clone()).Params(jen.Index().Byte(), jen.Error()).Block(
				jen.Return(jen.Id("r").Dot("sgDecodeJSON").Call(jen.Id("b"), jen.Lit(0)))))))
	f.Line()
	f.Comment("// sgDecodeJSON is DecodeJSON for a record nested depth deep, from the start")
	f.Comment("// of b; it returns the bytes after the object.")
	f.Func().Params(recv.Clone()).Id("sgDecodeJSON").Params(buf.Clone(), jen.Id("depth").Int()).Params(jen.Index().Byte(), jen.Error()).Block(
		c.jsonDecodeBody(r)...)
}

// jsonEncodeBody is the body of AppendJSONWith. Fields go in id order.
// The comma before a key is a constant once a required field has been
// written, and decided at run time (serdes.AppendJSONKey) before that.
func (c *genCtx) jsonEncodeBody(r *spec.Record) []jen.Code {
	body := []jen.Code{
		jen.If(jen.Id("r").Op("==").Nil()).Block(jen.Return(jen.Qual(pathSerdes, "AppendJSONNull").Call(jen.Id("b")))),
		jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('{')),
	}
	written, maybe := false, false
	for _, fl := range r.Fields {
		key := jsonLit(fl.JSONName) + ":"
		var keyStmt jen.Code
		switch {
		case written:
			keyStmt = jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(","+key).Op("..."))
		case maybe:
			keyStmt = bAssign("AppendJSONKey", jen.Lit(key))
		default:
			keyStmt = jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(key).Op("..."))
		}
		v := field("r", c.fieldNames[fl])
		if fl.Type.Kind != spec.KindOptional {
			body = append(body, keyStmt)
			body = append(body, c.jsonAppend(fl.Type, v)...)
			written = true
			continue
		}
		inner := v
		if !nilable(fl.Type.Elem) && fl.Type.Elem.Kind != spec.KindRecord {
			inner = deref(v)
		}
		stmts := append([]jen.Code{keyStmt}, c.jsonAppend(fl.Type.Elem, inner)...)
		body = append(body, jen.If(v().Op("!=").Nil()).Block(stmts...))
		maybe = true
	}
	return append(body, jen.Return(jen.Append(jen.Id("b"), jen.LitRune('}'))))
}

// jsonPrim names the serdes JSON function suffix of each scalar kind.
var jsonPrim = map[spec.TypeKind]string{
	spec.KindString: "String", spec.KindBytes: "Bytes", spec.KindBool: "Bool",
	spec.KindInt32: "Int32", spec.KindInt64: "Int64", spec.KindUint32: "Uint32", spec.KindUint64: "Uint64",
	spec.KindFloat32: "Float32", spec.KindFloat64: "Float64", spec.KindDuration: "Duration",
	spec.KindTimestamp: "Timestamp",
}

// jsonAppend returns statements appending v, of Go type goType(t), as
// JSON; o, the options, is in scope.
func (c *genCtx) jsonAppend(t *spec.Type, v expr) []jen.Code {
	switch t.Kind {
	case spec.KindTimestamp:
		return []jen.Code{bAssign("AppendJSONTime", v(), jen.Id("o"))}
	case spec.KindEnum:
		return []jen.Code{jen.Id("b").Op("=").Id(jsonEnumAppender(c.enumNames[t.Enum])).Call(jen.Id("b"), v())}
	case spec.KindRecord:
		return []jen.Code{jen.Id("b").Op("=").Add(v()).Dot("AppendJSONWith").Call(jen.Id("b"), jen.Id("o"))}
	case spec.KindOptional:
		if t.Elem.Kind == spec.KindRecord {
			return c.jsonAppend(t.Elem, v) // a nil *R appends null
		}
		inner := v
		if !nilable(t.Elem) {
			inner = deref(v)
		}
		return []jen.Code{jen.If(v().Op("==").Nil()).Block(bAssign("AppendJSONNull")).Else().Block(c.jsonAppend(t.Elem, inner)...)}
	case spec.KindList:
		if t.Elem.Kind == spec.KindRecord {
			return []jen.Code{implAssign("AppendJSONRecordList", v(), jen.Id("o"))}
		}
		return []jen.Code{implAssign("AppendJSONList", v(), c.jsonAppender(t.Elem))}
	case spec.KindMap:
		return []jen.Code{implAssign("AppendJSONMap", v(), c.jsonAppender(t.Elem))}
	}
	return []jen.Code{bAssign("AppendJSON"+jsonPrim[t.Kind], v())}
}

// implAssign is bAssign for a generated-only helper of sgimpl.
func implAssign(fn string, args ...jen.Code) *jen.Statement {
	return jen.Id("b").Op("=").Qual(pathSgimpl, fn).Call(append([]jen.Code{jen.Id("b")}, args...)...)
}

// jsonAppender is a function of type func([]byte, goType(t)) []byte
// appending a value of type t: a serdes function for scalars, else a
// literal around jsonAppend.
func (c *genCtx) jsonAppender(t *spec.Type) jen.Code {
	if fn, ok := jsonPrim[t.Kind]; ok && t.Kind != spec.KindTimestamp {
		return jen.Qual(pathSerdes, "AppendJSON"+fn)
	}
	if t.Kind == spec.KindEnum {
		return jen.Id(jsonEnumAppender(c.enumNames[t.Enum]))
	}
	body := append(c.jsonAppend(t, id("v")), jen.Return(jen.Id("b")))
	return jen.Func().Params(jen.Id("b").Index().Byte(), jen.Id("v").Add(c.goType(t))).Index().Byte().Block(body...)
}

// jsonDecodeBody is the body of sgDecodeJSON: defaults first, then one
// case per JSON member name; unknown members are skipped.
func (c *genCtx) jsonDecodeBody(r *spec.Record) []jen.Code {
	name := c.recordNames[r]
	cases := c.fieldCases(c.jsonWire(), r, func(fl *spec.Field) jen.Code { return jen.Lit(fl.JSONName) })
	skip := jen.Return(jen.Qual(pathSerdes, "SkipJSON").Call(jen.Id("b")))
	member := jen.Func().Params(jen.Id("key"), jen.Id("b").Index().Byte()).Params(jen.Id("_").Index().Byte(), jen.Err().Error())
	if len(cases) == 0 {
		member = jen.Func().Params(jen.Id("_"), jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(skip)
	} else {
		cases = append(cases, jen.Default().Block(skip))
		member = member.Block(jen.Switch(jen.String().Call(jen.Id("key"))).Block(cases...), jen.Return(jen.Id("b"), jen.Err()))
	}
	return []jen.Code{
		jen.Op("*").Id("r").Op("=").Id(name).Values(c.defaultsLit(r)...),
		jen.Return(jen.Qual(pathSerdes, "ReadJSONObject").Call(jen.Id("b"), jen.Id("depth"), member)),
	}
}

// jsonWire is the JSON decoder's wire.
func (c *genCtx) jsonWire() *wire {
	return &wire{
		decode: "sgDecodeJSON",
		isNull: func() jen.Code { return jen.Qual(pathSerdes, "IsJSONNull").Call(jen.Id("b")) },
		skipNull: func() jen.Code {
			return jen.Id("b").Op("=").Qual(pathSerdes, "SkipJSONSpace").Call(jen.Id("b")).Index(jen.Lit(4).Op(":"))
		},
		recordList: jen.Qual(pathSerdes, "ReadJSONRecordList"), list: jen.Qual(pathSerdes, "ReadJSONList"),
		mapOf: jen.Qual(pathSerdes, "ReadJSONMap"),
		prim: func(t *spec.Type) jen.Code {
			if fn, ok := jsonPrim[t.Kind]; ok {
				return jen.Qual(pathSerdes, "ReadJSON"+fn)
			}
			if t.Kind == spec.KindEnum {
				return jen.Id(jsonEnumReader(c.enumNames[t.Enum]))
			}
			return nil
		},
	}
}

// topicSerde is the serde of one side of a declared topic: the side's
// format when the spec names json, else the default of its type.
func (c *genCtx) topicSerde(t *spec.Topic, key bool, w *spec.Window) *jen.Statement {
	f, ty := t.ValueFormat, t.Value
	if key {
		f, ty = t.KeyFormat, t.Key
	}
	switch f {
	case spec.FormatJSONSchema:
		return c.registrySerde(t, key, c.jsonSchemaCodec(t, ty))
	case spec.FormatProtobuf:
		return c.registrySerde(t, key, c.protobufCodec(ty))
	case spec.FormatAvro:
		return c.registrySerde(t, key, c.avroCodec(ty))
	}
	if f != spec.FormatJSON {
		return c.topoSerde(ty, w)
	}
	opts := jsonOptions(t)
	switch ty.Kind {
	case spec.KindRecord:
		return jen.Qual(pathSerdes, "JSON").Types(jen.Id(c.recordNames[ty.Record])).Call(opts)
	case spec.KindEnum:
		name := c.enumNames[ty.Enum]
		return jen.Qual(pathSerdes, "JSONValue").Call(jen.Id(jsonEnumAppender(name)), jen.Id(jsonEnumReader(name)))
	case spec.KindTimestamp:
		appendFn := "AppendJSONTimestamp"
		if t.JSONTimestamps == spec.JSONEpochMillis {
			appendFn = "AppendJSONTimestampMillis"
		}
		return jen.Qual(pathSerdes, "JSONValue").Call(jen.Qual(pathSerdes, appendFn), jen.Qual(pathSerdes, "ReadJSONTimestamp"))
	}
	fn := jsonPrim[ty.Kind]
	return jen.Qual(pathSerdes, "JSONValue").Call(jen.Qual(pathSerdes, "AppendJSON"+fn), jen.Qual(pathSerdes, "ReadJSON"+fn))
}

// jsonOptions is the serdes.JSONOptions of topic t's JSON encoders.
func jsonOptions(t *spec.Topic) *jen.Statement {
	if t.JSONTimestamps == spec.JSONEpochMillis {
		return jen.Qual(pathSerdes, "JSONOptions").Values(jen.Id("Timestamps").Op(":").Qual(pathSerdes, "JSONEpochMillis"))
	}
	return jen.Qual(pathSerdes, "JSONOptions").Values()
}

// storeSerdes are the serdes of a store's bytes. The store of a table
// read from a topic holds what the source's serdes write
// (sgstream.TableSource encodes with them), so a JSON topic's table keeps
// JSON in its store and changelog, as a Kafka Streams source table keeps
// its source serdes; every other store is in the default format.
func (c *genCtx) storeSerdes(st *spec.Store) (key, value *jen.Statement) {
	for _, t := range c.prog.Topics {
		if t.Store == st {
			return c.topicSerde(t, true, nil), c.topicSerde(t, false, nil)
		}
	}
	return c.topoSerde(st.Key, nil), c.topoSerde(st.Value, nil)
}

// sinkTopic is the topic whose formats a sink's serdes follow: its topic,
// or for a sink choosing its topic per record the candidates' common one.
// Candidates of different formats are reported: one sink has one serde.
func (c *genCtx) sinkTopic(n *spec.Node, candidates []string) *spec.Topic {
	if n.Sink.Topic != nil {
		return n.Sink.Topic
	}
	var first *spec.Topic
	for _, t := range c.prog.Topics {
		if !slices.Contains(candidates, t.Name) {
			continue
		}
		if first == nil {
			first = t
			continue
		}
		if t.KeyFormat != first.KeyFormat || t.ValueFormat != first.ValueFormat || t.JSONTimestamps != first.JSONTimestamps {
			c.diags.add(n.Pos, "to %q: the topics it may choose, %q and %q, have different formats; one sink writes one format, so give them the same key_format, value_format and json_timestamps",
				n.Name, first.Name, t.Name)
			break
		}
	}
	return first
}

// genJSONTests writes streamgen_json_test.go: a JSON round trip of every
// record the JSON topics carry, with the samples of the record tests, and
// a fuzz target per JSON decoder, Fuzz<Record>JSONDecode, mirroring the
// msgpack Fuzz<Record>Decode.
func (c *genCtx) genJSONTests(records []*spec.Record) {
	c.genFormatTests(jsonTestFile, "JSON", "JSON", records,
		"checks the JSON codec of every record a JSON topic", "carries (serdestest.JSONRoundTrip), under both timestamp settings.")
}
