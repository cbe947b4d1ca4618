package spec

import (
	"strings"
	"testing"
)

// pbTopic is a topic with a protobuf value of record Order.
const pbTopic = "  pb: {key: string, value: Order, value_format: protobuf}\n"

// withField is header with Order's user_id field replaced by line.
func withField(line string) string {
	return strings.Replace(header, "user_id: {id: 2, type: string}", line, 1)
}

// withEnums is src with an enums section.
func withEnums(src, enums string) string {
	return strings.Replace(src, "records:\n", "enums: "+enums+"\nrecords:\n", 1)
}

// protobufErrCases are what the spec refuses on protobuf sides, each at its
// line; TestErrors runs them with the others.
var protobufErrCases = []errCase{
	{"protobuf on a primitive", header + "  pb: {key: string, value: Order, key_format: protobuf}\n" + pipe,
		"t.yaml:16:47: topic \"pb\": key_format: protobuf carries records (messages), and \"string\" is not one\n\n\tremove key_format to use Kafka's own serializer for a string, use json, or make it a record\n"},
	{"protobuf reserved field number", strings.Replace(header, "user_id: {id: 2,", "user_id: {id: 19000,", 1) + pbTopic + pipe,
		"t.yaml:8:7: protobuf: record \"Order\": field \"user_id\": id 19000 is in 19000..19999, which Protobuf reserves for itself (ids are the field numbers)\n\n\tgive the field another id: ids are stable, so only while no data is written with it\n"},
	{"protobuf list of lists", withField("user_id: {id: 2, type: \"list<list<int32>>\"}") + pbTopic + pipe,
		"t.yaml:8:7: protobuf: record \"Order\": field \"user_id\": list<list<int32>> has no proto3 field: repeated fields hold no lists or maps\n\n\twrap the inner value in a record (a message of its own), as a .proto would\n"},
	{"protobuf optional list", withField("user_id: {id: 2, type: \"optional<list<int32>>\"}") + pbTopic + pipe,
		"t.yaml:8:7: protobuf: record \"Order\": field \"user_id\": optional<list<int32>> has no proto3 field: repeated and map fields have no presence\n\n\tuse list<int32> (empty for none), or wrap it in a record\n"},
	{"protobuf list of optionals", withField("user_id: {id: 2, type: \"list<optional<int32>>\"}") + pbTopic + pipe,
		"t.yaml:8:7: protobuf: record \"Order\": field \"user_id\": list<optional<int32>> has no proto3 field: repeated fields hold no null elements\n\n\twrap the inner value in a record (a message of its own), as a .proto would\n"},
	{"protobuf map of lists", withField("user_id: {id: 2, type: \"map<string,list<int32>>\"}") + pbTopic + pipe,
		"t.yaml:8:7: protobuf: record \"Order\": field \"user_id\": map<string,list<int32>> has no proto3 field: map values are not lists, maps or optional\n\n\twrap the inner value in a record (a message of its own), as a .proto would\n"},
	{"protobuf enum without zero", withEnums(withField("user_id: {id: 2, type: S}"), "{S: {values: {A: 1, B: 2}}}") + pbTopic + pipe,
		"t.yaml:4:9: protobuf: enum \"S\" has no value numbered 0, which proto3 requires\n\n\tadd a value numbered 0 (UNSPECIFIED: 0 is the convention): it is what a reader sees for a missing field\n"},
	{"protobuf enum value names clash", withEnums(withField("user_id: {id: 2, type: S}\n      t: {id: 3, type: T}"), "{S: {values: {A: 0, B: 2}}, T: {values: {A: 0}}}") + pbTopic + pipe,
		"t.yaml:4:49: protobuf: value \"A\" of enum \"T\": its name \"A\" is already in the .proto of record \"Order\" (value \"A\" of enum \"S\"): messages, enums and enum values share one scope\n\n\trename one of them (proto's convention prefixes enum values with the enum's name); see docs/formats.md\n"},
	{"protobuf packages differ", strings.Replace(withField("user_id: {id: 2, type: User}"), "  User:\n", "  User:\n    schema_name: io.b.User\n", 1) + pbTopic + pipe,
		"t.yaml:10:18: protobuf: record \"User\" (schema_name \"io.b.User\") is in the .proto of record \"Order\", whose package is \"p\": a .proto file has one package\n\n\tgive record \"User\" the namespace \"p\", or none (it then joins the file's package)\n"},
}

func init() { errCases = append(errCases, protobufErrCases...) }

// TestProtobufFile checks a valid protobuf side and the content of its
// record's .proto file: the record first, then what it reaches in field
// order, the package from schema_name or else the spec's.
func TestProtobufFile(t *testing.T) {
	src := withEnums(withField("user_id: {id: 2, type: \"map<string,User>\"}\n      s: {id: 3, type: \"list<S>\"}"), "{S: {values: {A: 0}}}")
	src = strings.Replace(src, "  Order:\n", "  Order:\n    schema_name: io.example.Order\n", 1)
	prog, err := Parse("t.yaml", []byte(src+pbTopic+pipe))
	if err != nil {
		t.Fatal(err)
	}
	var order *Record
	for _, r := range prog.Records {
		if r.Name == "Order" {
			order = r
		}
	}
	f := ProtobufFileOf(order)
	if len(f.Records) != 2 || f.Records[0] != order || f.Records[1].Name != "User" || len(f.Enums) != 1 || f.Enums[0].Name != "S" {
		t.Errorf("file of Order: records %v, enums %v", f.Records, f.Enums)
	}
	if got := ProtobufPackage(order, prog.Package); got != "io.example" {
		t.Errorf("package %q, want io.example", got)
	}
	if got := ProtobufPackage(f.Records[1], prog.Package); got != "p" {
		t.Errorf("package of User %q, want the spec's p", got)
	}
	if got := ProtobufName(order); got != "Order" {
		t.Errorf("message name %q", got)
	}
}
