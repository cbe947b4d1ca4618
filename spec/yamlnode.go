package spec

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file holds the strict, position-keeping helpers that read yaml.Node
// trees. Every helper reports its own problems and returns ok=false so that
// callers can skip dependent checks instead of cascading errors.

func (p *parser) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: p.file, Line: 1, Col: 1}
	}
	return Pos{File: p.file, Line: max(n.Line, 1), Col: max(n.Column, 1)}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// prefix joins a context with a message: "app: unknown key".
func prefix(ctx string) string {
	if ctx == "" {
		return ""
	}
	return ctx + ": "
}

// noAlias rejects YAML aliases: they would let a small file expand into a
// huge tree, and streamgen specs have no need for them.
func (p *parser) noAlias(n *yaml.Node, ctx string) bool {
	if n.Kind == yaml.AliasNode {
		p.errf(p.pos(n), "%saliases are not supported", prefix(ctx))
		return false
	}
	return true
}

type entry struct {
	key, val *yaml.Node
}

// entries returns the key/value pairs of a mapping in document order,
// reporting duplicate and non-string keys.
func (p *parser) entries(n *yaml.Node, ctx string) ([]entry, bool) {
	if !p.noAlias(n, ctx) {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		p.errf(p.pos(n), "%swant a mapping, got %s", prefix(ctx), kindName(n))
		return nil, false
	}
	seen := map[string]*yaml.Node{}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			p.errf(p.pos(k), "%swant a string key, got %s", prefix(ctx), kindName(k))
			continue
		}
		if k.Tag == "!!merge" {
			p.errf(p.pos(k), "%smerge keys are not supported", prefix(ctx))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.errf(p.pos(k), "%sduplicate key %q (first at %d:%d)", prefix(ctx), k.Value, first.Line, first.Column)
			continue
		}
		seen[k.Value] = k
		out = append(out, entry{k, v})
	}
	return out, true
}

// obj is a mapping whose keys have been checked against an allowed set.
type obj struct {
	p   *parser
	ctx string
	n   *yaml.Node
	m   map[string]entry
}

// object reads a mapping with a fixed set of keys; unknown keys are errors
// at the key. It returns nil (having reported why) if n is not a mapping.
func (p *parser) object(n *yaml.Node, ctx string, allowed ...string) *obj {
	es, ok := p.entries(n, ctx)
	if !ok {
		return nil
	}
	o := &obj{p: p, ctx: ctx, n: n, m: map[string]entry{}}
	for _, e := range es {
		if !contains(allowed, e.key.Value) {
			p.unknownKey(e.key, ctx, allowed)
			continue
		}
		o.m[e.key.Value] = e
	}
	return o
}

func (p *parser) unknownKey(k *yaml.Node, ctx string, allowed []string) {
	if dym := didYouMean(k.Value, allowed); dym != "" {
		p.errf(p.pos(k), "%sunknown key %q%s", prefix(ctx), k.Value, dym)
		return
	}
	s := sortedCopy(allowed)
	p.errf(p.pos(k), "%sunknown key %q, want one of %s", prefix(ctx), k.Value, strings.Join(s, ", "))
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (o *obj) has(k string) bool { _, ok := o.m[k]; return ok }

func (o *obj) val(k string) *yaml.Node {
	if e, ok := o.m[k]; ok {
		return e.val
	}
	return nil
}

// keyPos is the position of key k, or of the mapping if k is absent.
func (o *obj) keyPos(k string) Pos {
	if e, ok := o.m[k]; ok {
		return o.p.pos(e.key)
	}
	return o.p.pos(o.n)
}

// valPos is the position of the value of k, or of the mapping.
func (o *obj) valPos(k string) Pos {
	if e, ok := o.m[k]; ok {
		return o.p.pos(e.val)
	}
	return o.p.pos(o.n)
}

func (o *obj) missing(k string) {
	o.p.errf(o.p.pos(o.n), "%smissing required key %q", prefix(o.ctx), k)
}

// scalarString reads a non-null scalar as a string.
func (p *parser) scalarString(n *yaml.Node, ctx string) (string, bool) {
	if !p.noAlias(n, ctx) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errf(p.pos(n), "%swant a string, got %s", prefix(ctx), kindName(n))
		return "", false
	}
	return n.Value, true
}

