package spec

import (
	"fmt"
	"strings"
)

// The protobuf format's view of records (docs/formats.md "Protobuf"): a
// record on a protobuf topic side is a proto3 message whose field numbers
// are the spec's field ids, in a .proto file with the messages of the
// records it reaches and the enums they use. These functions say what that
// file holds and what the spec must refuse for it to be valid proto3; gen
// writes the file and the codecs from them.

// ProtobufFile is the content of the .proto file of one record: the
// record's message first (message index [0]), then the records it reaches
// in the order the fields first reach them, and the enums they use.
type ProtobufFile struct {
	Records []*Record
	Enums   []*Enum
}

// ProtobufFileOf is the .proto content of record r.
func ProtobufFileOf(r *Record) ProtobufFile {
	var f ProtobufFile
	seenR, seenE := map[*Record]bool{}, map[*Enum]bool{}
	var walk func(t *Type)
	walk = func(t *Type) {
		switch {
		case t == nil:
		case t.Kind == KindRecord && !seenR[t.Record]:
			seenR[t.Record] = true
			f.Records = append(f.Records, t.Record)
			for _, fl := range t.Record.Fields {
				walk(fl.Type)
			}
		case t.Kind == KindEnum && !seenE[t.Enum]:
			seenE[t.Enum] = true
			f.Enums = append(f.Enums, t.Enum)
		default:
			walk(t.Elem)
		}
	}
	walk(&Type{Kind: KindRecord, Record: r})
	return f
}

// ProtobufPackage is the package of record r's .proto file: the namespace
// of its schema_name (io.example for io.example.Order), else fallback (the
// spec's package), so the message's full name is the schema_name whenever
// that has a namespace.
func ProtobufPackage(r *Record, fallback string) string {
	if i := strings.LastIndexByte(r.SchemaName, '.'); i >= 0 {
		return r.SchemaName[:i]
	}
	return fallback
}

// ProtobufName is the message name of record r: the last identifier of
// its schema_name.
func ProtobufName(r *Record) string {
	return r.SchemaName[strings.LastIndexByte(r.SchemaName, '.')+1:]
}

// Problem is a reason a spec element cannot be what a format needs, at
// its spec position, with a remedy.
type Problem struct {
	Pos       Pos
	Msg, Hint string
}

// ProtobufProblems are the reasons record r's .proto file would not be
// valid proto3: field ids in Protobuf's reserved range, field types proto3
// has no field for, enums without a zero value, and names a .proto file
// cannot hold twice. pkg is the spec's package (ProtobufPackage's
// fallback). None means the file is valid.
func ProtobufProblems(r *Record, pkg string) []Problem {
	f := ProtobufFileOf(r)
	var out []Problem
	add := func(pos Pos, hint, format string, args ...any) {
		out = append(out, Problem{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	ns := ProtobufPackage(r, pkg)
	// Messages, enums and enum values share one scope in a .proto file.
	names := map[string]string{}
	claim := func(pos Pos, name, what string) {
		if prev, ok := names[name]; ok {
			add(pos, "rename one of them (proto's convention prefixes enum values with the enum's name); see docs/formats.md",
				"protobuf: %s: its name %q is already in the .proto of record %q (%s): messages, enums and enum values share one scope",
				what, name, r.Name, prev)
			return
		}
		names[name] = what
	}
	for _, rec := range f.Records {
		claim(rec.SchemaNamePos, ProtobufName(rec), fmt.Sprintf("the message of record %q", rec.Name))
		if rec != r && strings.Contains(rec.SchemaName, ".") && ProtobufPackage(rec, pkg) != ns {
			add(rec.SchemaNamePos, fmt.Sprintf("give record %q the namespace %q, or none (it then joins the file's package)", rec.Name, ns),
				"protobuf: record %q (schema_name %q) is in the .proto of record %q, whose package is %q: a .proto file has one package",
				rec.Name, rec.SchemaName, r.Name, ns)
		}
		for _, fl := range rec.Fields {
			if fl.ID >= 19000 && fl.ID <= 19999 {
				add(fl.Pos, "give the field another id: ids are stable, so only while no data is written with it",
					"protobuf: record %q: field %q: id %d is in 19000..19999, which Protobuf reserves for itself (ids are the field numbers)",
					rec.Name, fl.Name, fl.ID)
			}
			if why, hint := protobufShape(fl.Type); why != "" {
				add(fl.Pos, hint, "protobuf: record %q: field %q: %s has no proto3 field: %s", rec.Name, fl.Name, fl.Type, why)
			}
		}
	}
	for _, e := range f.Enums {
		claim(e.Pos, e.Name, fmt.Sprintf("enum %q", e.Name))
		zero := false
		for _, v := range e.Values {
			zero = zero || v.Number == 0
			claim(v.Pos, v.Name, fmt.Sprintf("value %q of enum %q", v.Name, e.Name))
		}
		if !zero {
			add(e.Pos, "add a value numbered 0 (UNSPECIFIED: 0 is the convention): it is what a reader sees for a missing field",
				"protobuf: enum %q has no value numbered 0, which proto3 requires", e.Name)
		}
	}
	return out
}

// protobufShape says why proto3 has no field of type t, with a remedy, or
// "".
func protobufShape(t *Type) (why, hint string) {
	scalar := func(t *Type) bool { return t.Kind != KindOptional && t.Kind != KindList && t.Kind != KindMap }
	wrap := "wrap the inner value in a record (a message of its own), as a .proto would"
	switch {
	case t.Kind == KindOptional && !scalar(t.Elem):
		return "repeated and map fields have no presence", "use " + t.Elem.String() + " (empty for none), or wrap it in a record"
	case t.Kind == KindList && t.Elem.Kind == KindOptional:
		return "repeated fields hold no null elements", wrap
	case t.Kind == KindList && !scalar(t.Elem):
		return "repeated fields hold no lists or maps", wrap
	case t.Kind == KindMap && !scalar(t.Elem):
		return "map values are not lists, maps or optional", wrap
	}
	return "", ""
}

// protobufFits checks a protobuf side of type ty, reporting each problem
// once however many topics (and records) reach it.
func (p *parser) protobufFits(ty *Type, o *obj, k, ctx string) bool {
	if ty.Kind != KindRecord {
		p.errf(o.valPos(k), "%s: %s: protobuf carries records (messages), and %q is not one", ctx, k, ty)
		p.hintf("remove %s to use Kafka's own serializer for a %s, use json, or make it a record", k, ty)
		return false
	}
	if p.protoSeen == nil {
		p.protoSeen = map[Problem]bool{}
	}
	probs := ProtobufProblems(ty.Record, p.prog.Package)
	for _, pr := range probs {
		if !p.protoSeen[pr] {
			p.protoSeen[pr] = true
			p.errf(pr.Pos, "%s", pr.Msg)
			p.hintf("%s", pr.Hint)
		}
	}
	return len(probs) == 0
}
