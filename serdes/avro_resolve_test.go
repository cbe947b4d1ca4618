package serdes

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

// The resolution rules of the Avro 1.12 specification ("Schema
// Resolution"), each checked three ways: hamba/avro/v2 encodes a value
// with the writer's schema; ResolveAvro transcodes it into the reader's
// encoding, which must decode, with the reader's schema alone, to the
// value the rule says; and it must equal byte for byte what hamba writes
// for the value its own resolving decoder reads, where hamba resolves the
// pair as Java does. hamba writes arrays and maps as blocks with negative
// counts and byte sizes, where streamgen writes plain counts; its bytes
// are compared after an identity transcode, which rewrites only the block
// headers.

// hambaSchema parses schema text with a cache of its own, so the writer's
// and the reader's versions of one named type do not meet.
func hambaSchema(t testing.TB, text string) avro.Schema {
	t.Helper()
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatalf("hamba parse %s: %v", text, err)
	}
	return s
}

// rec is the schema text of a record R with the given field texts.
func rec(name string, fields ...string) string {
	return `{"type":"record","name":"` + name + `","fields":[` + strings.Join(fields, ",") + `]}`
}

// fld is the text of a field; extra is more of its attributes.
func fld(name, typ string, extra ...string) string {
	return `{"name":"` + name + `","type":` + typ + strings.Join(append([]string{""}, extra...), ",") + `}`
}

type resolveCase struct {
	name           string
	writer, reader string
	value          any // written with the writer's schema by hamba
	want           any // what the reader reads, as hamba decodes the reader's schema into any
	// hamba says why hamba does not resolve the pair as Java's Avro
	// does, when it does not: the byte cross-check is skipped, the value
	// check is not.
	hamba string
}

// check runs one case, with a hamba codec cache of its own: hamba keys
// its codecs by schema fingerprint, in which a named reference is only its
// name, so the writer's and the reader's versions of a type would share
// one.
func (c resolveCase) check(t *testing.T) {
	t.Helper()
	api := avro.Config{}.Freeze()
	w, r := hambaSchema(t, c.writer), hambaSchema(t, c.reader)
	in, err := api.Marshal(w, c.value)
	if err != nil {
		t.Fatalf("hamba encode with the writer's schema: %v", err)
	}
	res, err := ResolveAvro(c.writer, c.reader)
	if err != nil {
		t.Fatalf("ResolveAvro: %v", err)
	}
	got, err := res.Transcode(nil, in)
	if err != nil {
		t.Fatalf("Transcode(% x): %v", in, err)
	}
	var v any
	if err := api.Unmarshal(r, got, &v); err != nil {
		t.Fatalf("the transcoded % x is not the reader's encoding: %v", got, err)
	}
	if !reflect.DeepEqual(v, c.want) {
		t.Errorf("reader reads %#v, want %#v", v, c.want)
	}
	if c.hamba != "" {
		return
	}
	composite, err := avro.NewSchemaCompatibility().Resolve(r, w)
	if err != nil {
		t.Fatalf("hamba resolves nothing here (%v): mark the case", err)
	}
	var hv any
	if err := api.Unmarshal(composite, in, &hv); err != nil {
		t.Fatalf("hamba's resolving decoder: %v", err)
	}
	want, err := avro.Config{}.Freeze().Marshal(hambaSchema(t, c.reader), hv) // Resolve changes r's nodes
	if err != nil {
		t.Fatalf("hamba encode %#v with the reader's schema: %v", hv, err)
	}
	if want, err = plainBlocks(c.reader, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("transcoded % x, hamba's resolution % x", got, want)
	}
}

// plainBlocks rewrites b's array and map blocks with plain counts.
func plainBlocks(schema string, b []byte) ([]byte, error) {
	id, err := ResolveAvro(schema, schema)
	if err != nil {
		return nil, err
	}
	return id.Transcode(nil, b)
}

func runResolveCases(t *testing.T, cases []resolveCase) {
	for _, c := range cases {
		t.Run(c.name, c.check)
	}
}

