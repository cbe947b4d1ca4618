package spec

import "strings"

// Format is the wire format of a topic's key or value (key_format,
// value_format). Stores and internal topics keep the default.
type Format string

const (
	// FormatDefault is what a topic side gets when the spec names no
	// format: Kafka's own serializers for primitives and enums, msgpack
	// for records.
	FormatDefault Format = ""
	// FormatMsgpack is the msgpack map keyed by field id (records only).
	FormatMsgpack Format = "msgpack"
	// FormatJSON is JSON text (RFC 8259): records as objects keyed by
	// json_name or the spec field name, primitives as JSON values.
	FormatJSON Format = "json"
	// FormatAvro is Avro binary encoding in the Confluent wire format
	// (a schema registry holds the schema).
	FormatAvro Format = "avro"
	// FormatProtobuf is the proto3 wire format in the Confluent wire
	// format; the spec's field ids are the field numbers.
	FormatProtobuf Format = "protobuf"
	// FormatJSONSchema is the json format in the Confluent wire format,
	// with a JSON Schema in the registry.
	FormatJSONSchema Format = "jsonschema"
)

// IsRegistry reports whether f is a registry format: always the
// Confluent wire format, its schema in a schema registry.
func (f Format) IsRegistry() bool {
	return f == FormatAvro || f == FormatProtobuf || f == FormatJSONSchema
}

// IsJSON reports whether f writes JSON text (json, and jsonschema inside
// its framing), so json_timestamps applies.
func (f Format) IsJSON() bool { return f == FormatJSON || f == FormatJSONSchema }

// allFormats are the format names a spec may write.
var allFormats = []string{
	string(FormatMsgpack), string(FormatJSON), string(FormatAvro), string(FormatProtobuf), string(FormatJSONSchema),
}

// SubjectStrategy is how a topic's registry subjects are named
// (subject_strategy).
type SubjectStrategy string

const (
	// SubjectTopic is <topic>-key and <topic>-value (TopicNameStrategy,
	// the default).
	SubjectTopic SubjectStrategy = "topic"
	// SubjectRecord is the record's schema_name (RecordNameStrategy).
	SubjectRecord SubjectStrategy = "record"
)

// JSONTimestamps is how JSON encoders write timestamps on a topic.
type JSONTimestamps string

const (
	// JSONRFC3339 is an RFC 3339 string in UTC, millisecond precision
	// (the default).
	JSONRFC3339 JSONTimestamps = "rfc3339"
	// JSONEpochMillis is an integer of milliseconds since the epoch.
	JSONEpochMillis JSONTimestamps = "epoch_millis"
)

// topicFormats reads key_format, value_format and json_timestamps. It runs
// after topicTypes, so the sides' types are known (nil when they failed).
func (p *parser) topicFormats(t *Topic, o *obj, ctx string) {
	t.FormatPos = t.Pos
	for _, side := range []string{"key", "value"} {
		k := side + "_format"
		if !o.has(k) {
			continue
		}
		t.FormatPos = o.valPos(k)
		f, ok := p.topicFormat(o, k, ctx)
		if !ok {
			continue
		}
		ty := t.Value
		if side == "key" {
			ty = t.Key
		}
		if ty != nil && !p.formatFits(f, ty, o, k, ctx) {
			continue
		}
		if side == "key" {
			t.KeyFormat = f
		} else {
			t.ValueFormat = f
		}
	}
	p.topicSubjects(t, o, ctx)
	t.JSONTimestamps = JSONRFC3339
	if !o.has("json_timestamps") {
		return
	}
	ts, ok := o.enum("json_timestamps", string(JSONRFC3339), string(JSONEpochMillis))
	if !ok {
		return
	}
	t.JSONTimestamps = JSONTimestamps(ts)
	kf, _ := o.str("key_format")
	vf, _ := o.str("value_format")
	if !Format(kf).IsJSON() && !Format(vf).IsJSON() {
		p.errf(o.keyPos("json_timestamps"), "%s: json_timestamps is set but neither key_format nor value_format is json or jsonschema", ctx)
		p.hintf("add `value_format: json` (or key_format), or remove json_timestamps; see docs/formats.md")
	}
}

// topicFormat reads one format key.
func (p *parser) topicFormat(o *obj, k, ctx string) (Format, bool) {
	if _, ok := o.str(k); !ok {
		return "", false
	}
	f, ok := o.enum(k, allFormats...)
	return Format(f), ok
}

