package gen

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"
	"github.com/streamgen/streamgen/spec"
)

// Import paths of the packages generated code uses. They are the only place
// gen names runtime packages: gen must not import them (that would link
// franz-go and Pebble into the generator), so generated code refers to them
// through jen.Qual with these constants.
const (
	modulePath   = "github.com/streamgen/streamgen"
	pathSerdes   = modulePath + "/serdes"
	pathSgimpl   = modulePath + "/runtime/sgimpl"
	pathSgstream = modulePath + "/runtime/sgstream"
	pathSgstate  = modulePath + "/runtime/sgstate"
	pathSgapp    = modulePath + "/runtime/sgapp"
	pathSgkafka  = modulePath + "/runtime/sgkafka"
	pathSgrun    = modulePath + "/runtime/sgrun"
	pathSgreplay = modulePath + "/runtime/sgreplay"
	pathSgquery  = modulePath + "/runtime/sgquery"
	pathSgtest   = modulePath + "/runtime/sgtest"
)

// importNames maps every streamgen import path to its package name. Each
// generated file registers all of them with ImportName, so jennifer never
// invents an alias (it cannot know the package name of a path it has not
// loaded).
var importNames = map[string]string{
	pathSerdes:   "serdes",
	pathSgimpl:   "sgimpl",
	pathSgstream: "sgstream",
	pathSgstate:  "sgstate",
	pathSgapp:    "sgapp",
	pathSgkafka:  "sgkafka",
	pathSgrun:    "sgrun",
	pathSgreplay: "sgreplay",
	pathSgquery:  "sgquery",
	pathSgtest:   "sgtest",
}

// commonInitialisms are written all upper case in Go names, following the
// Go style guide (user_id → UserID, not UserId).
var commonInitialisms = map[string]bool{
	"acl": true, "api": true, "ascii": true, "cpu": true, "css": true, "dns": true, "eof": true,
	"fk": true, "guid": true, "html": true, "http": true, "https": true, "id": true, "io": true,
	"ip": true, "json": true, "lhs": true, "qps": true, "ram": true, "rhs": true, "rpc": true,
	"sku": true, "sla": true, "smtp": true, "sql": true, "ssh": true, "tcp": true, "tls": true,
	"ttl": true, "udp": true, "ui": true, "uid": true, "uri": true, "url": true, "utf8": true,
	"uuid": true, "vm": true, "xml": true, "xmpp": true, "xsrf": true, "xss": true,
}

// GoName turns a spec name (snake_case, kebab-case, dotted, camelCase or
// UPPER_CASE) into an exported Go identifier with Go's initialisms:
// user_id → UserID, order-id → OrderID, PAID_LATE → PaidLate,
// httpServer → HTTPServer, type → Type. A name starting with a digit gets an
// X prefix (2fa → X2fa). It returns "" if the name has no letter or digit.
//
// Exported names never collide with Go keywords, which are all lower case.
func GoName(name string) string {
	var sb strings.Builder
	for _, w := range splitWords(name) {
		lw := strings.ToLower(w)
		if commonInitialisms[lw] {
			sb.WriteString(strings.ToUpper(lw))
			continue
		}
		r := []rune(lw)
		r[0] = unicode.ToUpper(r[0])
		sb.WriteString(string(r))
	}
	s := sb.String()
	if s != "" && !unicode.IsLetter([]rune(s)[0]) {
		s = "X" + s
	}
	return s
}

// splitWords splits at separators (anything but letters and digits) and at
// case changes: fooBar → foo Bar, HTTPServer → HTTP Server, v2Beta → v2 Beta.
// Digits stay with the word before them (sha256, utf8).
func splitWords(s string) []string {
	var words []string
	r := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, string(r[start:end]))
		}
		start = -1
	}
	for i, c := range r {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := r[i-1]
		switch {
		case unicode.IsUpper(c) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush(i)
			start = i
		case unicode.IsUpper(c) && unicode.IsUpper(prev) && i+1 < len(r) && unicode.IsLower(r[i+1]):
			flush(i)
			start = i
		}
	}
	flush(len(r))
	return words
}