func TestAvroResolvePromotions(t *testing.T) {
	one := func(typ string) string { return rec("R", fld("a", typ)) }
	runResolveCases(t, []resolveCase{
		{name: "int to long", writer: one(`"int"`), reader: one(`"long"`), value: map[string]any{"a": -7}, want: map[string]any{"a": int64(-7)}},
		{name: "int to float", writer: one(`"int"`), reader: one(`"float"`), value: map[string]any{"a": 1 << 24}, want: map[string]any{"a": float32(1 << 24)}},
		{name: "int to double", writer: one(`"int"`), reader: one(`"double"`), value: map[string]any{"a": -3}, want: map[string]any{"a": float64(-3)}},
		{name: "long to float", writer: one(`"long"`), reader: one(`"float"`), value: map[string]any{"a": int64(1) << 40}, want: map[string]any{"a": float32(1 << 40)}},
		{name: "long to double", writer: one(`"long"`), reader: one(`"double"`), value: map[string]any{"a": int64(-1) << 53}, want: map[string]any{"a": float64(-(1 << 53))}},
		{name: "float to double", writer: one(`"float"`), reader: one(`"double"`), value: map[string]any{"a": float32(1.1)}, want: map[string]any{"a": float64(float32(1.1))}},
		{name: "string to bytes", writer: one(`"string"`), reader: one(`"bytes"`), value: map[string]any{"a": "hé"}, want: map[string]any{"a": []byte("hé")}},
		{name: "bytes to string", writer: one(`"bytes"`), reader: one(`"string"`), value: map[string]any{"a": []byte("hé")}, want: map[string]any{"a": "hé"}},
		{name: "same types", writer: one(`"boolean"`), reader: one(`"boolean"`), value: map[string]any{"a": true}, want: map[string]any{"a": true}},
		{name: "fixed", writer: one(`{"type":"fixed","name":"F","size":3}`), reader: one(`{"type":"fixed","name":"F","size":3}`), value: map[string]any{"a": [3]byte{1, 2, 3}}, want: map[string]any{"a": [3]byte{1, 2, 3}}},
		{name: "logical type read as its underlying type", writer: one(`{"type":"long","logicalType":"timestamp-micros"}`), reader: one(`"long"`), value: map[string]any{"a": int64(5)}, want: map[string]any{"a": int64(5)}, hamba: "hamba refuses logical types of different names"},
	})
	for _, bad := range [][2]string{{`"long"`, `"int"`}, {`"double"`, `"float"`}, {`"string"`, `"long"`}, {`"float"`, `"long"`}, {`"boolean"`, `"int"`},
		{`{"type":"fixed","name":"F","size":3}`, `{"type":"fixed","name":"F","size":4}`}, {`{"type":"array","items":"int"}`, `{"type":"map","values":"int"}`}} {
		_, err := ResolveAvro(one(bad[0]), one(bad[1]))
		if err == nil || !strings.HasPrefix(err.Error(), "field a: the writer's ") {
			t.Errorf("%s read as %s: %v, want an error naming field a", bad[0], bad[1], err)
		}
	}
}

// skipped are writer-only fields of every type, each followed by a
// field both have, so a wrong skip shows in what follows.
var skipped = []struct {
	typ   string
	value any
}{
	{`"boolean"`, true}, {`"int"`, -300}, {`"long"`, int64(1) << 50}, {`"float"`, float32(2.5)},
	{`"double"`, 3.25}, {`"bytes"`, []byte{0, 1, 2}}, {`"string"`, "skip me"},
	{`{"type":"fixed","name":"F","size":4}`, [4]byte{9, 8, 7, 6}},
	{`{"type":"enum","name":"E","symbols":["X","Y"]}`, "Y"},
	{rec("Inner", fld("p", `"string"`), fld("q", `{"type":"array","items":"long"}`)), map[string]any{"p": "in", "q": []any{int64(1), int64(2)}}},
	{`{"type":"array","items":` + rec("It", fld("n", `"int"`)) + `}`, []any{map[string]any{"n": 1}, map[string]any{"n": 2}}},
	{`{"type":"map","values":{"type":"array","items":"string"}}`, map[string]any{"k": []any{"a", "b"}}},
	{`["null","string"]`, "u"}, {`["null","string"]`, nil},
	{`["long",` + rec("U", fld("z", `"double"`)) + `]`, map[string]any{"U": map[string]any{"z": 1.5}}},
}

