package gen

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dave/jennifer/jen"
	"github.com/streamgen/streamgen/spec"
)

// Go representation of spec types (documented for users in the generated
// code's package and in docs):
//
//	record field of type R       R (a value: a required record is always present)
//	optional<R>                  *R (nil: absent)
//	optional<T>, T scalar/enum   *T
//	optional<list|map|bytes>     the slice or map itself; nil is absent, a
//	                             non-nil empty value is present and empty
//	list<T>                      []T, so list<R> is []R: one allocation for
//	                             all elements instead of one per element
//	map<string,T>                map[string]T
//	enum E                       type E int32, with constants EValue
//
// Pointers therefore mean exactly "optional" inside records. Records used as
// topic keys and values are *R in the topology (see valueType), so a nil
// record there is a tombstone.

// methods every record type has; fields must not take these names.
var recordMethods = []string{"AppendMsg", "UnmarshalMsg", "IsNil", "AppendJSON", "AppendJSONWith", "DecodeJSON", "AppendAvro", "DecodeAvro"}

// assignNames gives every record, enum, enum value and field its Go name and
// reports collisions, so the later steps can assume names are unique.
func assignNames(c *genCtx) error {
	for _, e := range c.prog.Enums {
		name := typeName(e.Name)
		c.enumNames[e] = name
		c.pkgScope.reserve(&c.diags, name, fmt.Sprintf("enum %q", e.Name), e.Pos)
	}
	for _, r := range c.prog.Records {
		name := typeName(r.Name)
		c.recordNames[r] = name
		c.pkgScope.reserve(&c.diags, name, fmt.Sprintf("record %q", r.Name), r.Pos)
		c.pkgScope.reserve(&c.diags, fieldsVar(name), fmt.Sprintf("field table of record %q", r.Name), r.Pos)
	}
	for _, e := range c.prog.Enums {
		numbers := map[int32]string{}
		for _, v := range e.Values {
			what := fmt.Sprintf("enum %q: value %q", e.Name, v.Name)
			if prev, ok := numbers[v.Number]; ok {
				c.diags.add(v.Pos, "%s has number %d, already used by value %q", what, v.Number, prev)
			}
			numbers[v.Number] = v.Name
			vn := GoName(v.Name)
			if vn == "" {
				c.diags.add(v.Pos, "%s has no letters or digits to make a Go name of", what)
				continue
			}
			c.valueNames[v] = c.enumNames[e] + vn
			c.pkgScope.reserve(&c.diags, c.valueNames[v], what, v.Pos)
		}
	}
	for _, r := range c.prog.Records {
		fields := newScope()
		for _, m := range recordMethods {
			fields.reserve(&c.diags, m, "method "+m+" of serdes.Record", spec.Pos{})
		}
		for _, f := range r.Fields {
			what := fmt.Sprintf("record %q: field %q", r.Name, f.Name)
			fn := GoName(f.Name)
			if fn == "" {
				c.diags.add(f.Pos, "%s has no letters or digits to make a Go name of", what)
				continue
			}
			c.fieldNames[f] = fn
			fields.reserve(&c.diags, fn, fmt.Sprintf("%s", what), f.Pos)
		}
	}
	return nil
}