// typeName makes the Go name of a record or enum. Those are already
// Go-style identifiers in the spec, so the author's spelling is kept (Api
// stays Api); only the first letter is upper-cased so the type is exported.
func typeName(name string) string {
	r := []rune(name)
	ok := len(r) > 0 && unicode.IsLetter(r[0])
	for _, c := range r {
		ok = ok && (unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_')
	}
	if !ok {
		return GoName(name)
	}
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// diagnostics collects the positioned problems gen finds. It is
// spec.Diagnostics under another name only to carry add and err: gen's
// problems reach callers as spec.Diagnostics, the one diagnostic type of
// streamgen, so the CLI and tests handle spec and gen problems alike.
type diagnostics spec.Diagnostics

func (d *diagnostics) add(pos spec.Pos, format string, args ...any) {
	*d = append(*d, spec.Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// err returns the diagnostics as a sorted spec.Diagnostics, or nil if there
// are none.
func (d diagnostics) err() error {
	if len(d) == 0 {
		return nil
	}
	out := spec.Diagnostics(slices.Clone(d))
	out.Sort()
	return out
}

// scope is a set of Go identifiers that must not collide: the package
// scope of the generated package, or the fields and methods of one type.
// Each name remembers what claimed it, for the error message.
type scope struct {
	names map[string]claim
}

type claim struct {
	what string // e.g. `field "user_id"`
	pos  spec.Pos
}

func newScope() *scope { return &scope{names: map[string]claim{}} }

// reserve claims goName for what (described for diagnostics, like
// `record "Order"`). On a collision it records a diagnostic at pos naming
// both claimants and returns false.
func (s *scope) reserve(d *diagnostics, goName, what string, pos spec.Pos) bool {
	if prev, ok := s.names[goName]; ok {
		where := ""
		if prev.pos.File != "" {
			where = " at " + prev.pos.String()
		}
		d.add(pos, "%s has Go name %q, already used by %s%s", what, goName, prev.what, where)
		return false
	}
	s.names[goName] = claim{what, pos}
	return true
}

// Header is the first line of every file streamgen generates. It marks the
// files streamgen owns: the CLI removes or compares only files that start
// with it, and the golden driver finds the committed generated files by it.
const Header = "// Code generated by streamgen. DO NOT EDIT."

// newFile starts a generated Go file with the standard header and every
// streamgen import name registered.
func (c *genCtx) newFile(name string) *jen.File {
	f := jen.NewFile(c.pkg)
	f.HeaderComment(strings.TrimPrefix(Header, "// "))
	if !c.cfg.OmitVersionMarkers {
		f.HeaderComment("versions:")
		f.HeaderComment("\tstreamgen " + c.cfg.ToolVersion)
	}
	f.HeaderComment("source: " + c.cfg.SpecPath)
	f.ImportNames(importNames)
	c.files[name] = f
	return f
}

// docComment renders a spec doc string (and a deprecation notice) as Go doc
// comment lines, one jen.Comment per line so multi-line docs stay // style.
// Inside a jen group (struct fields, const blocks) each item renders on its
// own line; at file level use fileDoc. fallback is used when the spec has
// no doc; with neither, nothing is emitted.
func docComment(doc, fallback string, deprecated bool, deprecatedMsg string) []jen.Code {
	var out []jen.Code
	for _, line := range docLines(doc, fallback, deprecated, deprecatedMsg) {
		out = append(out, jen.Comment(line))
	}
	return out
}

// fileDoc adds doc comment lines at file level, right before the next
// declaration.
func fileDoc(f *jen.File, doc, fallback string, deprecated bool, deprecatedMsg string) {
	for _, line := range docLines(doc, fallback, deprecated, deprecatedMsg) {
		f.Comment(line)
	}
}

func docLines(doc, fallback string, deprecated bool, deprecatedMsg string) []string {
	doc = strings.TrimSpace(doc)
	if doc == "" {
		doc = fallback
	}
	if deprecated {
		if doc != "" {
			doc += "\n\n"
		}
		doc += "Deprecated: " + deprecatedMsg
	}
	if doc == "" {
		return nil
	}
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			out = append(out, "//")
		} else {
			out = append(out, "// "+line)
		}
	}
	return out
}