// formatFits reports whether format f can carry a side of type ty.
func (p *parser) formatFits(f Format, ty *Type, o *obj, k, ctx string) bool {
	switch {
	case f == FormatMsgpack && ty.Kind != KindRecord:
		p.errf(o.valPos(k), "%s: %s: msgpack is the format of records, and %q is not one", ctx, k, ty)
		p.hintf("remove %s to use Kafka's own serializer for %s, or use json", k, ty)
		return false
	case (f == FormatJSON || f.IsRegistry()) && hasWindowed(ty):
		p.errf(o.valPos(k), "%s: %s: %s is not supported yet for windowed keys", ctx, k, f)
		p.hintf("windowed keys use Kafka Streams' binary layout; remove %s", k)
		return false
	case f == FormatJSONSchema && ty.Kind != KindRecord:
		p.errf(o.valPos(k), "%s: %s: jsonschema carries records, and %q is not one", ctx, k, ty)
		p.hintf("use json for a %s side, or make it a record", ty)
		return false
	case f == FormatProtobuf:
		return p.protobufFits(ty, o, k, ctx)
	}
	return true
}

// topicSubjects reads subject_strategy: refused on a topic with no
// registry side, and record naming needs a record on every registry side.
func (p *parser) topicSubjects(t *Topic, o *obj, ctx string) {
	t.SubjectStrategy = SubjectTopic
	if !o.has("subject_strategy") {
		return
	}
	s, ok := o.enum("subject_strategy", string(SubjectTopic), string(SubjectRecord))
	if !ok {
		return
	}
	t.SubjectStrategy, t.SubjectStrategyPos = SubjectStrategy(s), o.valPos("subject_strategy")
	if !t.KeyFormat.IsRegistry() && !t.ValueFormat.IsRegistry() {
		p.errf(o.keyPos("subject_strategy"), "%s: subject_strategy is set but neither side is in a registry format (avro, protobuf, jsonschema)", ctx)
		p.hintf("remove subject_strategy, or set value_format to a registry format; see docs/formats.md")
		return
	}
	for _, side := range []struct {
		f  Format
		ty *Type
		k  string
	}{{t.KeyFormat, t.Key, "key"}, {t.ValueFormat, t.Value, "value"}} {
		if t.SubjectStrategy == SubjectRecord && side.f.IsRegistry() && side.ty != nil && side.ty.Kind != KindRecord {
			p.errf(o.valPos("subject_strategy"), "%s: subject_strategy record names subjects after records, and the %s, %q, is not one", ctx, side.k, side.ty)
			p.hintf("use subject_strategy: topic (<topic>-key, <topic>-value)")
		}
	}
}

// fieldJSONName reads a field's json_name, defaulting to the field name.
func (p *parser) fieldJSONName(f *Field, fo *obj, fctx string) {
	f.JSONName, f.JSONNamePos = f.Name, f.Pos
	if !fo.has("json_name") {
		return
	}
	s, ok := fo.str("json_name")
	switch {
	case !ok:
	case s == "":
		p.errf(fo.valPos("json_name"), "%s: json_name is empty", fctx)
		p.hintf("remove json_name to use the field name %q, or give the JSON member name", f.Name)
	default:
		f.JSONName, f.JSONNamePos = s, fo.valPos("json_name")
	}
}

// checkJSONNames reports two fields of a record with the same JSON member
// name: a decoder could not tell them apart.
func (p *parser) checkJSONNames(r *Record) {
	seen := map[string]*Field{}
	for _, f := range r.Fields {
		if prev := seen[f.JSONName]; prev != nil {
			p.errf(f.JSONNamePos, "record %q: field %q: JSON name %q is already used by field %q (at %d:%d)",
				r.Name, f.Name, f.JSONName, prev.Name, prev.JSONNamePos.Line, prev.JSONNamePos.Col)
			p.hintf("give one of them another json_name; see docs/formats.md")
			continue
		}
		seen[f.JSONName] = f
	}
}

// recordSchemaName reads a record's schema_name: dot-separated
// identifiers, so it is a valid Avro full name and Protobuf full name
// alike (a Java service's io.example.Order). Without it the record's own
// name is used, with no namespace.
func (p *parser) recordSchemaName(r *Record, o *obj, ctx string) {
	r.SchemaName, r.SchemaNamePos = r.Name, r.Pos
	if !o.has("schema_name") {
		return
	}
	s, ok := o.str("schema_name")
	if !ok {
		return
	}
	for _, part := range strings.Split(s, ".") {
		if !isIdent(part) {
			p.errf(o.valPos("schema_name"), "%s: schema_name %q: want dot-separated identifiers (letters, digits, '_'), as Avro and Protobuf names are", ctx, s)
			p.hintf("for example schema_name: io.example.%s", r.Name)
			return
		}
	}
	r.SchemaName, r.SchemaNamePos = s, o.valPos("schema_name")
}
