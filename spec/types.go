package spec

import "fmt"

var primitives = map[string]TypeKind{
	"string": KindString, "bytes": KindBytes, "bool": KindBool,
	"int32": KindInt32, "int64": KindInt64, "uint32": KindUint32, "uint64": KindUint64,
	"float32": KindFloat32, "float64": KindFloat64,
	"timestamp": KindTimestamp, "duration": KindDuration,
}

// reservedTypeNames cannot be used as record or enum names.
var reservedTypeNames = []string{"optional", "list", "map", "windowed", "session_windowed"}

// typeExpr is a parsed but unresolved type string.
type typeExpr struct {
	name string    // identifier, for leaves
	ctor string    // "optional", "list", "map"; "" for leaves
	elem *typeExpr // element (value type for map)
}

// parseTypeExpr parses "optional<list<Order>>" or "map<string,int64>".
func parseTypeExpr(s string) (*typeExpr, error) {
	tp := &typeLexer{s: s}
	t, err := tp.parse()
	if err != nil {
		return nil, err
	}
	if tok := tp.next(); tok != "" {
		return nil, fmt.Errorf("unexpected %q after the type", tok)
	}
	return t, nil
}

type typeLexer struct {
	s string
	i int
}

func (l *typeLexer) next() string {
	for l.i < len(l.s) && (l.s[l.i] == ' ' || l.s[l.i] == '\t') {
		l.i++
	}
	if l.i >= len(l.s) {
		return ""
	}
	c := l.s[l.i]
	if c == '<' || c == '>' || c == ',' {
		l.i++
		return string(c)
	}
	j := l.i
	for j < len(l.s) && (isIdentByte(l.s[j]) || l.s[j] >= 0x80) {
		j++
	}
	if j == l.i {
		j++ // a single unexpected byte
	}
	tok := l.s[l.i:j]
	l.i = j
	return tok
}

func isIdentByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (l *typeLexer) expect(want string) error {
	if tok := l.next(); tok != want {
		if tok == "" {
			return fmt.Errorf("want %q, got end of type", want)
		}
		return fmt.Errorf("want %q, got %q", want, tok)
	}
	return nil
}

// between parses a type that stands between the tokens open and close.
func (l *typeLexer) between(open, close string) (*typeExpr, error) {
	if err := l.expect(open); err != nil {
		return nil, err
	}
	e, err := l.parse()
	if err != nil {
		return nil, err
	}
	if err := l.expect(close); err != nil {
		return nil, err
	}
	return e, nil
}

func (l *typeLexer) parse() (*typeExpr, error) {
	tok := l.next()
	if tok == "" {
		return nil, fmt.Errorf("want a type name")
	}
	if !isIdent(tok) {
		return nil, fmt.Errorf("want a type name, got %q", tok)
	}
	switch tok {
	case "optional", "list", "windowed", "session_windowed":
		e, err := l.between("<", ">")
		if err != nil {
			return nil, err
		}
		return &typeExpr{ctor: tok, elem: e}, nil
	case "map":
		if err := l.expect("<"); err != nil {
			return nil, err
		}
		k, err := l.parse()
		if err != nil {
			return nil, err
		}
		if k.ctor != "" || k.name != "string" {
			return nil, fmt.Errorf("map keys must be string")
		}
		e, err := l.between(",", ">")
		if err != nil {
			return nil, err
		}
		return &typeExpr{ctor: "map", elem: e}, nil
	}
	return &typeExpr{name: tok}, nil
}

// isIdent reports whether s is an ASCII identifier.
func isIdent(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// resolveType parses and resolves a type string. On failure it reports one
// diagnostic and returns nil.
func (p *parser) resolveType(s string, pos Pos, ctx string) *Type {
	te, err := parseTypeExpr(s)
	if err != nil {
		p.errf(pos, "%sinvalid type %q: %v", prefix(ctx), s, err)
		return nil
	}
	return p.resolveTypeExpr(te, s, pos, ctx)
}

func (p *parser) resolveTypeExpr(te *typeExpr, s string, pos Pos, ctx string) *Type {
	switch te.ctor {
	case "windowed", "session_windowed":
		if te.elem.ctor != "" {
			p.errf(pos, "%sinvalid type %q: the key of %s must be a primitive, an enum or a record", prefix(ctx), s, te.ctor)
			return nil
		}
		e := p.resolveTypeExpr(te.elem, s, pos, ctx)
		if e == nil {
			return nil
		}
		k := KindWindowed
		if te.ctor == "session_windowed" {
			k = KindSessionWindowed
		}
		return &Type{Kind: k, Elem: e}
	case "optional":
		if te.elem.ctor == "optional" {
			p.errf(pos, "%sinvalid type %q: optional of optional", prefix(ctx), s)
			return nil
		}
		fallthrough
	case "list", "map":
		e := p.resolveTypeExpr(te.elem, s, pos, ctx)
		if e == nil {
			return nil
		}
		k := map[string]TypeKind{"optional": KindOptional, "list": KindList, "map": KindMap}[te.ctor]
		return &Type{Kind: k, Elem: e}
	}
	if k, ok := primitives[te.name]; ok {
		return &Type{Kind: k}
	}
	if r := p.records[te.name]; r != nil {
		return &Type{Kind: KindRecord, Record: r}
	}
	if e := p.enums[te.name]; e != nil {
		return &Type{Kind: KindEnum, Enum: e}
	}
	p.errf(pos, "%sunknown type %q%s", prefix(ctx), te.name, didYouMean(te.name, p.typeNames()))
	return nil
}

func (p *parser) typeNames() []string {
	var names []string
	for n := range primitives {
		names = append(names, n)
	}
	for n := range p.records {
		names = append(names, n)
	}
	for n := range p.enums {
		names = append(names, n)
	}
	return sortedCopy(names)
}

// typeString quotes a possibly nil type for messages.
func typeString(t *Type) string {
	if t == nil {
		return "?"
	}
	return t.String()
}

// hasWindowed reports whether t is or contains a windowed key type.
func hasWindowed(t *Type) bool {
	for ; t != nil; t = t.Elem {
		if t.Kind == KindWindowed || t.Kind == KindSessionWindowed {
			return true
		}
	}
	return false
}

// checkNotWindowed rejects windowed types outside keys (a topic's, or the
// key a step declares).
func (p *parser) checkNotWindowed(t *Type, pos Pos, ctx string) *Type {
	if hasWindowed(t) {
		p.errf(pos, "%swindowed types are only for keys, not %q", prefix(ctx), t)
		p.hintf("a windowed type is the key of a topic, or the key of map, flat_map, select_key, group_by or process")
		return nil
	}
	return t
}

// windowedOf is the key type of records out of a windowed aggregation.
func windowedOf(base *Type, w *Window) *Type {
	if base == nil || w == nil {
		return nil
	}
	if w.Kind == WindowSession {
		return &Type{Kind: KindSessionWindowed, Elem: base}
	}
	return &Type{Kind: KindWindowed, Elem: base}
}

// valueTypeOK reports whether a type may be a topic key or value: a
// primitive, an enum or a record.
func valueTypeOK(t *Type) bool {
	return t.Primitive() || t.Kind == KindEnum || t.Kind == KindRecord
}
