package gen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamgen/streamgen/spec"
)

// The .proto of records (docs/formats.md "Protobuf"): the file a protobuf
// topic side registers for its record, and what `streamgen schema
// protobuf` prints. proto3; field numbers are the spec's field ids;
// timestamps and durations are google.protobuf.Timestamp and Duration (the
// well-known types Java services use, which registries resolve without
// references); optional fields of scalar types are proto3 `optional`
// (explicit presence); lists are repeated fields (packed for scalars, as
// proto3 has it by default), maps are map<string, V>; enums are proto3
// enums, their value 0 first as proto3 requires. A record's file holds its
// message first (message index [0]), then the messages of the records it
// reaches and the enums they use, so a record's schema changes only when
// a type it uses does.

// protoScalars are the proto types of the scalar kinds.
var protoScalars = map[spec.TypeKind]string{
	spec.KindString: "string", spec.KindBytes: "bytes", spec.KindBool: "bool",
	spec.KindInt32: "int32", spec.KindInt64: "int64", spec.KindUint32: "uint32", spec.KindUint64: "uint64",
	spec.KindFloat32: "float", spec.KindFloat64: "double",
	spec.KindTimestamp: "google.protobuf.Timestamp", spec.KindDuration: "google.protobuf.Duration",
}

// protoWellKnown are the imports of the well-known types.
var protoWellKnown = map[spec.TypeKind]string{
	spec.KindTimestamp: "google/protobuf/timestamp.proto",
	spec.KindDuration:  "google/protobuf/duration.proto",
}

// protoType is the proto type of a value of type t (a scalar, an enum or
// a record: spec.ProtobufProblems refuses the rest inside collections).
func protoType(t *spec.Type) string {
	switch t.Kind {
	case spec.KindEnum:
		return t.Enum.Name
	case spec.KindRecord:
		return spec.ProtobufName(t.Record)
	}
	return protoScalars[t.Kind]
}

// protoIsMessage reports whether values of t are messages on the wire
// (records, timestamps, durations), which have presence without
// `optional`.
func protoIsMessage(t *spec.Type) bool {
	return t.Kind == spec.KindRecord || t.Kind == spec.KindTimestamp || t.Kind == spec.KindDuration
}

// protoFieldType is the type part of a field declaration of type t.
func protoFieldType(t *spec.Type) string {
	switch t.Kind {
	case spec.KindOptional:
		if protoIsMessage(t.Elem) {
			return protoType(t.Elem)
		}
		return "optional " + protoType(t.Elem)
	case spec.KindList:
		return "repeated " + protoType(t.Elem)
	case spec.KindMap:
		return "map<string, " + protoType(t.Elem) + ">"
	}
	return protoType(t)
}

// RecordProto is the .proto file of record r, as a protobuf topic side
// registers it; pkg is the spec's package, the file's package when r's
// schema_name has no namespace.
func RecordProto(r *spec.Record, pkg string) string {
	f := spec.ProtobufFileOf(r)
	return protoFile(spec.ProtobufPackage(r, pkg), f.Records, f.Enums, nil)
}

// protoFile writes a .proto file of records and enums in package pkg,
// with notes as comments at its top.
func protoFile(pkg string, records []*spec.Record, enums []*spec.Enum, notes []string) string {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString("// " + n + "\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("syntax = \"proto3\";\n")
	if pkg != "" {
		b.WriteString("\npackage " + pkg + ";\n")
	}
	var imports []string
	for _, r := range records {
		for _, fl := range r.Fields {
			t := fl.Type
			if t.Elem != nil {
				t = t.Elem
			}
			if imp := protoWellKnown[t.Kind]; imp != "" && !slices.Contains(imports, imp) {
				imports = append(imports, imp)
			}
		}
	}
	slices.Sort(imports)
	if len(imports) > 0 {
		b.WriteString("\n")
	}
	for _, imp := range imports {
		b.WriteString("import \"" + imp + "\";\n")
	}
	for _, r := range records {
		b.WriteString("\n")
		protoMessage(&b, r)
	}
	for _, e := range enums {
		b.WriteString("\n")
		protoEnum(&b, e)
	}
	return b.String()
}

// protoDoc writes doc as comment lines, indented by indent.
func protoDoc(b *strings.Builder, doc, indent string) {
	if doc == "" {
		return
	}
	for _, line := range strings.Split(doc, "\n") {
		b.WriteString(strings.TrimRight(indent+"// "+line, " ") + "\n")
	}
}

