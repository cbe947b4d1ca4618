package serdes

import (
	"fmt"
	"strconv"
)

// Avro schema resolution (the Avro specification's "Schema Resolution"):
// bytes written with one schema (the writer's, fetched from the registry
// by id) are read as another (the reader's, the app's generated schema).
// ResolveAvro compiles the two into a plan once per writer schema; the
// plan transcodes the writer's bytes into the reader's encoding, which the
// generated decoder of the reader's schema then reads. So the fast path
// stays one generated decoder, and resolution is a generic interpreter
// that cannot panic on any writer schema.
//
// The rules: record fields are matched by name (or a reader field's
// aliases); writer-only fields are skipped; reader-only fields take their
// default, and a reader field with neither a writer field nor a default is
// an error at resolution. int promotes to long, float and double, long to
// float and double, float to double, string and bytes to each other. An
// enum symbol is matched by name; one the reader lacks takes the reader
// enum's default symbol, or fails the record that carries it. A writer
// union reads each branch as the reader would read that branch's schema,
// and a branch the reader cannot read fails only the records that use it;
// a reader union reads a writer's non-union value as its first branch of
// the same type, else the first the value promotes to. Named types are
// compared by unqualified name only to pick a union branch. Logical types
// are read as their underlying types.

// AvroResolution is a compiled writer-to-reader plan.
type AvroResolution struct {
	root *avroPlan
	// identity is set when every value the writer's schema encodes is
	// already in the reader's encoding (same fields in the same order,
	// int read as long, symbols at their indexes, ...): a Java service's
	// schema for the same record, without the defaults streamgen adds, is
	// one. Such bytes need no transcode.
	identity bool
}

// Identity reports whether the writer's encoding is the reader's, so
// the reader's decoder reads the writer's bytes as they are.
func (a *AvroResolution) Identity() bool { return a.identity }

// ResolveAvro compiles the resolution of writer schema text against
// reader schema text. The error says why the two cannot be resolved,
// naming the field.
func ResolveAvro(writer, reader string) (*AvroResolution, error) {
	w, err := parseAvroSchema(writer)
	if err != nil {
		return nil, fmt.Errorf("writer schema: %w", err)
	}
	r, err := parseAvroSchema(reader)
	if err != nil {
		return nil, fmt.Errorf("reader schema: %w", err)
	}
	c := &avroCompiler{plans: map[[2]*avroNode]*avroPlan{}}
	root, err := c.plan(w, r)
	if err != nil {
		return nil, err
	}
	return &AvroResolution{root: root, identity: root.identity(map[*avroPlan]bool{})}, nil
}

// Transcode appends to dst the reader's encoding of b, one value written
// with the writer's schema. Errors are *DecodeError with the field path
// and the offset in b.
func (a *AvroResolution) Transcode(dst, b []byte) ([]byte, error) {
	rest, out, err := a.root.run(b, dst, 0)
	if err == nil && len(rest) > 0 {
		err = AvroTrailing(rest)
	}
	return out, Locate(err, b)
}

// avroOp is what a plan node does.
type avroOp uint8

const (
	opCopyVarint avroOp = iota // int or long to int or long
	opCopyBool
	opCopyFloat
	opCopyDouble
	opCopyRaw   // string or bytes
	opCopyFixed // size bytes
	opNull
	opLongToFloat
	opLongToDouble
	opFloatToDouble
	opRecord
	opEnum
	opArray
	opMap
	opWriterUnion
	opToReaderUnion
	opFail
)

// avroPlan is one node of a resolution plan.
type avroPlan struct {
	op   avroOp
	size int
	// fields are the writer's fields of a record, in writer order, and
	// inOrder is set when their targets ascend, so the reader's fields
	// are written as the writer's are read.
	fields  []planField
	inOrder bool
	// defaults are the encoded defaults of the reader's fields, nil for a
	// field the writer has.
	defaults [][]byte
	nReader  int
	// enumMap maps a writer symbol index to the reader's (-1: none).
	enumMap  []int
	enumSyms []string
	// elem plans an array's items or a map's values, branches a writer
	// union's branches.
	elem     *avroPlan
	branches []*avroPlan
	// index is the reader union branch written before elem.
	index int
	// fail is the error of an opFail.
	fail string
}

type planField struct {
	name   string
	target int // reader field index, -1: skip
	plan   *avroPlan
	skip   *avroNode
}

type avroCompiler struct {
	plans map[[2]*avroNode]*avroPlan
}