func TestAvroResolveWriterFieldSkipped(t *testing.T) {
	reader := rec("R", fld("a", `"string"`), fld("b", `"long"`))
	var cases []resolveCase
	for i, s := range skipped {
		writer := rec("R", fld("a", `"string"`), fld("x", s.typ), fld("b", `"long"`))
		cases = append(cases, resolveCase{name: fmt.Sprintf("%d %s", i, s.typ), writer: writer, reader: reader,
			value: map[string]any{"a": "A", "x": s.value, "b": int64(-9)}, want: map[string]any{"a": "A", "b": int64(-9)}})
	}
	runResolveCases(t, cases)
}

func TestAvroResolveReaderDefaults(t *testing.T) {
	writer := rec("R", fld("a", `"string"`))
	cases := []struct {
		typ, def string
		want     any
	}{
		{`"boolean"`, `true`, true}, {`"int"`, `-5`, -5}, {`"long"`, `9007199254740993`, int64(9007199254740993)},
		{`"float"`, `1.5`, float32(1.5)}, {`"double"`, `-0.25`, -0.25}, {`"string"`, `"dé"`, "dé"},
		{`"bytes"`, `"\u00ff\u0000a"`, []byte{0xff, 0, 'a'}},
		{`{"type":"fixed","name":"F","size":2}`, `"\u0001\u00fe"`, [2]byte{1, 0xfe}},
		{`{"type":"enum","name":"E","symbols":["X","Y"]}`, `"Y"`, "Y"},
		{`{"type":"array","items":"int"}`, `[1,2]`, []any{1, 2}},
		{`{"type":"map","values":"long"}`, `{"k":3}`, map[string]any{"k": int64(3)}},
		{rec("D", fld("p", `"string"`), fld("q", `"int"`, `"default":4`)), `{"p":"x"}`, map[string]any{"p": "x", "q": 4}},
		{`["null","string"]`, `null`, nil},
	}
	var rc []resolveCase
	for _, c := range cases {
		reader := rec("R", fld("d", c.typ, `"default":`+c.def), fld("a", `"string"`))
		rc = append(rc, resolveCase{name: c.typ + " " + c.def, writer: writer, reader: reader,
			value: map[string]any{"a": "A"}, want: map[string]any{"d": c.want, "a": "A"}})
		if c.typ == `"long"` {
			rc[len(rc)-1].hamba = "hamba's default goes through float64: 9007199254740992"
		}
	}
	runResolveCases(t, rc)

	// Avro 1.12: a union's default is of the first branch it fits (hamba
	// parses only the earlier rule, the first branch).
	res, err := ResolveAvro(rec("R"), rec("R", fld("d", `["null","string"]`, `"default":"s"`), fld("l", `["null","long"]`, `"default":null`)))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := res.Transcode(nil, nil); err != nil || !bytes.Equal(out, []byte{2, 2, 's', 0}) {
		t.Errorf("union defaults: % x, %v", out, err)
	}
	// A writer's null field, which hamba's generic decoder cannot hold.
	if res, err = ResolveAvro(rec("R", fld("n", `"null"`), fld("a", `"string"`)), rec("R", fld("a", `"string"`))); err != nil {
		t.Fatal(err)
	}
	if out, err := res.Transcode(nil, []byte{2, 'a'}); err != nil || !bytes.Equal(out, []byte{2, 'a'}) {
		t.Errorf("a skipped null field: % x, %v", out, err)
	}

	_, err = ResolveAvro(writer, rec("R", fld("a", `"string"`), fld("n", `"int"`)))
	if err == nil || err.Error() != "field n: the writer's record R has no such field and the reader's gives no default" {
		t.Errorf("reader field without a default: %v", err)
	}
	_, err = ResolveAvro(writer, rec("R", fld("a", `"string"`), fld("n", `"int"`, `"default":"x"`)))
	if err == nil || !strings.Contains(err.Error(), "field n: default x does not fit int") {
		t.Errorf("reader default of the wrong type: %v", err)
	}
}

