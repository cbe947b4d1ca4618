package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/streamgen/streamgen/spec"
)

// The Avro schema (.avsc) of a record or enum (docs/formats.md "Avro"):
// what an avro topic registers and what `streamgen schema avro` prints.
// A record's full name is its schema_name; nested records and enums are
// defined where first used and referenced by full name after, and a
// nested name without a namespace takes the enclosing one, as Avro's
// rules say. Every field has a default, the spec's or its type's zero
// value, so a reader of another version fills a field its writer lacks as
// streamgen's other formats do, and a registry's compatibility rules allow
// adding and removing fields as the spec's own evolution rules do.

// avscDoc builds one schema document.
type avscDoc struct {
	defined map[string]bool // full names defined so far
	names   map[string]string
}

// RecordAvroSchema is the .avsc of r, compact, as the avro format
// registers it.
func RecordAvroSchema(r *spec.Record) (string, error) {
	return avscString(func(d *avscDoc) (any, error) { return d.record(r, "") })
}

// EnumAvroSchema is the .avsc of e, for an avro side of the enum itself.
func EnumAvroSchema(e *spec.Enum) (string, error) {
	return avscString(func(d *avscDoc) (any, error) { return d.enum(e, ""), nil })
}

// AvroSideSchema is the schema an avro topic side of type ty registers:
// its record's or enum's .avsc, or a primitive's ("string", "long", …).
func AvroSideSchema(ty *spec.Type) (string, error) {
	switch ty.Kind {
	case spec.KindRecord:
		return RecordAvroSchema(ty.Record)
	case spec.KindEnum:
		return EnumAvroSchema(ty.Enum)
	}
	return avroPrimSchemas[ty.Kind], nil
}

func avscString(build func(*avscDoc) (any, error)) (string, error) {
	d := &avscDoc{defined: map[string]bool{}, names: map[string]string{}}
	v, err := build(d)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// fullName is the Avro full name of a type named name (a schema_name or
// an enum name) defined in namespace ns, and its own namespace.
func fullName(name, ns string) (full, space string) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name, name[:i]
	}
	if ns == "" {
		return name, ""
	}
	return ns + "." + name, ns
}

// named returns the reference to a named type when it is defined already
// (and checks that two spec types do not share a full name), else nil and
// the type's full name and namespace.
func (d *avscDoc) named(specName, what, ns string) (ref any, full, space string, err error) {
	full, space = fullName(specName, ns)
	if prev, ok := d.names[full]; ok && prev != what {
		return nil, "", "", fmt.Errorf("%s and %s both have the Avro full name %s; give one a schema_name with another namespace", prev, what, full)
	}
	if d.defined[full] {
		if ns != "" && space == "" {
			return nil, "", "", fmt.Errorf("%s (Avro name %s, no namespace) is referenced inside namespace %s, where Avro cannot name it; give it a schema_name with a namespace", what, full, ns)
		}
		return full, "", "", nil
	}
	d.defined[full], d.names[full] = true, what
	return nil, full, space, nil
}

func avscName(full string) jsObj {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return jsObj{{"name", full[i+1:]}, {"namespace", full[:i]}}
	}
	return jsObj{{"name", full}}
}

func (d *avscDoc) record(r *spec.Record, ns string) (any, error) {
	ref, full, space, err := d.named(r.SchemaName, fmt.Sprintf("record %q", r.Name), ns)
	if ref != nil || err != nil {
		return ref, err
	}
	o := append(jsObj{{"type", "record"}}, avscName(full)...)
	if r.Doc != "" {
		o = append(o, jsMember{"doc", r.Doc})
	}
	fields := []any{}
	for _, f := range r.Fields {
		t, err := d.typ(f.Type, space)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		fo := jsObj{{"name", f.Name}, {"type", t}}
		if f.Doc != "" {
			fo = append(fo, jsMember{"doc", f.Doc})
		}
		def, err := avroDefault(f)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		fields = append(fields, append(fo, jsMember{"default", def}))
	}
	return append(o, jsMember{"fields", fields}), nil
}

// enum is the schema of e, or its reference. Its symbols are the value
// names in number order; the value numbered 0, when declared, is the
// default a reader gives a symbol it does not know (proto3's convention
// for the zero value).
func (d *avscDoc) enum(e *spec.Enum, ns string) any {
	ref, full, _, err := d.named(e.Name, fmt.Sprintf("enum %q", e.Name), ns)
	if ref != nil || err != nil {
		return ref // an enum name cannot collide with a record's: spec names are unique
	}
	o := append(jsObj{{"type", "enum"}}, avscName(full)...)
	if e.Doc != "" {
		o = append(o, jsMember{"doc", e.Doc})
	}
	syms := make([]string, len(e.Values))
	for i, v := range e.Values {
		syms[i] = v.Name
	}
	o = append(o, jsMember{"symbols", syms})
	for _, v := range e.Values {
		if v.Number == 0 {
			o = append(o, jsMember{"default", v.Name})
		}
	}
	return o
}