func (o *obj) keyCtx(k string) string {
	if o.ctx == "" {
		return k
	}
	return o.ctx + ": " + k
}

// str reads an optional string; ok is false if absent or invalid.
func (o *obj) str(k string) (string, bool) {
	v := o.val(k)
	if v == nil {
		return "", false
	}
	return o.p.scalarString(v, o.keyCtx(k))
}

// reqStr reads a required string.
func (o *obj) reqStr(k string) (string, bool) {
	if !o.has(k) {
		o.missing(k)
		return "", false
	}
	return o.str(k)
}

// int reads an optional integer within [lo, hi].
func (o *obj) int(k string, lo, hi int64) (int64, bool) {
	v := o.val(k)
	if v == nil {
		return 0, false
	}
	return o.p.intNode(v, o.keyCtx(k), lo, hi)
}

func (p *parser) intNode(v *yaml.Node, ctx string, lo, hi int64) (int64, bool) {
	if !p.noAlias(v, ctx) {
		return 0, false
	}
	var x int64
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&x) != nil {
		p.errf(p.pos(v), "%swant an integer, got %s", prefix(ctx), kindName(v))
		return 0, false
	}
	if x < lo || x > hi {
		if hi == math.MaxInt64 {
			p.errf(p.pos(v), "%s%d is out of range, want at least %d", prefix(ctx), x, lo)
		} else {
			p.errf(p.pos(v), "%s%d is out of range, want %d..%d", prefix(ctx), x, lo, hi)
		}
		return 0, false
	}
	return x, true
}

// bool reads an optional boolean.
func (o *obj) bool(k string, def bool) bool {
	v := o.val(k)
	if v == nil || !o.p.noAlias(v, o.keyCtx(k)) {
		return def
	}
	var b bool
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
		o.p.errf(o.p.pos(v), "%swant true or false, got %s", prefix(o.keyCtx(k)), kindName(v))
		return def
	}
	return b
}

// dur reads an optional Go duration (non-negative). A bare 0 is accepted.
func (o *obj) dur(k string) (time.Duration, bool) {
	v := o.val(k)
	if v == nil || !o.p.noAlias(v, o.keyCtx(k)) {
		return 0, false
	}
	ctx := o.keyCtx(k)
	if v.Kind == yaml.ScalarNode && v.Tag == "!!int" && v.Value == "0" {
		return 0, true
	}
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		o.p.errf(o.p.pos(v), "%swant a duration such as \"500ms\" or \"5m\", got %s", prefix(ctx), kindName(v))
		return 0, false
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		o.p.errf(o.p.pos(v), "%sinvalid duration %q, want a Go duration such as \"500ms\" or \"5m\"", prefix(ctx), v.Value)
		return 0, false
	}
	if d < 0 {
		o.p.errf(o.p.pos(v), "%sduration %s is negative", prefix(ctx), v.Value)
		return 0, false
	}
	return d, true
}

// enum reads an optional string that must be one of want.
func (o *obj) enum(k string, want ...string) (string, bool) {
	s, ok := o.str(k)
	if !ok {
		return "", false
	}
	if !contains(want, s) {
		o.p.errf(o.valPos(k), "%sinvalid value %q, want %s", prefix(o.keyCtx(k)), s, strings.Join(want, " or "))
		return "", false
	}
	return s, true
}

// list reads an optional sequence.
func (o *obj) list(k string) ([]*yaml.Node, bool) {
	v := o.val(k)
	if v == nil {
		return nil, false
	}
	return o.p.seq(v, o.keyCtx(k))
}

func (p *parser) seq(v *yaml.Node, ctx string) ([]*yaml.Node, bool) {
	if !p.noAlias(v, ctx) {
		return nil, false
	}
	if v.Kind != yaml.SequenceNode {
		p.errf(p.pos(v), "%swant a list, got %s", prefix(ctx), kindName(v))
		return nil, false
	}
	return v.Content, true
}