func TestAvroResolveFieldMatching(t *testing.T) {
	runResolveCases(t, []resolveCase{
		{name: "by alias", writer: rec("R", fld("old", `"int"`)), reader: rec("R", fld("new", `"long"`, `"aliases":["old"]`)),
			value: map[string]any{"old": 3}, want: map[string]any{"new": int64(3)}, hamba: "hamba matches no aliases of fields"},
		{name: "name before alias", writer: rec("R", fld("a", `"int"`), fld("b", `"int"`)),
			reader: rec("R", fld("b", `"int"`, `"aliases":["a"]`), fld("a", `"int"`, `"default":0`)),
			value:  map[string]any{"a": 1, "b": 2}, want: map[string]any{"a": 1, "b": 2},
			hamba: "hamba matches writer field a to the alias before reader field a"},
		{name: "reordered", writer: rec("R", fld("a", `"int"`), fld("b", `"string"`), fld("c", `{"type":"array","items":"long"}`)),
			reader: rec("R", fld("c", `{"type":"array","items":"double"}`), fld("x", `"int"`, `"default":7`), fld("a", `"long"`), fld("b", `"bytes"`)),
			value:  map[string]any{"a": 1, "b": "bee", "c": []any{int64(5)}},
			want:   map[string]any{"c": []any{5.0}, "x": 7, "a": int64(1), "b": []byte("bee")}},
	})
}

func TestAvroResolveEnums(t *testing.T) {
	w := rec("R", fld("e", `{"type":"enum","name":"E","symbols":["A","B","C"]}`))
	withDefault := rec("R", fld("e", `{"type":"enum","name":"E","symbols":["C","A"],"default":"A"}`))
	runResolveCases(t, []resolveCase{
		{name: "by name", writer: w, reader: withDefault, value: map[string]any{"e": "C"}, want: map[string]any{"e": "C"}},
		{name: "unknown symbol to the default", writer: w, reader: withDefault, value: map[string]any{"e": "B"}, want: map[string]any{"e": "A"}},
	})
	noDefault := rec("R", fld("e", `{"type":"enum","name":"E","symbols":["A","C"]}`))
	res, err := ResolveAvro(w, noDefault)
	if err != nil {
		t.Fatalf("an enum the reader lacks a symbol of resolves (only records with it fail): %v", err)
	}
	if out, err := res.Transcode(nil, []byte{4}); err != nil || !bytes.Equal(out, []byte{2}) {
		t.Errorf("symbol C = % x, %v", out, err)
	}
	_, err = res.Transcode(nil, []byte{2})
	wantDecodeErr(t, err, "e", 0, `enum symbol "B" is not a symbol of the reader's enum, which has no default`)
}

