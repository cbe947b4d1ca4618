package spec

import (
	"strings"
	"testing"
)

// formatErrCases are the errors of key_format, value_format,
// json_timestamps and json_name; TestErrors runs them with the others.
var formatErrCases = []errCase{
	{"unknown format", header + "  xm: {key: string, value: Order, value_format: xml}\n" + pipe,
		"t.yaml:16:49: topic \"xm\": value_format: invalid value \"xml\", want msgpack or json or avro or protobuf or jsonschema"},
	{"msgpack on a primitive", header + "  m: {key: string, value: Order, key_format: msgpack}\n" + pipe,
		"t.yaml:16:46: topic \"m\": key_format: msgpack is the format of records, and \"string\" is not one\n\n\tremove key_format to use Kafka's own serializer for string, or use json\n"},
	{"json on a windowed key", header + "  w: {key: \"windowed<string>\", value: int64, key_format: json}\n" + pipe,
		"t.yaml:16:58: topic \"w\": key_format: json is not supported yet for windowed keys\n\n\twindowed keys use Kafka Streams' binary layout; remove key_format\n"},
	{"json_timestamps without json", header + "  j: {key: string, value: Order, json_timestamps: epoch_millis}\n" + pipe,
		"t.yaml:16:34: topic \"j\": json_timestamps is set but neither key_format nor value_format is json or jsonschema\n\n\tadd `value_format: json` (or key_format), or remove json_timestamps; see docs/formats.md\n"},
	{"jsonschema on a primitive", header + "  p: {key: string, value: Order, key_format: jsonschema}\n" + pipe,
		"t.yaml:16:46: topic \"p\": key_format: jsonschema carries records, and \"string\" is not one\n\n\tuse json for a string side, or make it a record\n"},
	{"subject_strategy without a registry format", header + "  s: {key: string, value: Order, subject_strategy: record}\n" + pipe,
		"t.yaml:16:34: topic \"s\": subject_strategy is set but neither side is in a registry format (avro, protobuf, jsonschema)\n\n\tremove subject_strategy, or set value_format to a registry format; see docs/formats.md\n"},
	{"bad subject_strategy", header + "  s: {key: string, value: Order, value_format: jsonschema, subject_strategy: name}\n" + pipe,
		"t.yaml:16:78: topic \"s\": subject_strategy: invalid value \"name\", want topic or record"},
	{"bad json_timestamps", header + "  j: {key: string, value: Order, value_format: json, json_timestamps: iso}\n" + pipe,
		"t.yaml:16:71: topic \"j\": json_timestamps: invalid value \"iso\", want rfc3339 or epoch_millis"},
	{"empty json_name", strings.Replace(header, "user_id: {id: 2, type: string}", "user_id: {id: 2, type: string, json_name: \"\"}", 1) + pipe,
		"t.yaml:8:49: record \"Order\": field \"user_id\": json_name is empty\n\n\tremove json_name to use the field name \"user_id\", or give the JSON member name\n"},
	{"json_name collides", strings.Replace(header, "user_id: {id: 2, type: string}", "user_id: {id: 2, type: string, json_name: id}", 1) + pipe,
		"t.yaml:8:49: record \"Order\": field \"user_id\": JSON name \"id\" is already used by field \"id\" (at 7:7)\n\n\tgive one of them another json_name; see docs/formats.md\n"},
}

func init() { errCases = append(errCases, formatErrCases...) }

// TestFormats checks the formats and JSON names a valid spec resolves to.
func TestFormats(t *testing.T) {
	src := strings.Replace(header, "user_id: {id: 2, type: string}", "user_id: {id: 2, type: string, json_name: userId}", 1) +
		"  js: {key: string, value: Order, key_format: json, value_format: json, json_timestamps: epoch_millis}\n" + pipe
	prog, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Topic{}
	for _, tp := range prog.Topics {
		byName[tp.Name] = tp
	}
	js, orders := byName["js"], byName["orders"]
	if js.KeyFormat != FormatJSON || js.ValueFormat != FormatJSON || js.JSONTimestamps != JSONEpochMillis {
		t.Errorf("js: formats %q/%q, timestamps %q", js.KeyFormat, js.ValueFormat, js.JSONTimestamps)
	}
	if js.FormatPos.Line != 16 {
		t.Errorf("js: format position %v, want line 16", js.FormatPos)
	}
	if orders.KeyFormat != FormatDefault || orders.ValueFormat != FormatDefault || orders.JSONTimestamps != JSONRFC3339 {
		t.Errorf("orders: formats %q/%q, timestamps %q", orders.KeyFormat, orders.ValueFormat, orders.JSONTimestamps)
	}
	var names []string
	for _, f := range orders.Value.Record.Fields {
		names = append(names, f.JSONName)
	}
	if got := strings.Join(names, ","); got != "id,userId" {
		t.Errorf("JSON names %s, want id,userId", got)
	}
}

// TestRecordSchemaName checks schema_name: its default, a dotted name, and
// a malformed one refused at its position.
func TestRecordSchemaName(t *testing.T) {
	spec := func(line string) []byte {
		return []byte(strings.Replace(header, "  Order:\n", "  Order:\n    "+line+"\n", 1) + pipe)
	}
	for _, c := range []struct{ line, want string }{{"schema_name: io.example.Order", "io.example.Order"}, {"doc: x", "Order"}} {
		prog, err := Parse("t.yaml", spec(c.line))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, r := range prog.Records {
			if r.Name == "Order" {
				got = r.SchemaName
			}
		}
		if got != c.want {
			t.Errorf("%s: SchemaName = %q, want %q", c.line, got, c.want)
		}
	}
	_, err := Parse("t.yaml", spec("schema_name: io..Order"))
	if err == nil || !strings.Contains(err.Error(), "t.yaml:6:18: record \"Order\": schema_name \"io..Order\": want dot-separated") {
		t.Errorf("bad schema_name: err = %v, want a positioned dot-separated error", err)
	}
}