// checkTypes reports field types the Go mapping cannot express, and records
// that contain themselves by value (infinite size: one link must be
// optional, a list or a map).
func checkTypes(c *genCtx) {
	var check func(where string, pos spec.Pos, t *spec.Type)
	check = func(where string, pos spec.Pos, t *spec.Type) {
		switch {
		case t == nil || t.Kind == spec.KindInvalid:
			c.diags.add(pos, "%s: invalid type", where)
		case (t.Kind == spec.KindOptional || t.Kind == spec.KindList || t.Kind == spec.KindMap) && t.Elem == nil:
			c.diags.add(pos, "%s: %s without an element type", where, t.Kind)
		case t.Kind == spec.KindOptional && t.Elem.Kind == spec.KindOptional:
			c.diags.add(pos, "%s: type %q nests optional in optional, which has no Go representation", where, t.String())
		case t.Kind == spec.KindRecord && (t.Record == nil || c.recordNames[t.Record] == ""):
			c.diags.add(pos, "%s: unresolved record type", where)
		case t.Kind == spec.KindEnum && (t.Enum == nil || c.enumNames[t.Enum] == ""):
			c.diags.add(pos, "%s: unresolved enum type", where)
		case t.Elem != nil:
			check(where, pos, t.Elem)
		}
	}
	for _, r := range c.prog.Records {
		for _, f := range r.Fields {
			check(fmt.Sprintf("record %q: field %q", r.Name, f.Name), f.Pos, f.Type)
		}
	}
	// Cycles through required record fields.
	const (
		unvisited = iota
		active
		done
	)
	state := map[*spec.Record]int{}
	var visit func(r *spec.Record)
	visit = func(r *spec.Record) {
		state[r] = active
		for _, f := range r.Fields {
			if f.Type == nil || f.Type.Kind != spec.KindRecord || f.Type.Record == nil {
				continue
			}
			switch state[f.Type.Record] {
			case active:
				c.diags.add(f.Pos, "record %q: field %q makes record %q contain itself; make the field optional<%s>",
					r.Name, f.Name, f.Type.Record.Name, f.Type.Record.Name)
			case unvisited:
				visit(f.Type.Record)
			}
		}
		state[r] = done
	}
	for _, r := range c.prog.Records {
		if state[r] == unvisited {
			visit(r)
		}
	}
}

// nilable reports whether optional<t> is represented by t's own Go type
// (nil meaning absent) rather than by a pointer.
func nilable(t *spec.Type) bool {
	return t.Kind == spec.KindList || t.Kind == spec.KindMap || t.Kind == spec.KindBytes
}

// goType is the Go type of a spec type inside a record (records by value).
func (c *genCtx) goType(t *spec.Type) *jen.Statement {
	switch t.Kind {
	case spec.KindString:
		return jen.String()
	case spec.KindBytes:
		return jen.Index().Byte()
	case spec.KindBool:
		return jen.Bool()
	case spec.KindInt32:
		return jen.Int32()
	case spec.KindInt64:
		return jen.Int64()
	case spec.KindUint32:
		return jen.Uint32()
	case spec.KindUint64:
		return jen.Uint64()
	case spec.KindFloat32:
		return jen.Float32()
	case spec.KindFloat64:
		return jen.Float64()
	case spec.KindTimestamp:
		return jen.Qual("time", "Time")
	case spec.KindDuration:
		return jen.Qual("time", "Duration")
	case spec.KindOptional:
		if nilable(t.Elem) {
			return c.goType(t.Elem)
		}
		return jen.Op("*").Add(c.goType(t.Elem))
	case spec.KindList:
		return jen.Index().Add(c.goType(t.Elem))
	case spec.KindMap:
		return jen.Map(jen.String()).Add(c.goType(t.Elem))
	case spec.KindRecord:
		return jen.Id(c.recordNames[t.Record])
	case spec.KindEnum:
		return jen.Id(c.enumNames[t.Enum])
	}
	panic(fmt.Sprintf("gen: goType of %v", t.Kind)) // checkTypes rejected it
}

// valueType is the Go type of a spec type as a topic or store key or value,
// or a user function parameter: like goType, but a record is *R so that nil
// is a tombstone.
func (c *genCtx) valueType(t *spec.Type) *jen.Statement {
	if t.Kind == spec.KindRecord {
		return jen.Op("*").Id(c.recordNames[t.Record])
	}
	return c.goType(t)
}