func TestAvroResolveUnions(t *testing.T) {
	opt := func(typ string) string { return rec("R", fld("u", typ)) }
	runResolveCases(t, []resolveCase{
		{name: "writer union to reader type", writer: opt(`["null","string"]`), reader: opt(`"string"`), value: map[string]any{"u": "s"}, want: map[string]any{"u": "s"},
			hamba: "hamba refuses a writer union whose every branch the reader cannot read"},
		{name: "writer type to reader union", writer: opt(`"string"`), reader: opt(`["null","string"]`), value: map[string]any{"u": "s"}, want: map[string]any{"u": "s"}},
		{name: "null to reader union", writer: opt(`"null"`), reader: opt(`["null","string"]`), value: map[string]any{"u": nil}, want: map[string]any{"u": nil},
			hamba: "hamba's generic decoder cannot hold a null field"},
		{name: "null branch", writer: opt(`["null","string"]`), reader: opt(`["null","string"]`), value: map[string]any{"u": nil}, want: map[string]any{"u": nil}},
		{name: "branches reordered", writer: opt(`["null","string"]`), reader: opt(`["string","null"]`), value: map[string]any{"u": nil}, want: map[string]any{"u": nil}},
		{name: "branch promoted", writer: opt(`["null","int"]`), reader: opt(`["null","long"]`), value: map[string]any{"u": 5}, want: map[string]any{"u": int64(5)}},
		{name: "to the first branch it promotes to", writer: opt(`"int"`), reader: opt(`["null","string","double","long"]`), value: map[string]any{"u": 5}, want: map[string]any{"u": 5.0},
			hamba: "hamba's generic union"},
		// Java's ResolvingGrammarGenerator picks a branch of the same
		// type before one the value promotes to; hamba takes the first
		// the value promotes to, as the specification's text reads.
		{name: "exact branch before promotion", writer: opt(`"long"`), reader: opt(`["double","long"]`), value: map[string]any{"u": int64(5)}, want: map[string]any{"u": int64(5)},
			hamba: "hamba picks the first branch the value promotes to"},
		{name: "named branch by unqualified name", writer: opt(`["null",` + `{"type":"record","name":"a.P","fields":[{"name":"x","type":"int"}]}]`),
			reader: opt(`["null",{"type":"record","name":"b.Q","fields":[]},{"type":"record","name":"b.P","fields":[{"name":"x","type":"long"}]}]`),
			value:  map[string]any{"u": map[string]any{"a.P": map[string]any{"x": 1}}}, want: map[string]any{"u": map[string]any{"b.P": map[string]any{"x": int64(1)}}}, hamba: "hamba compares full names"},
	})
	// A writer branch the reader cannot read fails the records that use
	// it, not the resolution.
	res, err := ResolveAvro(opt(`["null","string"]`), opt(`"string"`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = res.Transcode(nil, []byte{0})
	wantDecodeErr(t, err, "u", 1, "the writer's null cannot be read as the reader's string")
	if _, err := ResolveAvro(opt(`"boolean"`), opt(`["null","string"]`)); err == nil ||
		err.Error() != "field u: the writer's boolean matches no branch of the reader's union" {
		t.Errorf("a writer type no reader branch takes: %v", err)
	}
}

func TestAvroResolveNested(t *testing.T) {
	innerW := rec("In", fld("keep", `"int"`), fld("extra", `["null","string"]`))
	innerR := rec("In", fld("keep", `"long"`), fld("added", `"string"`, `"default":"d"`))
	w := rec("R", fld("one", innerW), fld("list", `{"type":"array","items":"In"}`), fld("byKey", `{"type":"map","values":["null","In"]}`))
	r := rec("R", fld("one", innerR), fld("list", `{"type":"array","items":"In"}`), fld("byKey", `{"type":"map","values":["null","In"]}`))
	in := func(k int) map[string]any { return map[string]any{"keep": k, "extra": "x"} }
	out := func(k int64) map[string]any { return map[string]any{"keep": k, "added": "d"} }
	runResolveCases(t, []resolveCase{{name: "records in records, arrays and maps", writer: w, reader: r,
		value: map[string]any{"one": in(1), "list": []any{in(2), in(3)}, "byKey": map[string]any{"k": map[string]any{"In": in(4)}}},
		want:  map[string]any{"one": out(1), "list": []any{out(2), out(3)}, "byKey": map[string]any{"k": map[string]any{"In": out(4)}}}}})

	// Recursive types terminate at resolution and at run time.
	node := func(extra string) string {
		return rec("Node", fld("v", `"int"`), fld("next", `["null","Node"]`)+extra)
	}
	runResolveCases(t, []resolveCase{{name: "recursive", writer: node(`,{"name":"w","type":"string"}`), reader: node(""),
		value: map[string]any{"v": 1, "w": "a", "next": map[string]any{"Node": map[string]any{"v": 2, "w": "b", "next": nil}}},
		want:  map[string]any{"v": 1, "next": map[string]any{"Node": map[string]any{"v": 2, "next": nil}}},
		hamba: "hamba's Resolve overflows the stack on a recursive record"}})
}

// TestAvroResolveErrors checks a record that breaks off names the field
// path and the offset in the writer's bytes.
func TestAvroResolveErrors(t *testing.T) {
	w := rec("R", fld("a", `"string"`), fld("m", `{"type":"map","values":{"type":"array","items":`+rec("I", fld("s", `"string"`))+`}}`))
	r := rec("R", fld("m", `{"type":"map","values":{"type":"array","items":`+rec("I", fld("s", `"bytes"`))+`}}`))
	res, err := ResolveAvro(w, r)
	if err != nil {
		t.Fatal(err)
	}
	good := hambaBytes(t, w, map[string]any{"a": "x", "m": map[string]any{"eu": []any{map[string]any{"s": "ok"}, map[string]any{"s": "long one"}}}})
	if _, err := res.Transcode(nil, good); err != nil {
		t.Fatal(err)
	}
	// Cut in the second item's string: its length then runs past the end.
	at := bytes.Index(good, []byte("long one")) - 1
	_, err = res.Transcode(nil, good[:at+3])
	wantDecodeErr(t, err, `m["eu"][1].s`, at, "declared length exceeds the remaining input")
	// A skipped field breaking off names itself.
	_, err = res.Transcode(nil, []byte{0x0a, 'x'})
	wantDecodeErr(t, err, "a", 0, "declared length exceeds the remaining input")
	_, err = res.Transcode(nil, append(good, 0))
	wantDecodeErr(t, err, "", len(good), "1 bytes after the value")

	for _, bad := range []string{`{`, `"nope"`, `{"type":"record","name":"R"}`, `{"type":"record","name":"R","fields":[{"name":"a","type":"X"}]}`,
		`{"type":"fixed","name":"F"}`, `{"type":"enum","name":"E","symbols":[1]}`, `[{"type":"record"}]`} {
		if _, err := ResolveAvro(bad, r); err == nil || !strings.HasPrefix(err.Error(), "writer schema: ") {
			t.Errorf("writer schema %s: %v", bad, err)
		}
	}
}

// TestAvroResolvePlanReused runs one compiled plan over many records of
// both field orders and checks each against hamba, and that a run
// allocates nothing.
func TestAvroResolvePlanReused(t *testing.T) {
	w := rec("R", fld("a", `"int"`), fld("x", `"string"`), fld("b", `["null","string"]`))
	r := rec("R", fld("a", `"long"`), fld("b", `["null","string"]`), fld("c", `"int"`, `"default":1`))
	swapped := rec("R", fld("b", `["null","string"]`), fld("c", `"int"`, `"default":1`), fld("a", `"double"`))
	for _, reader := range []string{r, swapped} {
		res, err := ResolveAvro(w, reader)
		if err != nil {
			t.Fatal(err)
		}
		rs, ws := hambaSchema(t, reader), hambaSchema(t, w)
		composite, err := avro.NewSchemaCompatibility().Resolve(rs, ws)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for i := 0; i < 50; i++ {
			v := map[string]any{"a": i * 1000, "x": strings.Repeat("x", i), "b": nil}
			if i%2 == 1 {
				v["b"] = fmt.Sprint("b", i)
			}
			in := hambaBytes(t, w, v)
			if out, err = res.Transcode(out[:0], in); err != nil {
				t.Fatal(err)
			}
			var hv any
			if err := avro.Unmarshal(composite, in, &hv); err != nil {
				t.Fatal(err)
			}
			if want, _ := avro.Marshal(rs, hv); !bytes.Equal(out, want) {
				t.Fatalf("record %d: % x, hamba % x", i, out, want)
			}
		}
	}
	in := hambaBytes(t, w, map[string]any{"a": 1, "x": "x", "b": "b"})
	out := make([]byte, 0, 64)
	for _, reader := range []string{r, swapped} {
		res, _ := ResolveAvro(w, reader)
		if n := testing.AllocsPerRun(100, func() { out, _ = res.Transcode(out[:0], in) }); n != 0 {
			t.Errorf("Transcode allocates %v times per record", n)
		}
	}
}

// FuzzAvroTranscode feeds arbitrary bytes to a plan that skips, promotes,
// reorders and defaults: no panic, every error a decode error, and what
// it accepts is the reader's encoding.
func FuzzAvroTranscode(f *testing.F) {
	w := rec("R", fld("a", `"int"`), fld("x", `{"type":"map","values":["null",{"type":"array","items":"float"}]}`),
		fld("e", `{"type":"enum","name":"E","symbols":["A","B"]}`), fld("n", `["null","R"]`))
	r := rec("R", fld("e", `{"type":"enum","name":"E","symbols":["B"],"default":"B"}`), fld("a", `"double"`), fld("n", `["null","R"]`),
		fld("d", `"string"`, `"default":"d"`))
	res, err := ResolveAvro(w, r)
	if err != nil {
		f.Fatal(err)
	}
	rs := hambaSchema(f, r)
	f.Add(hambaBytes(f, w, map[string]any{"a": 1, "x": map[string]any{"k": []any{float32(1)}}, "e": "A",
		"n": map[string]any{"R": map[string]any{"a": 2, "x": map[string]any{}, "e": "B", "n": nil}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := res.Transcode(nil, b)
		if err != nil {
			if !errors.Is(err, ErrDecode) {
				t.Fatalf("%v is not a decode error", err)
			}
			return
		}
		var v any
		if err := avro.Unmarshal(rs, out, &v); err != nil {
			t.Fatalf("accepted % x, transcoded to % x, which the reader's schema does not read: %v", b, out, err)
		}
	})
}

// TestAvroResolveIdentity: a writer whose encoding is the reader's needs
// no transcode, as a Java service's schema of the same record without
// streamgen's defaults.
func TestAvroResolveIdentity(t *testing.T) {
	enum := func(syms string) string { return `{"type":"enum","name":"E","symbols":[` + syms + `]}` }
	reader := rec("R", fld("a", `"long"`, `"default":0`), fld("e", enum(`"X","Y"`), `"default":"X"`),
		fld("o", `["null","R"]`, `"default":null`), fld("l", `{"type":"array","items":"bytes"}`, `"default":[]`))
	for _, c := range []struct {
		writer string
		want   bool
	}{
		{reader, true},
		{rec("R", fld("a", `"int"`), fld("e", enum(`"X"`)), fld("o", `["null","R"]`), fld("l", `{"type":"array","items":"string"}`)), true},
		{rec("R", fld("a", `"long"`), fld("e", enum(`"Y","X"`)), fld("o", `["null","R"]`), fld("l", `{"type":"array","items":"bytes"}`)), false},
		{rec("R", fld("a", `"long"`), fld("e", enum(`"X"`)), fld("o", `"R"`), fld("l", `{"type":"array","items":"bytes"}`)), false},
		{rec("R", fld("a", `"long"`), fld("e", enum(`"X"`)), fld("o", `["R","null"]`), fld("l", `{"type":"array","items":"bytes"}`)), false},
		{rec("R", fld("a", `"long"`), fld("e", enum(`"X"`)), fld("o", `["null","R"]`)), false},
		{rec("R", fld("e", enum(`"X"`)), fld("a", `"long"`), fld("o", `["null","R"]`), fld("l", `{"type":"array","items":"bytes"}`)), false},
		{rec("R", fld("a", `"long"`), fld("e", enum(`"X"`)), fld("o", `["null","R"]`), fld("l", `{"type":"array","items":"bytes"}`), fld("z", `"int"`)), false},
	} {
		res, err := ResolveAvro(c.writer, reader)
		if err != nil {
			t.Fatal(err)
		}
		if res.Identity() != c.want {
			t.Errorf("writer %s: identity %v, want %v", c.writer, res.Identity(), c.want)
		}
	}
	if res, _ := ResolveAvro(`"int"`, `"float"`); res.Identity() {
		t.Error("int read as float is an identity")
	}
}
