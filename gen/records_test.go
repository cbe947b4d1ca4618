package gen

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/streamgen/streamgen/internal/version"
	"github.com/streamgen/streamgen/spec"
)

func TestGoName(t *testing.T) {
	cases := map[string]string{
		"user_id": "UserID", "order-id": "OrderID", "type": "Type", "func": "Func", "2fa": "X2fa",
		"PAID_LATE": "PaidLate", "httpServer": "HTTPServer", "HTTPServer": "HTTPServer", "userId": "UserID",
		"sku": "SKU", "utf8_name": "UTF8Name", "v2Beta": "V2Beta", "a.b.c": "ABC", "url": "URL",
		"placed_at": "PlacedAt", "x": "X", "__": "", "sha256": "Sha256",
	}
	for in, want := range cases {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := typeName("orderV2"); got != "OrderV2" {
		t.Errorf("typeName(orderV2) = %q", got)
	}
	if got := typeName("Api"); got != "Api" {
		t.Errorf("typeName keeps the author's spelling: %q", got)
	}
}

// Small IR constructors: gen's unit tests build programs directly so they
// can express IR the parser would reject, to test gen's own checks.
func pos(line int) spec.Pos { return spec.Pos{File: "streamgen.yaml", Line: line, Col: 5} }

func prim(k spec.TypeKind) *spec.Type { return &spec.Type{Kind: k} }

func fld(line, id int, name string, t *spec.Type) *spec.Field {
	return &spec.Field{Pos: pos(line), Name: name, ID: id, Type: t}
}

func rec(line int, name string, fields ...*spec.Field) *spec.Record {
	return &spec.Record{Pos: pos(line), Name: name, Fields: fields}
}

func program(recs ...*spec.Record) *spec.Program {
	return &spec.Program{File: "streamgen.yaml", Version: 1, Package: "p", App: &spec.App{ID: "p-app"}, Records: recs}
}

func generateErr(t *testing.T, p *spec.Program) string {
	t.Helper()
	_, err := Generate(p, Config{OmitVersionMarkers: true})
	if err == nil {
		t.Fatal("Generate succeeded, want an error")
	}
	return err.Error()
}

func TestNameCollisions(t *testing.T) {
	status := &spec.Enum{Pos: pos(1), Name: "Status"}
	status.Values = []*spec.EnumValue{{Pos: pos(2), Name: "PENDING", Number: 0}, {Pos: pos(3), Name: "pending", Number: 1}}
	p := program(
		rec(10, "Order",
			fld(11, 1, "user_id", prim(spec.KindString)),
			fld(12, 2, "userId", prim(spec.KindString)),
			fld(13, 3, "is_nil", prim(spec.KindBool)),
		),
		rec(20, "StatusPaid"),
	)
	status.Values = append(status.Values, &spec.EnumValue{Pos: pos(4), Name: "PAID", Number: 2})
	p.Enums = []*spec.Enum{status}
	got := generateErr(t, p)
	want := strings.Join([]string{
		`streamgen.yaml:3:5: enum "Status": value "pending" has Go name "StatusPending", already used by enum "Status": value "PENDING" at streamgen.yaml:2:5`,
		`streamgen.yaml:4:5: enum "Status": value "PAID" has Go name "StatusPaid", already used by record "StatusPaid" at streamgen.yaml:20:5`,
		`streamgen.yaml:12:5: record "Order": field "userId" has Go name "UserID", already used by record "Order": field "user_id" at streamgen.yaml:11:5`,
		`streamgen.yaml:13:5: record "Order": field "is_nil" has Go name "IsNil", already used by method IsNil of serdes.Record`,
	}, "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	var d spec.Diagnostics
	if _, err := Generate(p, Config{}); !errors.As(err, &d) || len(d) != 4 {
		t.Errorf("error is not spec.Diagnostics with 4 entries: %v", err)
	}
}

func TestTypeChecks(t *testing.T) {
	a := rec(1, "A")
	b := rec(5, "B")
	a.Fields = []*spec.Field{fld(2, 1, "b", &spec.Type{Kind: spec.KindRecord, Record: b})}
	b.Fields = []*spec.Field{
		fld(6, 1, "a", &spec.Type{Kind: spec.KindRecord, Record: a}),
		fld(7, 2, "oo", &spec.Type{Kind: spec.KindOptional, Elem: &spec.Type{Kind: spec.KindOptional, Elem: prim(spec.KindString)}}),
	}
	c := rec(9, "C", &spec.Field{Pos: pos(10), Name: "n", ID: 1, Type: prim(spec.KindInt32), Default: int64(1) << 40})
	got := generateErr(t, program(a, b, c))
	want := strings.Join([]string{
		`streamgen.yaml:6:5: record "B": field "a" makes record "A" contain itself; make the field optional<A>`,
		`streamgen.yaml:7:5: record "B": field "oo": type "optional<optional<string>>" nests optional in optional, which has no Go representation`,
	}, "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	got = generateErr(t, program(c))
	if want := `streamgen.yaml:10:5: record "C": field "n": default 1099511627776 does not fit type "int32"`; got != want {
		t.Errorf("default check:\n got %s\nwant %s", got, want)
	}
}

func TestConfig(t *testing.T) {
	c := Config{SpecPath: "/abs/streamgen.yaml", Package: "1x"}
	c.EnsureDefaults(nil)
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "absolute") || !strings.Contains(err.Error(), "not a Go identifier") {
		t.Errorf("Validate = %v, want both problems", err)
	}
	c = Config{}
	c.EnsureDefaults(&spec.Program{File: "dir/streamgen.yaml", Package: "p"})
	if c.SpecPath != "dir/streamgen.yaml" || c.Package != "p" || c.ToolVersion != "(devel)" || c.Validate() != nil {
		t.Errorf("defaults = %+v", c)
	}
}

func TestHeaderAndOptions(t *testing.T) {
	p := program(rec(1, "R", fld(2, 1, "x", prim(spec.KindInt64))))
	files, err := Generate(p, Config{ToolVersion: "v1.2.3", SpecPath: "specs/s.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[recordsFile])
	wantHead := "// Code generated by streamgen. DO NOT EDIT.\n// versions:\n// \tstreamgen v1.2.3\n// source: specs/s.yaml\n\npackage p\n"
	if !strings.HasPrefix(src, wantHead) {
		t.Errorf("header:\n%s", src[:min(len(src), 200)])
	}
	for _, want := range []string{
		fmt.Sprintf("_ = sgimpl.EnforceVersion(%d - sgimpl.MinVersion)", version.GenVersion),
		fmt.Sprintf("_ = sgimpl.EnforceVersion(sgimpl.MaxVersion - %d)", version.GenVersion),
		"var _ serdes.Record = (*R)(nil)",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("records file lacks %q", want)
		}
	}
	if _, ok := files[recordsTestFile]; !ok {
		t.Errorf("tests are on by default")
	}
	files, err = Generate(p, Config{OmitVersionMarkers: true, OmitTests: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files[recordsTestFile]; ok {
		t.Errorf("OmitTests still wrote %s", recordsTestFile)
	}
	if strings.Contains(string(files[recordsFile]), "versions:") {
		t.Errorf("OmitVersionMarkers still wrote versions")
	}
}

func TestNumbered(t *testing.T) {
	if got := numbered([]byte("a\nb")); got != "    1  a\n    2  b\n" {
		t.Errorf("numbered = %q", got)
	}
}