// serdeExpr is an expression of type serdes.Serde[valueType(t)] for a topic
// or store key or value of type t: Kafka-compatible primitive serdes,
// serdes.Enum for enums and serdes.Msgpack for records.
func (c *genCtx) serdeExpr(t *spec.Type) (*jen.Statement, error) {
	prim := map[spec.TypeKind]string{
		spec.KindString: "String", spec.KindBytes: "Bytes", spec.KindBool: "Bool",
		spec.KindInt32: "Int32", spec.KindInt64: "Int64", spec.KindUint32: "Uint32", spec.KindUint64: "Uint64",
		spec.KindFloat32: "Float32", spec.KindFloat64: "Float64", spec.KindTimestamp: "Timestamp",
		spec.KindDuration: "Duration",
	}
	if name, ok := prim[t.Kind]; ok {
		return jen.Qual(pathSerdes, name), nil
	}
	switch t.Kind {
	case spec.KindRecord:
		return jen.Qual(pathSerdes, "Msgpack").Types(jen.Id(c.recordNames[t.Record])).Call(), nil
	case spec.KindEnum:
		return jen.Qual(pathSerdes, "Enum").Types(jen.Id(c.enumNames[t.Enum])).Call(), nil
	}
	return nil, fmt.Errorf("no serde for type %q: topic and store keys and values must be primitives, enums or records", t.String())
}

// expr builds a fresh jennifer expression each call: jennifer statements
// are mutable slices, so one must never be reused in two places.
type expr func() *jen.Statement

func id(name string) expr { return func() *jen.Statement { return jen.Id(name) } }

func field(recv, name string) expr {
	return func() *jen.Statement { return jen.Id(recv).Dot(name) }
}

func index(x expr, i string) expr { return func() *jen.Statement { return x().Index(jen.Id(i)) } }

func deref(x expr) expr {
	return func() *jen.Statement { return jen.Op("*").Add(x()) }
}

// primitive reader and writer names in serdes, by kind.
var primFuncs = map[spec.TypeKind]string{
	spec.KindString: "String", spec.KindBytes: "Bytes", spec.KindBool: "Bool",
	spec.KindInt32: "Int32", spec.KindInt64: "Int64", spec.KindUint32: "Uint32", spec.KindUint64: "Uint64",
	spec.KindFloat32: "Float32", spec.KindFloat64: "Float64",
	spec.KindTimestamp: "Timestamp", spec.KindDuration: "Duration",
}

func bAssign(fn string, args ...jen.Code) *jen.Statement {
	return jen.Id("b").Op("=").Qual(pathSerdes, fn).Call(append([]jen.Code{jen.Id("b")}, args...)...)
}

// appendValue returns statements appending v, of Go type goType(t), to b,
// after key (an expression appending the field's key to b) unless key is
// nil. Record values must be addressable (AppendMsg has a pointer
// receiver). depth makes loop variable names unique in nested lists and
// maps.
func (c *genCtx) appendValue(t *spec.Type, v expr, depth int, key jen.Code) []jen.Code {
	buf := key
	if buf == nil {
		buf = jen.Id("b")
	}
	if call := c.appendCall(t, v, buf); call != nil {
		return []jen.Code{jen.Id("b").Op("=").Add(call)}
	}
	var out []jen.Code
	if key != nil {
		out = append(out, jen.Id("b").Op("=").Add(key))
	}
	d := strconv.Itoa(depth)
	switch t.Kind {
	case spec.KindOptional:
		inner := v
		if !nilable(t.Elem) && t.Elem.Kind != spec.KindRecord {
			inner = deref(v)
		}
		return append(out, jen.If(v().Op("==").Nil()).Block(bAssign("AppendNil")).Else().Block(c.appendValue(t.Elem, inner, depth, nil)...))
	case spec.KindList:
		i := "i" + d
		return append(out,
			bAssign("AppendArrayHeader", jen.Len(v())),
			jen.For(jen.Id(i).Op(":=").Range().Add(v())).Block(c.appendValue(t.Elem, index(v, i), depth+1, nil)...),
		)
	case spec.KindMap:
		// Only maps of records and of collections get here: sorted keys,
		// and each value looked up and appended where it is.
		kb, k, val := "kb"+d, "k"+d, "v"+d
		body := []jen.Code{
			bAssign("AppendString", jen.Id(k)),
			jen.Id(val).Op(":=").Add(v()).Index(jen.Id(k)),
		}
		body = append(body, c.appendValue(t.Elem, id(val), depth+1, nil)...)
		return append(out, jen.Block(
			jen.Comment("// Keys in sorted order: equal records encode to equal bytes."),
			jen.Var().Id(kb).Index(jen.Lit(16)).String(),
			bAssign("AppendMapHeader", jen.Len(v())),
			jen.For(jen.List(jen.Id("_"), jen.Id(k)).Op(":=").Range().Qual(pathSgimpl, "SortedKeys").Call(v(), jen.Id(kb).Index(jen.Op(":").Lit(0)))).Block(body...),
		))
	}
	panic(fmt.Sprintf("gen: appendValue of %v", t.Kind))
}

