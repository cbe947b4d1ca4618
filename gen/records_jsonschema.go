package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// The jsonschema format (docs/formats.md "JSON Schema"): the JSON the json
// format writes, with the generated JSON methods of records.go's json
// step, in the Confluent wire format, the record's JSON Schema document
// registered for it. streamgen_jsonschema.go holds the document of every
// record a jsonschema topic side carries, one constant per record and
// json_timestamps setting; the side's serde is serdes.JSONSchema over
// them, framed by the registry serde (registry.go).

// jsonSchemaFile is the file of the documents.
const jsonSchemaFile = "streamgen_jsonschema.go"

// jsonSchemaConst is the name of the constant holding r's document for
// timestamps written as ts.
func (c *genCtx) jsonSchemaConst(r *spec.Record, ts spec.JSONTimestamps) string {
	if ts == spec.JSONEpochMillis {
		return c.recordNames[r] + "JSONSchemaEpochMillis"
	}
	return c.recordNames[r] + "JSONSchema"
}

// jsonSchemaCodec is the serdes.SchemaCodec of a jsonschema side of type
// ty (a record: the spec allows no other) on topic t.
func (c *genCtx) jsonSchemaCodec(t *spec.Topic, ty *spec.Type) *jen.Statement {
	return jen.Qual(pathSerdes, "JSONSchema").Types(jen.Id(c.recordNames[ty.Record])).Call(
		jsonOptions(t), jen.Id(c.jsonSchemaConst(ty.Record, t.JSONTimestamps)))
}

// generateJSONSchema is the generator step writing streamgen_jsonschema.go
// when a topic has a jsonschema side.
func generateJSONSchema(c *genCtx) error {
	var f *jen.File
	done := map[string]bool{}
	for _, t := range c.prog.Topics {
		for _, key := range []bool{true, false} {
			ty := t.Value
			if key {
				ty = t.Key
			}
			if formatOf(t, key) != spec.FormatJSONSchema || ty.Kind != spec.KindRecord {
				continue
			}
			name := c.jsonSchemaConst(ty.Record, t.JSONTimestamps)
			if done[name] {
				continue
			}
			done[name] = true
			doc, err := RecordJSONSchema(ty.Record, t.JSONTimestamps)
			if err != nil {
				return fmt.Errorf("record %q: JSON Schema: %w", ty.Record.Name, err)
			}
			if f == nil {
				f = c.newFile(jsonSchemaFile)
			}
			c.pkgScope.reserve(&c.diags, name, fmt.Sprintf("JSON Schema of record %q", ty.Record.Name), ty.Record.Pos)
			f.Line()
			f.Commentf("// %s is the JSON Schema (draft-07) of %s, timestamps as %s: what a", name, c.recordNames[ty.Record], t.JSONTimestamps)
			f.Comment("// jsonschema topic registers for it (`streamgen schema jsonschema` prints it).")
			f.Const().Id(name).Op("=").Lit(doc)
		}
	}
	return nil
}