// avroTypeNames are the schemas of the scalar kinds.
var avroTypeNames = map[spec.TypeKind]any{
	spec.KindString: "string", spec.KindBytes: "bytes", spec.KindBool: "boolean",
	spec.KindInt32: "int", spec.KindInt64: "long", spec.KindUint32: "long", spec.KindUint64: "long",
	spec.KindFloat32: "float", spec.KindFloat64: "double", spec.KindDuration: "long",
	spec.KindTimestamp: jsObj{{"type", "long"}, {"logicalType", "timestamp-millis"}},
}

// typ is the schema of a value of type t inside namespace ns.
func (d *avscDoc) typ(t *spec.Type, ns string) (any, error) {
	if s, ok := avroTypeNames[t.Kind]; ok {
		return s, nil
	}
	switch t.Kind {
	case spec.KindEnum:
		return d.enum(t.Enum, ns), nil
	case spec.KindRecord:
		return d.record(t.Record, ns)
	}
	elem, err := d.typ(t.Elem, ns)
	if err != nil {
		return nil, err
	}
	switch t.Kind {
	case spec.KindOptional:
		return []any{"null", elem}, nil
	case spec.KindList:
		return jsObj{{"type", "array"}, {"items", elem}}, nil
	case spec.KindMap:
		return jsObj{{"type", "map"}, {"values", elem}}, nil
	}
	panic(fmt.Sprintf("gen: Avro schema of %v", t.Kind)) // spec allows no other field type
}

// avroDefault is the JSON default of field f: the spec's default in
// Avro's JSON form, else the zero value of its type.
func avroDefault(f *spec.Field) (any, error) {
	if f.Default == nil || f.Type.Kind == spec.KindOptional {
		return avroZero(f.Type), nil
	}
	switch v := f.Default.(type) {
	case string:
		switch f.Type.Kind {
		case spec.KindBytes:
			return avroBytesJSON([]byte(v)), nil
		case spec.KindTimestamp:
			t, err := time.Parse(time.RFC3339Nano, v)
			return t.UnixMilli(), err
		case spec.KindDuration:
			d, err := time.ParseDuration(v)
			return d.Milliseconds(), err
		}
		return v, nil
	case uint64:
		if f.Type.Kind == spec.KindUint64 && v > math.MaxInt64 {
			return int64(v), nil // the long's bits, as the encoder writes it
		}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("default %v has no JSON form", v)
		}
	}
	return f.Default, nil
}

// avroBytesJSON is bytes as Avro's JSON writes them: one code point
// 0-255 per byte.
func avroBytesJSON(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// avroZero is the JSON default of a field of type t with no spec
// default: its Go zero value (for an enum its zero-numbered symbol, else
// its first; for a record every field's default).
func avroZero(t *spec.Type) any {
	switch t.Kind {
	case spec.KindString, spec.KindBytes:
		return ""
	case spec.KindBool:
		return false
	case spec.KindOptional:
		return nil
	case spec.KindList:
		return []any{}
	case spec.KindMap:
		return jsObj{}
	case spec.KindEnum:
		for _, v := range t.Enum.Values {
			if v.Number == 0 {
				return v.Name
			}
		}
		return t.Enum.Values[0].Name
	case spec.KindRecord:
		o := jsObj{}
		for _, f := range t.Record.Fields {
			def, _ := avroDefault(f) // checked where the field is declared
			o = append(o, jsMember{f.Name, def})
		}
		return o
	case spec.KindFloat32, spec.KindFloat64:
		return 0.0
	}
	return 0
}

// AvroSchemas is what `streamgen schema avro` prints: one JSON object whose
// members are the .avsc of every record of prog, keyed by schema name, in
// spec order, indented.
func AvroSchemas(prog *spec.Program) ([]byte, error) {
	return schemasByName(prog, RecordAvroSchema)
}

// schemasByName is one indented JSON object whose members are the schemas
// of every record of prog, keyed by schema name, in spec order.
func schemasByName(prog *spec.Program, schema func(*spec.Record) (string, error)) ([]byte, error) {
	all := jsObj{}
	for _, r := range prog.Records {
		doc, err := schema(r)
		if err != nil {
			return nil, fmt.Errorf("record %q: %w", r.Name, err)
		}
		all = append(all, jsMember{r.SchemaName, json.RawMessage(doc)})
	}
	b, err := json.Marshal(all)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