// appendCall is the single call appending v, of type t, to buf, for
// scalars, enums, records, and lists and maps of them (through the
// generic helpers of sgimpl); nil for types that need statements.
func (c *genCtx) appendCall(t *spec.Type, v expr, buf jen.Code) jen.Code {
	switch t.Kind {
	case spec.KindRecord:
		return v().Dot("AppendMsg").Call(buf)
	case spec.KindOptional:
		if t.Elem.Kind == spec.KindRecord {
			return v().Dot("AppendMsg").Call(buf) // nil appends msgpack nil
		}
	case spec.KindList:
		if t.Elem.Kind == spec.KindRecord {
			return jen.Qual(pathSgimpl, "AppendRecordList").Call(buf, v())
		}
		if fn := c.appender(t.Elem); fn != nil {
			return jen.Qual(pathSgimpl, "AppendList").Call(buf, v(), fn)
		}
	case spec.KindMap:
		if fn := c.appender(t.Elem); fn != nil {
			return jen.Qual(pathSgimpl, "AppendMap").Call(buf, v(), fn)
		}
	}
	if fn := c.appender(t); fn != nil {
		return jen.Add(fn).Call(buf, v())
	}
	return nil
}

// appender is the serdes function appending a scalar or enum of type t, or
// nil for other types.
func (c *genCtx) appender(t *spec.Type) jen.Code { return c.primFunc("Append", t) }

// primFunc is the serdes primitive verb+<type> (AppendString, ReadInt64,
// ReadEnum[E], ...) of a scalar or enum of type t, or nil for other types.
func (c *genCtx) primFunc(verb string, t *spec.Type) jen.Code {
	if fn, ok := primFuncs[t.Kind]; ok {
		return jen.Qual(pathSerdes, verb+fn)
	}
	if t.Kind == spec.KindEnum {
		return jen.Qual(pathSerdes, verb+"Enum").Types(jen.Id(c.enumNames[t.Enum]))
	}
	return nil
}

// generateRecords writes streamgen_records.go: the version gate, the enums
// and the record structs with their serdes methods. The file is emitted even
// without records because the package's version gate lives in it.
func generateRecords(c *genCtx) error {
	checkTypes(c)
	if len(c.diags) > 0 {
		return nil
	}
	f := c.newFile(recordsFile)
	versionGate(f)
	for _, e := range c.prog.Enums {
		c.genEnum(f, e)
	}
	for _, r := range c.prog.Records {
		c.genRecord(f, r)
	}
	return nil
}

