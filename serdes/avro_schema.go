package serdes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A parsed Avro schema (.avsc), as schema resolution needs it: the
// writer's schema comes from the registry, so the parser accepts the whole
// of the Avro specification (named references, namespaces, recursive
// types, every primitive, fixed, logical types, which resolution ignores)
// and refuses malformed text with an error, never a panic.

// avroKind is the type of an Avro schema node.
type avroKind uint8

const (
	avroNull avroKind = iota
	avroBoolean
	avroInt
	avroLong
	avroFloat
	avroDouble
	avroBytes
	avroString
	avroRecord
	avroEnum
	avroArray
	avroMap
	avroUnion
	avroFixed
)

var avroPrimitives = map[string]avroKind{
	"null": avroNull, "boolean": avroBoolean, "int": avroInt, "long": avroLong,
	"float": avroFloat, "double": avroDouble, "bytes": avroBytes, "string": avroString,
}

func (k avroKind) String() string {
	for n, p := range avroPrimitives {
		if p == k {
			return n
		}
	}
	return [...]string{avroRecord: "record", avroEnum: "enum", avroArray: "array", avroMap: "map", avroUnion: "union", avroFixed: "fixed"}[k]
}

// avroNode is one schema node. Named types are shared by every reference.
type avroNode struct {
	kind avroKind
	name string // full name of a record, enum or fixed
	// fields of a record.
	fields []avroField
	// symbols of an enum, and the index of its default symbol (-1: none).
	symbols []string
	enumDef int
	// elem is an array's items or a map's values.
	elem *avroNode
	// branches of a union.
	branches []*avroNode
	// size of a fixed.
	size int
}

type avroField struct {
	name    string
	typ     *avroNode
	def     json.RawMessage // nil: no default
	aliases []string
}

// short is a named type's unqualified name.
func (n *avroNode) short() string { return n.name[strings.LastIndexByte(n.name, '.')+1:] }

// describe names the node for errors.
func (n *avroNode) describe() string {
	if n.name != "" {
		return n.kind.String() + " " + n.name
	}
	return n.kind.String()
}

// avroParser holds the named types defined so far.
type avroParser struct {
	names map[string]*avroNode
}

// parseAvroSchema parses schema text.
func parseAvroSchema(text string) (*avroNode, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	p := &avroParser{names: map[string]*avroNode{}}
	return p.parse(v, "")
}

func (p *avroParser) parse(v any, ns string) (*avroNode, error) {
	switch v := v.(type) {
	case string:
		return p.ref(v, ns)
	case []any:
		u := &avroNode{kind: avroUnion}
		for _, b := range v {
			n, err := p.parse(b, ns)
			if err != nil {
				return nil, err
			}
			u.branches = append(u.branches, n)
		}
		return u, nil
	case map[string]any:
		return p.object(v, ns)
	}
	return nil, fmt.Errorf("want a schema, got %v", v)
}

// ref is a primitive type name or a reference to a named type.
func (p *avroParser) ref(name, ns string) (*avroNode, error) {
	if k, ok := avroPrimitives[name]; ok {
		return &avroNode{kind: k}, nil
	}
	if !strings.Contains(name, ".") && ns != "" {
		if n := p.names[ns+"."+name]; n != nil {
			return n, nil
		}
	}
	if n := p.names[name]; n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("unknown type %q", name)
}

func (p *avroParser) object(o map[string]any, ns string) (*avroNode, error) {
	t, ok := o["type"].(string)
	if !ok {
		if inner, ok := o["type"]; ok {
			return p.parse(inner, ns) // {"type": {...}}: a schema as its type
		}
		return nil, fmt.Errorf("schema object without a type")
	}
	switch t {
	case "record", "error":
		return p.record(o, ns)
	case "enum":
		n, _, err := p.named(o, ns, avroEnum)
		if err != nil {
			return nil, err
		}
		return n, p.enum(n, o)
	case "fixed":
		n, _, err := p.named(o, ns, avroFixed)
		if err != nil {
			return nil, err
		}
		size, ok := o["size"].(json.Number)
		s, err := size.Int64()
		if !ok || err != nil || s < 0 || s > 1<<30 {
			return nil, fmt.Errorf("fixed %s: want a size", n.name)
		}
		n.size = int(s)
		return n, nil
	case "array", "map":
		key := map[string]string{"array": "items", "map": "values"}[t]
		elem, err := p.parse(o[key], ns)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", t, key, err)
		}
		n := &avroNode{kind: avroArray, elem: elem}
		if t == "map" {
			n.kind = avroMap
		}
		return n, nil
	}
	return p.ref(t, ns) // a primitive with attributes, as logical types are
}

// named registers a named type of kind from its name and namespace, and
// returns it with the namespace its own definitions inherit.
func (p *avroParser) named(o map[string]any, ns string, kind avroKind) (*avroNode, string, error) {
	name, _ := o["name"].(string)
	if name == "" {
		return nil, "", fmt.Errorf("%s without a name", kind)
	}
	if space, ok := o["namespace"].(string); ok && !strings.Contains(name, ".") {
		ns = space
	}
	full := name
	if !strings.Contains(name, ".") && ns != "" {
		full = ns + "." + name
	}
	if p.names[full] != nil {
		return nil, "", fmt.Errorf("type %s is defined twice", full)
	}
	n := &avroNode{kind: kind, name: full, enumDef: -1}
	p.names[full] = n
	return n, full[:max(strings.LastIndexByte(full, '.'), 0)], nil
}