// protoMessage writes the message of record r.
func protoMessage(b *strings.Builder, r *spec.Record) {
	protoDoc(b, r.Doc, "")
	b.WriteString("message " + spec.ProtobufName(r) + " {\n")
	for _, fl := range r.Fields {
		protoDoc(b, fl.Doc, "  ")
		opts := ""
		if fl.Deprecated {
			opts = " [deprecated = true]"
		}
		fmt.Fprintf(b, "  %s %s = %d%s;\n", protoFieldType(fl.Type), fl.Name, fl.ID, opts)
	}
	b.WriteString("}\n")
}

// protoEnum writes enum e: its value numbered 0 first, as proto3 requires
// (spec.ProtobufProblems refuses an enum without one), then the others in
// number order.
func protoEnum(b *strings.Builder, e *spec.Enum) {
	protoDoc(b, e.Doc, "")
	b.WriteString("enum " + e.Name + " {\n")
	values := slices.Clone(e.Values)
	slices.SortStableFunc(values, func(x, y *spec.EnumValue) int {
		if (x.Number == 0) != (y.Number == 0) {
			if x.Number == 0 {
				return -1
			}
			return 1
		}
		return 0
	})
	for _, v := range values {
		protoDoc(b, v.Doc, "  ")
		b.WriteString("  " + v.Name + " = " + strconv.Itoa(int(v.Number)) + ";\n")
	}
	b.WriteString("}\n")
}

// Protos is what `streamgen schema protobuf` prints: one .proto file with
// the message of every record of prog and every enum they use, in spec
// order, in the package of the first protobuf topic side's record (else
// of the first record with a namespace, else the spec's package). The
// messages are those each record's own file registers. A record that
// cannot be in this file (a proto3 problem, another package, a name
// already taken) is left out with a comment saying why.
func Protos(prog *spec.Program) ([]byte, error) {
	pkg := protosPackage(prog)
	names := map[string]any{} // proto name → the record or enum holding it
	claim := func(name string, owner any) bool {
		if prev, ok := names[name]; ok && prev != owner {
			return false
		}
		names[name] = owner
		return true
	}
	var records []*spec.Record
	var notes []string
	inRecords, inEnums := map[*spec.Record]bool{}, map[*spec.Enum]bool{}
	for _, r := range prog.Records {
		if why := protosExclusion(r, prog.Package, pkg, names); why != "" {
			notes = append(notes, fmt.Sprintf("record %q is not here: %s", r.Name, why))
			continue
		}
		f := spec.ProtobufFileOf(r)
		for _, rec := range f.Records {
			inRecords[rec] = claim(spec.ProtobufName(rec), rec)
		}
		for _, e := range f.Enums {
			inEnums[e] = claim(e.Name, e)
			for _, v := range e.Values {
				claim(v.Name, e)
			}
		}
	}
	for _, r := range prog.Records {
		if inRecords[r] {
			records = append(records, r)
		}
	}
	var enums []*spec.Enum
	for _, e := range prog.Enums {
		if inEnums[e] {
			enums = append(enums, e)
		}
	}
	return []byte(protoFile(pkg, records, enums, notes)), nil
}

// protosExclusion says why record r cannot be in the file Protos prints
// in package pkg, whose names so far are names, or "".
func protosExclusion(r *spec.Record, specPkg, pkg string, names map[string]any) string {
	if probs := spec.ProtobufProblems(r, specPkg); len(probs) > 0 {
		return probs[0].Msg
	}
	if p := spec.ProtobufPackage(r, specPkg); p != pkg && strings.Contains(r.SchemaName, ".") {
		return fmt.Sprintf("its package is %q", p)
	}
	f := spec.ProtobufFileOf(r)
	taken := func(name string, owner any) bool {
		prev, ok := names[name]
		return ok && prev != owner
	}
	for _, rec := range f.Records {
		if taken(spec.ProtobufName(rec), rec) {
			return fmt.Sprintf("the name %q is already taken in this file", spec.ProtobufName(rec))
		}
	}
	for _, e := range f.Enums {
		if taken(e.Name, e) {
			return fmt.Sprintf("the name %q is already taken in this file", e.Name)
		}
		for _, v := range e.Values {
			if taken(v.Name, e) {
				return fmt.Sprintf("the name %q is already taken in this file", v.Name)
			}
		}
	}
	return ""
}

// protosPackage is the package of the file Protos prints.
func protosPackage(prog *spec.Program) string {
	for _, t := range prog.Topics {
		for _, key := range []bool{false, true} {
			if formatOf(t, key) == spec.FormatProtobuf {
				ty := t.Value
				if key {
					ty = t.Key
				}
				return spec.ProtobufPackage(ty.Record, prog.Package)
			}
		}
	}
	for _, r := range prog.Records {
		if strings.Contains(r.SchemaName, ".") {
			return spec.ProtobufPackage(r, prog.Package)
		}
	}
	return prog.Package
}