func (c *genCtx) genEnum(f *jen.File, e *spec.Enum) {
	name := c.enumNames[e]
	f.Line()
	fileDoc(f, e.Doc, fmt.Sprintf("%s is the enum %q of the spec.", name, e.Name), false, "")
	f.Comment("//")
	f.Comment("// On the wire it is its int32 number. Numbers this schema does not declare")
	f.Comment("// (written by a newer schema) are kept as they are.")
	f.Type().Id(name).Int32()
	if len(e.Values) > 0 {
		var defs []jen.Code
		for _, v := range e.Values {
			defs = append(defs, docComment(v.Doc, fmt.Sprintf("%s is %q.", c.valueNames[v], v.Name), false, "")...)
			defs = append(defs, jen.Id(c.valueNames[v]).Id(name).Op("=").Lit(int(v.Number)))
		}
		f.Const().Defs(defs...)
	}
	var cases []jen.Code
	for _, v := range e.Values {
		cases = append(cases, jen.Case(jen.Id(c.valueNames[v])).Block(jen.Return(jen.Lit(v.Name))))
	}
	f.Comment("// String returns the spec name of the value, or " + strconv.Quote(name+"(7)") + " for a number the")
	f.Comment("// schema does not declare.")
	f.Func().Params(jen.Id("e").Id(name)).Id("String").Params().String().Block(
		jen.Switch(jen.Id("e")).Block(cases...),
		jen.Return(jen.Lit(name+"(").Op("+").Qual("strconv", "FormatInt").Call(jen.Int64().Call(jen.Id("e")), jen.Lit(10)).Op("+").Lit(")")),
	)
}

func (c *genCtx) genRecord(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	f.Line()
	fileDoc(f, r.Doc, fmt.Sprintf("%s is the record %q of the spec.", name, r.Name), r.Deprecated,
		fmt.Sprintf("the spec marks record %q deprecated.", r.Name))
	var fields []jen.Code
	for _, fl := range r.Fields {
		fields = append(fields, docComment(fl.Doc, "", fl.Deprecated, fmt.Sprintf("the spec marks field %q deprecated.", fl.Name))...)
		tag := fl.Name
		if fl.Type.Kind == spec.KindOptional {
			tag += ",omitempty"
		}
		fields = append(fields, jen.Id(c.fieldNames[fl]).Add(c.goType(fl.Type)).Tag(map[string]string{"json": tag}))
	}
	f.Type().Id(name).Struct(fields...)
	f.Line()
	f.Var().Id("_").Qual(pathSerdes, "Record").Op("=").Parens(jen.Op("*").Id(name)).Parens(jen.Nil())

	c.genAppendMsg(f, r)
	c.genUnmarshalMsg(f, r)

	f.Comment("// IsNil implements serdes.Record.")
	f.Func().Params(jen.Id("r").Op("*").Id(name)).Id("IsNil").Params().Bool().Block(jen.Return(jen.Id("r").Op("==").Nil()))
}

func (c *genCtx) genAppendMsg(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	required := 0
	var count []jen.Code
	for _, fl := range r.Fields {
		if fl.Type.Kind == spec.KindOptional {
			count = append(count, jen.If(jen.Id("r").Dot(c.fieldNames[fl]).Op("!=").Nil()).Block(jen.Id("n").Op("++")))
		} else {
			required++
		}
	}
	body := []jen.Code{
		jen.If(jen.Id("r").Op("==").Nil()).Block(jen.Return(jen.Qual(pathSerdes, "AppendNil").Call(jen.Id("b")))),
	}
	if len(count) > 0 {
		body = append(body, jen.Id("n").Op(":=").Lit(required))
		body = append(body, count...)
		body = append(body, bAssign("AppendMapHeader", jen.Id("n")))
	} else {
		body = append(body, bAssign("AppendMapHeader", jen.Lit(required)))
	}
	for _, fl := range r.Fields {
		v := field("r", c.fieldNames[fl])
		t := fl.Type
		if t.Kind != spec.KindOptional {
			body = append(body, c.appendField(fl.ID, t, v)...)
			continue
		}
		var inner []jen.Code
		switch {
		case t.Elem.Kind == spec.KindRecord || nilable(t.Elem):
			inner = c.appendField(fl.ID, t.Elem, v)
		default:
			inner = c.appendField(fl.ID, t.Elem, deref(v))
		}
		body = append(body, jen.If(v().Op("!=").Nil()).Block(inner...))
	}
	body = append(body, jen.Return(jen.Id("b")))
	f.Comment("// AppendMsg implements serdes.Record.")
	f.Func().Params(jen.Id("r").Op("*").Id(name)).Id("AppendMsg").Params(jen.Id("b").Index().Byte()).Index().Byte().Block(body...)
}