// plan compiles the resolution of w against r. A record pair is memoized
// before its fields compile, so recursive types terminate.
func (c *avroCompiler) plan(w, r *avroNode) (*avroPlan, error) {
	key := [2]*avroNode{w, r}
	if p := c.plans[key]; p != nil {
		return p, nil
	}
	if w.kind == avroUnion {
		p := &avroPlan{op: opWriterUnion}
		c.plans[key] = p
		for _, wb := range w.branches {
			bp, err := c.plan(wb, r)
			if err != nil {
				bp = &avroPlan{op: opFail, fail: err.Error()}
			}
			p.branches = append(p.branches, bp)
		}
		return p, nil
	}
	if r.kind == avroUnion {
		i := unionBranch(w, r)
		if i < 0 {
			return nil, fmt.Errorf("the writer's %s matches no branch of the reader's union", w.describe())
		}
		inner, err := c.plan(w, r.branches[i])
		if err != nil {
			return nil, err
		}
		return &avroPlan{op: opToReaderUnion, index: i, elem: inner}, nil
	}
	if op, ok := promotion(w.kind, r.kind); ok && w.size == r.size {
		return &avroPlan{op: op, size: w.size}, nil
	}
	if w.kind != r.kind || w.size != r.size {
		return nil, fmt.Errorf("the writer's %s cannot be read as the reader's %s", w.describe(), r.describe())
	}
	p := &avroPlan{}
	c.plans[key] = p
	return p, c.composite(p, w, r)
}

// composite fills p, the plan of a record, enum, array or map.
func (c *avroCompiler) composite(p *avroPlan, w, r *avroNode) error {
	var err error
	switch w.kind {
	case avroEnum:
		p.op, p.enumSyms = opEnum, w.symbols
		for _, s := range w.symbols {
			to := r.enumDef
			for i, rs := range r.symbols {
				if rs == s {
					to = i
				}
			}
			p.enumMap = append(p.enumMap, to)
		}
	case avroArray, avroMap:
		p.op = opArray
		if w.kind == avroMap {
			p.op = opMap
		}
		p.elem, err = c.plan(w.elem, r.elem)
	case avroRecord:
		p.op = opRecord
		err = c.record(p, w, r)
	}
	return err
}

// record compiles a record pair's fields.
func (c *avroCompiler) record(p *avroPlan, w, r *avroNode) error {
	p.nReader, p.inOrder = len(r.fields), true
	p.defaults = make([][]byte, len(r.fields))
	has := make([]bool, len(r.fields))
	last := -1
	for _, wf := range w.fields {
		pf := planField{name: wf.name, target: readerField(r, wf.name)}
		if pf.target < 0 {
			pf.skip = wf.typ
			p.fields = append(p.fields, pf)
			continue
		}
		var err error
		if pf.plan, err = c.plan(wf.typ, r.fields[pf.target].typ); err != nil {
			return fmt.Errorf("field %s: %w", wf.name, err)
		}
		has[pf.target] = true
		p.inOrder = p.inOrder && pf.target > last
		last = pf.target
		p.fields = append(p.fields, pf)
	}
	for i, rf := range r.fields {
		if has[i] {
			continue
		}
		if rf.def == nil {
			return fmt.Errorf("field %s: the writer's record %s has no such field and the reader's gives no default", rf.name, w.name)
		}
		d, err := encodeDefault(nil, rf.def, rf.typ, 0)
		if err != nil {
			return fmt.Errorf("field %s: %w", rf.name, err)
		}
		p.defaults[i] = d
	}
	return nil
}

// readerField is the index of the reader field named name, or aliased to
// it, or -1.
func readerField(r *avroNode, name string) int {
	for i, f := range r.fields {
		if f.name == name {
			return i
		}
	}
	for i, f := range r.fields {
		for _, a := range f.aliases {
			if a == name {
				return i
			}
		}
	}
	return -1
}

// promotion is the plan of a primitive writer type read as the primitive
// reader type, when Avro allows it.
func promotion(w, r avroKind) (avroOp, bool) {
	switch {
	case w == r:
		op, ok := map[avroKind]avroOp{avroNull: opNull, avroBoolean: opCopyBool, avroInt: opCopyVarint, avroLong: opCopyVarint,
			avroFloat: opCopyFloat, avroDouble: opCopyDouble, avroBytes: opCopyRaw, avroString: opCopyRaw, avroFixed: opCopyFixed}[w]
		return op, ok
	case w == avroInt && r == avroLong:
		return opCopyVarint, true
	case (w == avroInt || w == avroLong) && r == avroFloat:
		return opLongToFloat, true
	case (w == avroInt || w == avroLong) && r == avroDouble:
		return opLongToDouble, true
	case w == avroFloat && r == avroDouble:
		return opFloatToDouble, true
	case (w == avroString && r == avroBytes) || (w == avroBytes && r == avroString):
		return opCopyRaw, true
	}
	return 0, false
}

