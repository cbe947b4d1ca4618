package gen

import (
	"go/ast"
	"go/parser"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// nodeFuncs lists every user function of a node.
func nodeFuncs(n *spec.Node) []*spec.Func {
	var out []*spec.Func
	for _, f := range []*spec.Func{n.Fn, n.Init, n.Merger, n.Adder, n.Subtractor} {
		if f != nil {
			out = append(out, f)
		}
	}
	if n.Sink != nil && n.Sink.Chooser != nil {
		out = append(out, n.Sink.Chooser)
	}
	if j := n.Join; j != nil {
		for _, f := range []*spec.Func{j.KeyMapper, j.ForeignKey} {
			if f != nil {
				out = append(out, f)
			}
		}
	}
	for _, c := range n.Cogroup {
		if c.Aggregator != nil {
			out = append(out, c.Aggregator)
		}
	}
	for _, br := range n.Branches {
		if br.Fn != nil {
			out = append(out, br.Fn)
		}
	}
	return out
}

// roleSig describes a user function's Go signature for its role.
type roleSig struct {
	params  []jen.Code // named params
	results []jen.Code
	// desc identifies the signature, so one function asserted twice with
	// the same signature is asserted once.
	desc string
}

// signature returns the Go signature a user function of role must have on
// node n (with input key k, value v; out are the output types).
func (g *topoGen) signature(role spec.FuncRole, k, v, k2, v2, a *spec.Type) roleSig {
	sig := g.signatureOf(role, k, v, k2, v2, a)
	if role == spec.RoleInit {
		k, v, k2, v2 = nil, nil, nil, nil // an initializer's signature depends only on the aggregate
	}
	sig.desc = string(role)
	for _, t := range []*spec.Type{k, v, k2, v2, a} {
		if t != nil {
			sig.desc += "|" + g.typeDesc(t)
		} else {
			sig.desc += "|-"
		}
	}
	return sig
}

func (g *topoGen) signatureOf(role spec.FuncRole, k, v, k2, v2, a *spec.Type) roleSig {
	p := func(name string, t *spec.Type) jen.Code { return jen.Id(name).Add(g.typ(t)) }
	switch role {
	case spec.RolePredicate:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.Bool()}}
	case spec.RoleKeyValueMap:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{g.typ(k2), g.typ(v2)}}
	case spec.RoleValueMap:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{g.typ(v2)}}
	case spec.RoleFlatMap:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.Index().Qual(pathSgstream, "KeyValue").Types(g.typ(k2), g.typ(v2))}}
	case spec.RoleFlatMapValues:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.Index().Add(g.typ(v2))}}
	case spec.RoleKeySelect:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{g.typ(k2)}}
	case spec.RoleAction:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: nil}
	case spec.RoleInit:
		return roleSig{params: nil, results: []jen.Code{g.typ(a)}}
	case spec.RoleAggregate:
		return roleSig{params: []jen.Code{p("key", k), p("value", v), p("agg", a)}, results: []jen.Code{g.typ(a)}}
	case spec.RoleReduce:
		return roleSig{params: []jen.Code{p("agg", v), p("value", v)}, results: []jen.Code{g.typ(v)}}
	case spec.RoleMerge:
		return roleSig{params: []jen.Code{p("key", k), p("a", a), p("b", a)}, results: []jen.Code{g.typ(a)}}
	case spec.RoleJoin:
		return roleSig{params: []jen.Code{p("key", k), p("left", v), p("right", v2)}, results: []jen.Code{g.typ(a)}}
	case spec.RoleTopic:
		return roleSig{params: []jen.Code{p("key", k), p("value", v)}, results: []jen.Code{jen.String()}}
	case spec.RoleForeignKey:
		return roleSig{params: []jen.Code{p("value", v)}, results: []jen.Code{g.typ(k2)}}
	}
	panic("gen: no signature for role " + string(role))
}

// fn renders a user function reference or an inline expression as a Go
// expression of the role's signature, and records the assertion.
func (g *topoGen) fn(n *spec.Node, f *spec.Func, sig roleSig) jen.Code {
	if f.Name != "" {
		ft := jen.Func().Params(sig.params...)
		switch len(sig.results) {
		case 0:
		case 1:
			ft = ft.Add(sig.results[0])
		default:
			ft = ft.Parens(jen.List(sig.results...))
		}
		key := f.Name + "|" + sig.desc
		if _, ok := g.asserts[key]; !ok {
			g.asserts[key] = &funcAssert{name: f.Name, sig: ft, node: n, pos: f.Pos, role: f.Role}
		}
		return jen.Id(f.Name)
	}
	g.noteImports(f)
	g.m.inline = append(g.m.inline, &funcAssert{name: f.Expr, node: n, pos: f.Pos, role: f.Role})
	lit := jen.Func().Params(sig.params...)
	switch len(sig.results) {
	case 0:
		return lit.Block(jen.Op(f.Expr))
	case 1:
		lit = lit.Add(sig.results[0])
	default:
		lit = lit.Parens(jen.List(sig.results...))
	}
	return lit.Block(jen.Return(jen.Op(f.Expr)))
}

// noteImports finds the spec imports an inline expression uses, so the
// generated file imports them (jennifer only imports what Qual names).
func (g *topoGen) noteImports(f *spec.Func) {
	expr, err := parser.ParseExpr(f.Expr)
	if err != nil {
		return // spec already reported it
	}
	byName := map[string]string{}
	for _, path := range g.prog.Imports {
		byName[path[strings.LastIndex(path, "/")+1:]] = path
	}
	ast.Inspect(expr, func(x ast.Node) bool {
		if sel, ok := x.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, ok := byName[id.Name]; ok {
					if _, seen := g.m.imports[path]; !seen {
						g.m.imports[path] = sel.Sel.Name
					}
				}
			}
		}
		return true
	})
}