// appendField returns statements appending the key fid and the value v of
// type t. The key is the buffer the value's append writes to,
// `b = serdes.AppendString(append(b, 1), r.ID)`, so most fields are one line.
func (c *genCtx) appendField(fid int, t *spec.Type, v expr) []jen.Code {
	var key jen.Code
	if fid >= 0 && fid < 128 {
		// IDs below 128 are one byte (a positive fixint).
		key = jen.Append(jen.Id("b"), jen.Lit(fid))
	} else {
		key = jen.Qual(pathSerdes, "AppendUint64").Call(jen.Id("b"), jen.Lit(fid))
	}
	return c.appendValue(t, v, 0, key)
}

// defaultValue is the Go expression of a field's declared default, or nil
// when the field defaults to its zero value.
func (c *genCtx) defaultValue(r *spec.Record, fl *spec.Field) jen.Code {
	if fl.Default == nil {
		return nil
	}
	where := fmt.Sprintf("record %q: field %q", r.Name, fl.Name)
	bad := func() jen.Code {
		c.diags.add(fl.Pos, "%s: default %#v does not fit type %q", where, fl.Default, fl.Type.String())
		return nil
	}
	var i int64
	var u uint64
	isInt, isUint := false, false
	switch v := fl.Default.(type) {
	case int:
		i, isInt = int64(v), true
	case int64:
		i, isInt = v, true
	case uint64:
		u, isUint = v, true
		if v <= math.MaxInt64 {
			i, isInt = int64(v), true
		}
	}
	if isInt && i >= 0 && !isUint {
		u, isUint = uint64(i), true
	}
	switch fl.Type.Kind {
	case spec.KindString:
		if s, ok := fl.Default.(string); ok {
			return jen.Lit(s)
		}
	case spec.KindBytes:
		if s, ok := fl.Default.(string); ok {
			return jen.Index().Byte().Call(jen.Lit(s))
		}
	case spec.KindBool:
		if b, ok := fl.Default.(bool); ok {
			return jen.Lit(b)
		}
	case spec.KindInt32:
		if isInt && i >= math.MinInt32 && i <= math.MaxInt32 {
			return jen.Lit(int(i))
		}
	case spec.KindInt64:
		if isInt {
			return jen.Id(strconv.FormatInt(i, 10))
		}
	case spec.KindUint32:
		if isUint && u <= math.MaxUint32 {
			return jen.Id(strconv.FormatUint(u, 10))
		}
	case spec.KindUint64:
		if isUint {
			return jen.Id(strconv.FormatUint(u, 10))
		}
	case spec.KindFloat32, spec.KindFloat64:
		switch {
		case isInt:
			return jen.Id(strconv.FormatInt(i, 10))
		case isUint:
			return jen.Id(strconv.FormatUint(u, 10))
		}
		if v, ok := fl.Default.(float64); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			if fl.Type.Kind == spec.KindFloat32 && math.Abs(v) > math.MaxFloat32 {
				return bad()
			}
			s := strconv.FormatFloat(v, 'g', -1, 64)
			return jen.Id(s)
		}
	case spec.KindTimestamp:
		if isInt {
			return jen.Qual("time", "UnixMilli").Call(jen.Id(strconv.FormatInt(i, 10))).Dot("UTC").Call()
		}
		if s, ok := fl.Default.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return jen.Qual("time", "UnixMilli").Call(jen.Id(strconv.FormatInt(t.UnixMilli(), 10))).Dot("UTC").Call()
			}
		}
	case spec.KindDuration:
		if isInt {
			return jen.Id(strconv.FormatInt(i, 10)).Op("*").Qual("time", "Millisecond")
		}
		if s, ok := fl.Default.(string); ok {
			if d, err := time.ParseDuration(s); err == nil {
				return jen.Qual("time", "Duration").Call(jen.Id(strconv.FormatInt(int64(d), 10))).Comment(s)
			}
		}
	case spec.KindEnum:
		if s, ok := fl.Default.(string); ok {
			for _, v := range fl.Type.Enum.Values {
				if v.Name == s {
					return jen.Id(c.valueNames[v])
				}
			}
			c.diags.add(fl.Pos, "%s: default %q is not a value of enum %q", where, s, fl.Type.Enum.Name)
			return nil
		}
		if isInt {
			return jen.Id(c.enumNames[fl.Type.Enum]).Call(jen.Lit(int(i)))
		}
	default:
		c.diags.add(fl.Pos, "%s: defaults are not supported for type %q", where, fl.Type.String())
		return nil
	}
	return bad()
}