func (p *avroParser) record(o map[string]any, ns string) (*avroNode, error) {
	n, inner, err := p.named(o, ns, avroRecord)
	if err != nil {
		return nil, err
	}
	fields, ok := o["fields"].([]any)
	if !ok {
		return nil, fmt.Errorf("record %s: want fields", n.name)
	}
	for _, f := range fields {
		fo, ok := f.(map[string]any)
		name, _ := fo["name"].(string)
		if !ok || name == "" {
			return nil, fmt.Errorf("record %s: a field without a name", n.name)
		}
		typ, err := p.parse(fo["type"], inner)
		if err != nil {
			return nil, fmt.Errorf("record %s: field %s: %w", n.name, name, err)
		}
		fl := avroField{name: name, typ: typ}
		if d, ok := fo["default"]; ok {
			if fl.def, err = json.Marshal(d); err != nil {
				return nil, err
			}
		}
		if as, ok := fo["aliases"].([]any); ok {
			for _, a := range as {
				if s, ok := a.(string); ok {
					fl.aliases = append(fl.aliases, s)
				}
			}
		}
		n.fields = append(n.fields, fl)
	}
	return n, nil
}

func (p *avroParser) enum(n *avroNode, o map[string]any) error {
	syms, ok := o["symbols"].([]any)
	if !ok {
		return fmt.Errorf("enum %s: want symbols", n.name)
	}
	def, _ := o["default"].(string)
	for i, s := range syms {
		str, ok := s.(string)
		if !ok {
			return fmt.Errorf("enum %s: a symbol that is not a string", n.name)
		}
		if str == def {
			n.enumDef = i
		}
		n.symbols = append(n.symbols, str)
	}
	return nil
}

// encodeDefault is the Avro binary encoding of a field's default value,
// the JSON def, under schema n (for a union, the first branch it fits).
func encodeDefault(out []byte, def json.RawMessage, n *avroNode, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("default nested deeper than %d", MaxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(def))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return encodeJSONValue(out, v, n, depth)
}

func encodeJSONValue(out []byte, v any, n *avroNode, depth int) ([]byte, error) {
	bad := func() ([]byte, error) { return nil, fmt.Errorf("default %v does not fit %s", v, n.describe()) }
	switch n.kind {
	case avroNull:
		if v != nil {
			return bad()
		}
		return out, nil
	case avroBoolean:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		return AppendAvroBool(out, b), nil
	case avroInt, avroLong:
		num, ok := v.(json.Number)
		i, err := num.Int64()
		if !ok || err != nil {
			return bad()
		}
		return AppendAvroLong(out, i), nil
	case avroFloat, avroDouble:
		num, ok := v.(json.Number)
		f, err := num.Float64()
		if !ok || err != nil {
			return bad()
		}
		if n.kind == avroFloat {
			return AppendAvroFloat32(out, float32(f)), nil
		}
		return AppendAvroFloat64(out, f), nil
	case avroString:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return AppendAvroString(out, s), nil
	case avroBytes, avroFixed:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		raw := make([]byte, 0, len(s))
		for _, r := range s { // one code point 0-255 per byte, as Avro writes bytes defaults
			raw = append(raw, byte(r))
		}
		if n.kind == avroFixed {
			if len(raw) != n.size {
				return bad()
			}
			return append(out, raw...), nil
		}
		return AppendAvroBytes(out, raw), nil
	case avroEnum:
		s, _ := v.(string)
		for i, sym := range n.symbols {
			if sym == s {
				return AppendAvroLong(out, int64(i)), nil
			}
		}
		return bad()
	case avroUnion:
		// The first branch the value fits (Avro 1.12; earlier specs
		// required the first branch, which this still reads).
		for i, b := range n.branches {
			if enc, err := encodeJSONValue(AppendAvroLong(out, int64(i)), v, b, depth); err == nil {
				return enc, nil
			}
		}
		return bad()
	}
	return encodeJSONComposite(out, v, n, depth)
}

// encodeJSONComposite is encodeJSONValue for arrays, maps and records.
func encodeJSONComposite(out []byte, v any, n *avroNode, depth int) ([]byte, error) {
	var err error
	switch n.kind {
	case avroArray:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("default %v is not an array", v)
		}
		if len(items) > 0 {
			out = AppendAvroLong(out, int64(len(items)))
		}
		for _, it := range items {
			if out, err = encodeJSONValue(out, it, n.elem, depth+1); err != nil {
				return nil, err
			}
		}
		return append(out, 0), nil
	case avroMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("default %v is not an object", v)
		}
		if len(m) > 0 {
			out = AppendAvroLong(out, int64(len(m)))
		}
		for _, k := range sortedMapKeys(m) {
			if out, err = encodeJSONValue(AppendAvroString(out, k), m[k], n.elem, depth+1); err != nil {
				return nil, err
			}
		}
		return append(out, 0), nil
	case avroRecord:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("default %v is not an object", v)
		}
		for _, f := range n.fields {
			fv, ok := m[f.name]
			switch {
			case ok:
				out, err = encodeJSONValue(out, fv, f.typ, depth+1)
			case f.def != nil:
				out, err = encodeDefault(out, f.def, f.typ, depth+1)
			default:
				err = fmt.Errorf("record default without field %s, which has no default", f.name)
			}
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no default for %s", n.describe())
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