// unionBranch is the reader union's branch a writer value of schema w is
// read as: the first of the same type, else the first w promotes to.
func unionBranch(w, r *avroNode) int {
	for i, b := range r.branches {
		if b.kind == w.kind && (b.name == "" || b.short() == w.short()) {
			return i
		}
	}
	for i, b := range r.branches {
		if _, ok := promotion(w.kind, b.kind); ok && b.kind != w.kind {
			return i
		}
	}
	return -1
}

// run transcodes one value from in, appending it to out.
func (p *avroPlan) run(in, out []byte, depth int) ([]byte, []byte, error) {
	var err error
	switch p.op {
	case opNull:
		return in, out, nil
	case opCopyVarint, opCopyBool, opCopyFloat, opCopyDouble, opCopyRaw, opCopyFixed:
		rest, err := skipPrim(p.op, p.size, in)
		if err != nil {
			return in, out, err
		}
		return rest, append(out, in[:len(in)-len(rest)]...), nil
	case opLongToFloat, opLongToDouble:
		var v int64
		if v, in, err = ReadAvroLong(in); err != nil {
			return in, out, err
		}
		if p.op == opLongToFloat {
			return in, AppendAvroFloat32(out, float32(v)), nil
		}
		return in, AppendAvroFloat64(out, float64(v)), nil
	case opFloatToDouble:
		var v float32
		if v, in, err = ReadAvroFloat32(in); err != nil {
			return in, out, err
		}
		return in, AppendAvroFloat64(out, float64(v)), nil
	case opFail:
		return in, out, newErr(in, p.fail)
	}
	if depth > MaxDepth {
		return in, out, TooDeep(in)
	}
	return p.runComposite(in, out, depth)
}

// runComposite is run for records, enums, arrays, maps and unions.
func (p *avroPlan) runComposite(in, out []byte, depth int) ([]byte, []byte, error) {
	switch p.op {
	case opRecord:
		return p.runRecord(in, out, depth)
	case opEnum:
		i, rest, err := ReadAvroIndex(in, len(p.enumMap), "enum symbol")
		if err != nil {
			return in, out, err
		}
		if p.enumMap[i] < 0 {
			return in, out, newErr(in, "enum symbol "+strconv.Quote(p.enumSyms[i])+" is not a symbol of the reader's enum, which has no default")
		}
		return rest, AppendAvroLong(out, int64(p.enumMap[i])), nil
	case opWriterUnion:
		i, rest, err := ReadAvroIndex(in, len(p.branches), "union")
		if err != nil {
			return in, out, err
		}
		return p.branches[i].run(rest, out, depth+1)
	case opToReaderUnion:
		return p.elem.run(in, AppendAvroLong(out, int64(p.index)), depth+1)
	}
	return p.runBlocks(in, out, depth)
}

// runBlocks transcodes an array or a map, one output block per input
// block (counts only: the items' sizes change).
func (p *avroPlan) runBlocks(in, out []byte, depth int) ([]byte, []byte, error) {
	rest, err := avroBlocks(in, func(n int64) { out = AppendAvroLong(out, n) }, func(b []byte, i int) ([]byte, error) {
		var err error
		var key []byte
		if p.op == opMap {
			if key, b, err = readAvroRaw(b); err != nil {
				return b, err
			}
			out = append(AppendAvroLong(out, int64(len(key))), key...)
		}
		if b, out, err = p.elem.run(b, out, depth+1); err != nil {
			if p.op == opMap {
				return b, WrapKey(err, string(key))
			}
			return b, WrapIndex(err, i)
		}
		return b, nil
	})
	if err != nil {
		return in, out, err
	}
	return rest, append(out, 0), nil
}

