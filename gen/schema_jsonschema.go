package gen

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/streamgen/streamgen/spec"
)

// The JSON Schema of a record (docs/formats.md "JSON Schema"): the
// document a jsonschema topic registers, and what `streamgen schema
// jsonschema` prints. Draft-07, the draft Confluent's and Apicurio's Java
// serdes read and write. It describes exactly what the json encoders
// write: members named by json_name, int64 and uint64 as integers (exact,
// never through float64), timestamps as RFC 3339 strings or epoch
// milliseconds per json_timestamps, durations as milliseconds, bytes as
// base64 strings, enums as their names, optional fields not required and
// nullable. Nested records and enums are definitions of the top-level
// document, referenced by their schema name. additionalProperties is left
// open, since readers skip unknown members.

// jsonSchemaDraft is the $schema of every document.
const jsonSchemaDraft = "http://json-schema.org/draft-07/schema#"

// jsObj is a JSON object whose members keep their order, so documents
// are deterministic and read in field order.
type jsObj []jsMember

type jsMember struct {
	key string
	val any
}

func (o jsObj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonLit(m.key))
		b.WriteByte(':')
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonSchemaDoc builds the document of r for timestamps written as ts.
type jsonSchemaDoc struct {
	ts   spec.JSONTimestamps
	top  string
	defs jsObj
	seen map[string]bool
}

// RecordJSONSchema is the JSON Schema document of r, compact, as the
// jsonschema format registers it for a topic whose json_timestamps is ts.
func RecordJSONSchema(r *spec.Record, ts spec.JSONTimestamps) (string, error) {
	d := &jsonSchemaDoc{ts: ts, top: r.SchemaName, seen: map[string]bool{}}
	body := d.record(r)
	doc := append(jsObj{{"$schema", jsonSchemaDraft}, {"title", r.SchemaName}}, body...)
	if len(d.defs) > 0 {
		doc = append(doc, jsMember{"definitions", d.defs})
	}
	b, err := json.Marshal(doc)
	return string(b), err
}

// record is the object schema of r, its nested types added to d.defs.
func (d *jsonSchemaDoc) record(r *spec.Record) jsObj {
	props := jsObj{}
	required := []string{}
	for _, f := range r.Fields {
		props = append(props, jsMember{f.JSONName, d.typ(f.Type)})
		if f.Type.Kind != spec.KindOptional {
			required = append(required, f.JSONName)
		}
	}
	o := jsObj{{"type", "object"}}
	if r.Doc != "" {
		o = append(o, jsMember{"description", r.Doc})
	}
	return append(o, jsMember{"properties", props}, jsMember{"required", required})
}

// jsonSchemaInts are the integer kinds with their bounds (nil: none that
// JSON Schema would state more exactly than "integer").
var jsonSchemaInts = map[spec.TypeKind][2]any{
	spec.KindInt32:  {int64(-1 << 31), int64(1<<31 - 1)},
	spec.KindUint32: {0, int64(1<<32 - 1)},
	spec.KindUint64: {0, nil},
	spec.KindInt64:  {nil, nil},
}

// typ is the schema of a value of type t.
func (d *jsonSchemaDoc) typ(t *spec.Type) any {
	if b, ok := jsonSchemaInts[t.Kind]; ok {
		o := jsObj{{"type", "integer"}}
		if b[0] != nil {
			o = append(o, jsMember{"minimum", b[0]})
		}
		if b[1] != nil {
			o = append(o, jsMember{"maximum", b[1]})
		}
		return o
	}
	switch t.Kind {
	case spec.KindString:
		return jsObj{{"type", "string"}}
	case spec.KindBytes:
		return jsObj{{"type", "string"}, {"contentEncoding", "base64"}}
	case spec.KindBool:
		return jsObj{{"type", "boolean"}}
	case spec.KindFloat32, spec.KindFloat64:
		return jsObj{{"type", "number"}}
	case spec.KindDuration:
		return jsObj{{"type", "integer"}, {"description", "milliseconds"}}
	case spec.KindTimestamp:
		if d.ts == spec.JSONEpochMillis {
			return jsObj{{"type", "integer"}, {"description", "milliseconds since the Unix epoch"}}
		}
		return jsObj{{"type", "string"}, {"format", "date-time"}}
	case spec.KindOptional:
		return jsObj{{"oneOf", []any{jsObj{{"type", "null"}}, d.typ(t.Elem)}}}
	case spec.KindList:
		return jsObj{{"type", "array"}, {"items", d.typ(t.Elem)}}
	case spec.KindMap:
		return jsObj{{"type", "object"}, {"additionalProperties", d.typ(t.Elem)}}
	case spec.KindEnum:
		return d.ref(t.Enum.Name, func() jsObj { return enumJSONSchema(t.Enum) })
	case spec.KindRecord:
		return d.ref(t.Record.SchemaName, func() jsObj { return d.record(t.Record) })
	}
	panic(fmt.Sprintf("gen: JSON Schema of %v", t.Kind)) // spec allows no other field type
}

// ref is a reference to definition name, built by def the first time;
// the top-level record is the document itself.
func (d *jsonSchemaDoc) ref(name string, def func() jsObj) jsObj {
	if name == d.top {
		return jsObj{{"$ref", "#"}}
	}
	if !d.seen[name] {
		d.seen[name] = true
		at := len(d.defs)
		d.defs = append(d.defs, jsMember{key: name})
		v := def() // nested definitions append after this one
		d.defs[at].val = v
	}
	return jsObj{{"$ref", "#/definitions/" + name}}
}

// enumJSONSchema is the string enum of e's names.
func enumJSONSchema(e *spec.Enum) jsObj {
	names := make([]string, len(e.Values))
	for i, v := range e.Values {
		names[i] = v.Name
	}
	o := jsObj{{"type", "string"}}
	if e.Doc != "" {
		o = append(o, jsMember{"description", e.Doc})
	}
	return append(o, jsMember{"enum", names})
}

// JSONSchemas is what `streamgen schema jsonschema` prints: one JSON
// object whose members are the documents of every record of prog, keyed
// by schema name, in spec order, indented. A record's timestamps are as
// the first jsonschema topic carrying it writes them (rfc3339 when none
// does), so the document is the one the app registers.
func JSONSchemas(prog *spec.Program) ([]byte, error) {
	return schemasByName(prog, func(r *spec.Record) (string, error) {
		return RecordJSONSchema(r, recordJSONTimestamps(prog, r))
	})
}

// recordJSONTimestamps is the json_timestamps of the first topic with a
// jsonschema side of record r, else rfc3339.
func recordJSONTimestamps(prog *spec.Program, r *spec.Record) spec.JSONTimestamps {
	for _, t := range prog.Topics {
		for _, key := range []bool{true, false} {
			ty := t.Value
			if key {
				ty = t.Key
			}
			if formatOf(t, key) == spec.FormatJSONSchema && ty.Kind == spec.KindRecord && ty.Record == r {
				return t.JSONTimestamps
			}
		}
	}
	return spec.JSONRFC3339
}
