package specfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// jobj is a JSON object that remembers the order of its keys: the key
// order of spec/schema.json is the canonical key order of a spec.
type jobj struct {
	keys []string
	m    map[string]any
}

// decodeOrdered decodes JSON keeping object key order.
func decodeOrdered(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return decodeValue(d)
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &jobj{m: map[string]any{}}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			ks := k.(string)
			o.keys = append(o.keys, ks)
			o.m[ks] = v
		}
		_, err := d.Token() // '}'
		return o, err
	case json.Delim('['):
		var a []any
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token() // ']'
		return a, err
	}
	return tok, nil
}

// schema is the part of a JSON Schema the formatter needs: for an object,
// its properties in order and the schemas of its values; for an array, its
// items. The alternatives of oneOf/anyOf are merged.
type schema struct {
	order      []string           // property names in schema order
	props      map[string]*schema // property schemas
	additional *schema            // schema of values under other names (maps)
	items      *schema            // array items
	// opFirst marks the step: its one operation key comes first, then
	// name and doc (the schema lists those first, but the operation says
	// what the step is).
	opFirst bool
}

type schemaBuilder struct {
	root *jobj
	defs map[string]*schema // resolved $defs, so recursive refs terminate
}

func buildSchema(raw []byte) (*schema, error) {
	v, err := decodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("specfmt: reading the spec schema: %w", err)
	}
	root, ok := v.(*jobj)
	if !ok {
		return nil, fmt.Errorf("specfmt: the spec schema is not an object")
	}
	b := &schemaBuilder{root: root, defs: map[string]*schema{}}
	return b.build(root), nil
}

func (b *schemaBuilder) build(v any) *schema {
	o, ok := v.(*jobj)
	if !ok {
		return nil
	}
	if ref, ok := o.m["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		if !found {
			return nil
		}
		if s, ok := b.defs[name]; ok {
			return s
		}
		s := &schema{props: map[string]*schema{}, opFirst: name == "step"}
		b.defs[name] = s // before filling: refs may recurse
		defs, _ := b.root.m["$defs"].(*jobj)
		if defs != nil {
			b.fill(s, defs.m[name])
		}
		return s
	}
	s := &schema{props: map[string]*schema{}}
	b.fill(s, o)
	return s
}

// fill merges the object schema v into s.
func (b *schemaBuilder) fill(s *schema, v any) {
	o, ok := v.(*jobj)
	if !ok {
		return
	}
	if _, ok := o.m["$ref"]; ok {
		b.merge(s, b.build(o))
		return
	}
	if props, ok := o.m["properties"].(*jobj); ok {
		for _, k := range props.keys {
			if _, seen := s.props[k]; !seen {
				s.order = append(s.order, k)
				s.props[k] = b.build(props.m[k])
			}
		}
	}
	if add, ok := o.m["additionalProperties"].(*jobj); ok && s.additional == nil {
		s.additional = b.build(add)
	}
	if items, ok := o.m["items"].(*jobj); ok && s.items == nil {
		s.items = b.build(items)
	}
	for _, alt := range []string{"oneOf", "anyOf"} {
		if alts, ok := o.m[alt].([]any); ok {
			for _, a := range alts {
				b.fill(s, a)
			}
		}
	}
}

// merge copies what t knows into s (t may still be filling: recursion).
func (b *schemaBuilder) merge(s, t *schema) {
	if t == nil {
		return
	}
	for _, k := range t.order {
		if _, seen := s.props[k]; !seen {
			s.order = append(s.order, k)
			s.props[k] = t.props[k]
		}
	}
	if s.additional == nil {
		s.additional = t.additional
	}
	if s.items == nil {
		s.items = t.items
	}
	s.opFirst = s.opFirst || t.opFirst
}

// child is the schema of the value under key, or nil.
func (s *schema) child(key string) *schema {
	if s == nil {
		return nil
	}
	if c, ok := s.props[key]; ok {
		return c
	}
	return s.additional
}

// rank orders keys: known properties by schema order, unknown ones after
// them (keeping their order: the sort is stable). Maps of user names
// (records, topics, fields) have no properties and keep the author's order.
func (s *schema) rank(key string) int {
	if s == nil || len(s.order) == 0 {
		return 0
	}
	for i, k := range s.order {
		if k == key {
			if s.opFirst {
				if k == "name" || k == "doc" {
					return len(s.order) + i
				}
				return 0 // the operation
			}
			return i
		}
	}
	return 2 * len(s.order)
}