// runRecord transcodes a record: the reader's fields in the reader's
// order, writer-only fields skipped, reader-only ones their defaults.
// When the writer's fields come in the reader's order, each is written
// as it is read; otherwise they are transcoded in the writer's order past
// the output's end and copied back in the reader's.
func (p *avroPlan) runRecord(in, out []byte, depth int) ([]byte, []byte, error) {
	var err error
	if p.inOrder {
		next := 0
		for _, f := range p.fields {
			if f.target < 0 {
				if in, err = skipValue(f.skip, in, depth+1); err != nil {
					return in, out, WrapField(err, f.name)
				}
				continue
			}
			for ; next < f.target; next++ {
				out = append(out, p.defaults[next]...)
			}
			next++
			if in, out, err = f.plan.run(in, out, depth+1); err != nil {
				return in, out, WrapField(err, f.name)
			}
		}
		for ; next < p.nReader; next++ {
			out = append(out, p.defaults[next]...)
		}
		return in, out, nil
	}
	start := len(out)
	var small [64][2]int // no allocation for most records
	segs := small[:min(p.nReader, len(small))]
	if p.nReader > len(small) {
		segs = make([][2]int, p.nReader)
	}
	for _, f := range p.fields {
		if f.target < 0 {
			in, err = skipValue(f.skip, in, depth+1)
		} else {
			at := len(out)
			in, out, err = f.plan.run(in, out, depth+1)
			segs[f.target] = [2]int{at, len(out)}
		}
		if err != nil {
			return in, out, WrapField(err, f.name)
		}
	}
	mid := len(out)
	for i, s := range segs {
		if p.defaults[i] != nil {
			out = append(out, p.defaults[i]...)
		} else {
			out = append(out, out[s[0]:s[1]]...)
		}
	}
	n := copy(out[start:], out[mid:])
	return in, out[:start+n], nil
}

// identity reports whether p copies every value it reads as it is. A
// plan met again (a recursive type) is assumed to, so the answer is for
// the whole of p.
func (p *avroPlan) identity(seen map[*avroPlan]bool) bool {
	if seen[p] {
		return true
	}
	seen[p] = true
	switch p.op {
	case opCopyVarint, opCopyBool, opCopyFloat, opCopyDouble, opCopyRaw, opCopyFixed, opNull:
		return true
	case opRecord:
		if !p.inOrder || len(p.fields) != p.nReader {
			return false
		}
		for _, f := range p.fields {
			if f.target < 0 || !f.plan.identity(seen) {
				return false
			}
		}
		return true
	case opEnum:
		for i, to := range p.enumMap {
			if to != i {
				return false
			}
		}
		return true
	case opArray, opMap:
		return p.elem.identity(seen)
	case opWriterUnion:
		for i, b := range p.branches {
			if b.op != opToReaderUnion || b.index != i || !b.elem.identity(seen) {
				return false
			}
		}
		return true
	}
	return false
}

// skipPrim consumes one primitive value of a copy op.
func skipPrim(op avroOp, size int, in []byte) ([]byte, error) {
	var err error
	switch op {
	case opCopyVarint:
		_, in, err = ReadAvroLong(in)
	case opCopyBool:
		_, in, err = ReadAvroBool(in)
	case opCopyFloat, opCopyDouble, opCopyFixed:
		n := map[avroOp]int{opCopyFloat: 4, opCopyDouble: 8, opCopyFixed: size}[op]
		if len(in) < n {
			return in, errShort(in)
		}
		in = in[n:]
	case opCopyRaw:
		_, in, err = readAvroRaw(in)
	}
	return in, err
}

// avroSkipOps are the copy ops of the primitive kinds, for skipValue.
var avroSkipOps = map[avroKind]avroOp{avroBoolean: opCopyBool, avroInt: opCopyVarint, avroLong: opCopyVarint,
	avroFloat: opCopyFloat, avroDouble: opCopyDouble, avroBytes: opCopyRaw, avroString: opCopyRaw, avroFixed: opCopyFixed}

// skipValue consumes one value of writer schema n: a field the reader
// does not have.
func skipValue(n *avroNode, in []byte, depth int) ([]byte, error) {
	if op, ok := avroSkipOps[n.kind]; ok {
		return skipPrim(op, n.size, in)
	}
	if depth > MaxDepth {
		return in, TooDeep(in)
	}
	var err error
	switch n.kind {
	case avroRecord:
		for _, f := range n.fields {
			if in, err = skipValue(f.typ, in, depth+1); err != nil {
				return in, WrapField(err, f.name)
			}
		}
	case avroEnum:
		_, in, err = ReadAvroIndex(in, len(n.symbols), "enum symbol")
	case avroUnion:
		var i int
		if i, in, err = ReadAvroIndex(in, len(n.branches), "union"); err == nil {
			in, err = skipValue(n.branches[i], in, depth+1)
		}
	case avroArray, avroMap:
		in, err = avroBlocks(in, nil, func(b []byte, _ int) ([]byte, error) {
			if n.kind == avroMap {
				if _, b, err = readAvroRaw(b); err != nil {
					return b, err
				}
			}
			return skipValue(n.elem, b, depth+1)
		})
	}
	return in, err
}