// genUnmarshalMsg writes the decoder of a record: its field table, and a
// field decode function for sgimpl.DecodeRecord, which holds the loop over
// the map and the error handling common to every record.
func (c *genCtx) genUnmarshalMsg(f *jen.File, r *spec.Record) {
	name := c.recordNames[r]
	f.Comment("// UnmarshalMsg implements serdes.Record.")
	f.Func().Params(jen.Id("r").Op("*").Id(name)).Id("UnmarshalMsg").Params(jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(jen.Id("r").Dot("sgDecode").Call(jen.Id("b"), jen.Lit(0))),
	)

	defaults := c.defaultsLit(r)
	cases := c.fieldCases(c.msgpackWire(), r, func(fl *spec.Field) jen.Code { return jen.Lit(fl.ID) })
	decode := jen.Func().Params(jen.Id("id").Int(), jen.Id("b").Index().Byte()).Params(jen.Id("_").Index().Byte(), jen.Err().Error())
	if len(cases) == 0 {
		decode = jen.Nil() // no field: DecodeRecord skips every entry
	} else {
		decode = decode.Block(jen.Switch(jen.Id("id")).Block(cases...), jen.Return(jen.Id("b"), jen.Err()))
	}
	f.Var().Id(fieldsVar(name)).Op("=").Add(c.fieldTable(r))
	f.Line()
	f.Comment("// sgDecode is UnmarshalMsg for a record nested depth deep.")
	f.Func().Params(jen.Id("r").Op("*").Id(name)).Id("sgDecode").Params(jen.Id("b").Index().Byte(), jen.Id("depth").Int()).Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Op("*").Id("r").Op("=").Id(name).Values(defaults...),
		jen.Return(jen.Qual(pathSgimpl, "DecodeRecord").Call(jen.Id("b"), jen.Id("depth"), jen.Id(fieldsVar(name)), decode)),
	)
}

// fieldsVar names the sgimpl.Fields table of record name.
func fieldsVar(name string) string { return "sg" + name + "Fields" }

// fieldTable is a record's sgimpl.Fields literal, {ID: name, ...}.
func (c *genCtx) fieldTable(r *spec.Record) *jen.Statement {
	var elems []jen.Code
	var widths []int
	for _, fl := range r.Fields {
		elems = append(elems, jen.Lit(fl.ID).Op(":").Lit(fl.Name))
		widths = append(widths, len(fmt.Sprintf("%d: %q", fl.ID, fl.Name)))
	}
	return jen.Qual(pathSgimpl, "Fields").Values(rows(elems, widths)...)
}

// rows lays out the elements of a composite literal a few to a line, as a
// person would: widths are the elements' lengths, and a line breaks before
// an element that would take it past 72 characters. A list that fits stays
// on one line.
func rows(elems []jen.Code, widths []int) []jen.Code {
	total := 0
	for _, w := range widths {
		total += w + 2
	}
	if total <= 72 {
		return elems
	}
	out := make([]jen.Code, 0, len(elems)+1)
	width := 0
	for i, e := range elems {
		if i == 0 || width+widths[i]+2 > 72 {
			e, width = jen.Line().Add(e), 0
		}
		width += widths[i] + 2
		out = append(out, e)
	}
	return append(out, jen.Line())
}
