package spec

import (
	"cmp"
	"fmt"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ParseFile reads and parses the spec at path. Program.File and every
// position carry path exactly as given, so pass a relative path to keep
// diagnostics free of host data.
func ParseFile(path string) (*Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse parses, validates and resolves a spec. filename is used in
// positions only (and, when the spec has no `package`, its directory name
// becomes the package name). The error, if any, is of type Diagnostics.
func Parse(filename string, src []byte) (*Program, error) {
	p := newParser(filename)
	prog := p.parse(src)
	if len(p.diags) > 0 {
		p.diags.Sort()
		return nil, p.diags
	}
	return prog, nil
}

type parser struct {
	file  string
	diags Diagnostics
	prog  *Program

	enums   map[string]*Enum
	records map[string]*Record
	topics  map[string]*Topic
	// topicNode is the mapping that declared a topic (for its position).
	stores   map[string]*Store
	internal map[string]*InternalTopic

	// Topology state.
	nodes        map[string]*Node // every node by name
	readable     map[string]*Node // pipelines and branches, by name
	laterPipes   map[string]bool  // pipeline names not yet reached
	pipeNames    map[string]Pos   // every pipeline name
	sources      map[*Topic]*Node
	bad          map[*Node]bool  // nodes whose types could not be resolved
	keyChangedAt map[*Node]*Node // node -> the upstream node that changed the key
	// protoSeen are the protobuf problems reported (protobuf.go).
	protoSeen map[Problem]bool
}

func newParser(file string) *parser {
	return &parser{
		file:         file,
		enums:        map[string]*Enum{},
		records:      map[string]*Record{},
		topics:       map[string]*Topic{},
		stores:       map[string]*Store{},
		internal:     map[string]*InternalTopic{},
		nodes:        map[string]*Node{},
		readable:     map[string]*Node{},
		laterPipes:   map[string]bool{},
		sources:      map[*Topic]*Node{},
		bad:          map[*Node]bool{},
		keyChangedAt: map[*Node]*Node{},
	}
}

var topLevelKeys = []string{"version", "package", "imports", "app", "enums", "records", "topics", "stores", "topology"}

// nameRE is the character set of topic, store, pipeline and repartition
// names: Kafka's legal topic characters.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// checkName validates a Kafka-style name; what is e.g. "topic".
func (p *parser) checkName(pos Pos, what, name string) bool {
	if !nameRE.MatchString(name) || name == "." || name == ".." {
		p.errf(pos, "%s name %q has invalid characters, want letters, digits, '.', '_' or '-'", what, name)
		return false
	}
	if len(name) > 200 {
		p.errf(pos, "%s name %q is too long (%d characters), want at most 200", what, name, len(name))
		return false
	}
	return true
}

func (p *parser) parse(src []byte) *Program {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		p.yamlError(err)
		return nil
	}
	root := &doc
	if root.Kind == 0 || root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			p.errf(p.pos(nil), "empty spec: missing required key \"version\"")
			return nil
		}
		root = root.Content[0]
	}
	prog := &Program{Pos: p.pos(root), File: p.file}
	p.prog = prog
	// The version gates everything else: another version may mean another
	// format, so nothing else is checked if it is missing or wrong.
	if !p.checkVersion(root) {
		return nil
	}
	prog.Version = 1
	top := p.object(root, "", topLevelKeys...)
	if top == nil {
		return nil
	}

	p.parsePackage(top)
	p.parseImports(top)
	// Declarations first (names), then resolution, so that order in the
	// file does not matter for types.
	enumNodes := p.declareEnums(top.val("enums"))
	recNodes := p.declareRecords(top.val("records"))
	p.resolveEnums(enumNodes)
	p.resolveRecords(recNodes)
	p.checkRecordCycles()
	p.parseTopics(top.val("topics"))
	p.parseStores(top.val("stores"))
	if top.has("app") {
		prog.App = p.parseApp(top.val("app"))
	} else {
		p.errf(p.pos(root), "missing required key \"app\"")
		p.hintf("add an app section with at least `id: <application id>`; see %s", docURL)
	}
	if top.has("topology") {
		p.parseTopology(top.val("topology"))
	} else {
		p.errf(p.pos(root), "missing required key \"topology\"")
	}

	prog.Enums = sortedValues(p.enums)
	prog.Records = sortedValues(p.records)
	prog.Topics = sortedValues(p.topics)
	prog.Stores = sortedValues(p.stores)
	prog.InternalTopics = sortedValues(p.internal)
	return prog
}

func (p *parser) checkVersion(root *yaml.Node) bool {
	if root.Kind != yaml.MappingNode {
		p.object(root, "") // reports the kind
		return false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k, v := root.Content[i], root.Content[i+1]; k.Value == "version" {
			n, ok := p.intNode(v, "version", math.MinInt64, math.MaxInt64)
			if ok && n != 1 {
				p.errf(p.pos(v), "version: unsupported version %d, want 1", n)
				return false
			}
			return ok
		}
	}
	p.errf(p.pos(root), "missing required key \"version\"")
	p.hintf("start the file with `version: 1`; see %s", docURL)
	return false
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) yamlError(err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if m := yamlLineRE.FindStringSubmatch(line); m != nil {
			var n int
			fmt.Sscan(m[1], &n)
			p.errf(Pos{File: p.file, Line: n, Col: 1}, "invalid YAML: %s", m[2])
			continue
		}
		if line != "" && line != "yaml: unmarshal errors:" {
			p.errf(p.pos(nil), "invalid YAML: %s", strings.TrimPrefix(line, "yaml: "))
		}
	}
}

func sortedValues[T any](m map[string]*T) []*T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*T, 0, len(m))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func (p *parser) parsePackage(top *obj) {
	if name, ok := top.str("package"); ok {
		if !isIdent(name) || token.IsKeyword(name) {
			p.errf(top.valPos("package"), "package: %q is not a valid Go package name", name)
			return
		}
		p.prog.Package = name
		return
	}
	if top.has("package") {
		return
	}
	dir := filepath.Dir(p.file)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	name := filepath.Base(dir)
	if !isIdent(name) || token.IsKeyword(name) {
		p.errf(p.pos(top.n), "missing key \"package\": the directory name %q is not a valid Go package name", name)
		p.hintf("add `package: <name>` to the spec")
		return
	}
	p.prog.Package = name
}

func (p *parser) parseImports(top *obj) {
	items, ok := top.list("imports")
	if !ok {
		return
	}
	seen := map[string]bool{}
	for _, it := range items {
		s, ok := p.scalarString(it, "imports")
		if !ok {
			continue
		}
		if s == "" || strings.ContainsAny(s, " \t\"'`\\") || strings.HasPrefix(s, "/") {
			p.errf(p.pos(it), "imports: %q is not a valid Go import path", s)
			continue
		}
		if seen[s] {
			p.errf(p.pos(it), "imports: duplicate import %q", s)
			continue
		}
		seen[s] = true
		p.prog.Imports = append(p.prog.Imports, s)
	}
}

// ---- app ----

var policies = []string{string(PolicyFail), string(PolicyContinue), string(PolicyDeadLetter)}

func (p *parser) parseApp(n *yaml.Node) *App {
	app := &App{
		Pos:                    p.pos(n),
		Guarantee:              AtLeastOnce,
		OnDeserializationError: PolicyFail,
		OnProcessingError:      PolicyFail,
		InvalidTimestamp:       TimestampFail,
	}
	o := p.object(n, "app", "id", "guarantee", "commit_interval", "standby_replicas", "on_error", "invalid_timestamp", "on_start")
	if o == nil {
		return app
	}
	if id, ok := o.reqStr("id"); ok && p.checkName(o.valPos("id"), "application id", id) {
		app.ID = id
	}
	if g, ok := o.enum("guarantee", string(AtLeastOnce), string(ExactlyOnceV2)); ok {
		app.Guarantee = Guarantee(g)
	}
	if d, ok := o.dur("commit_interval"); ok {
		if d == 0 {
			p.errf(o.valPos("commit_interval"), "app: commit_interval: want a positive duration")
		}
		app.CommitInterval = d
	}
	if r, ok := o.int("standby_replicas", 0, 16); ok {
		app.StandbyReplicas = int(r)
	}
	if ts, ok := o.enum("invalid_timestamp", string(TimestampFail), string(TimestampSkip), string(TimestampPartitionTime), string(TimestampDeadLetter)); ok {
		app.InvalidTimestamp = TimestampPolicy(ts)
	}
	if items, ok := o.list("on_start"); ok {
		for _, it := range items {
			name := it.Value
			if it.Kind != yaml.ScalarNode || !isIdent(name) || token.IsKeyword(name) {
				p.errf(p.pos(it), "app: on_start: want the name of a Go function, got %q", name)
				continue
			}
			app.OnStart = append(app.OnStart, &Func{Pos: p.pos(it), Role: RoleOnStart, Name: name})
		}
	}
	if app.InvalidTimestamp == TimestampDeadLetter && !o.has("on_error") {
		p.errf(o.valPos("invalid_timestamp"), "app: invalid_timestamp is dead_letter but on_error.dead_letter_topic is not set")
		p.hintf("add `on_error: {dead_letter_topic: <topic>}` under app, naming a declared topic")
	}
	if o.has("on_error") {
		oe := p.object(o.val("on_error"), "app: on_error", "deserialization", "processing", "dead_letter_topic")
		if oe == nil {
			return app
		}
		if s, ok := oe.enum("deserialization", policies...); ok {
			app.OnDeserializationError = ErrorPolicy(s)
		}
		if s, ok := oe.enum("processing", policies...); ok {
			app.OnProcessingError = ErrorPolicy(s)
		}
		dlq, hasDLQ := oe.str("dead_letter_topic")
		if hasDLQ {
			if p.topics[dlq] == nil {
				p.errf(oe.valPos("dead_letter_topic"), "app: on_error: dead_letter_topic: unknown topic %q%s", dlq, didYouMean(dlq, p.topicNames()))
				p.hintf("declare the dead-letter topic under topics (key: bytes, value: bytes)")
			} else {
				app.DeadLetterTopic = dlq
			}
		}
		if !hasDLQ && !oe.has("dead_letter_topic") {
			for _, k := range []string{"deserialization", "processing"} {
				if s, _ := oe.str(k); s == string(PolicyDeadLetter) {
					p.errf(oe.valPos(k), "app: on_error: %s is dead_letter but dead_letter_topic is not set", k)
					p.hintf("add `dead_letter_topic: <topic>` under on_error, naming a declared topic")
				}
			}
			if app.InvalidTimestamp == TimestampDeadLetter {
				p.errf(o.valPos("invalid_timestamp"), "app: invalid_timestamp is dead_letter but on_error.dead_letter_topic is not set")
				p.hintf("add `dead_letter_topic: <topic>` under on_error, naming a declared topic")
			}
		}
	}
	return app
}

func (p *parser) topicNames() []string {
	var s []string
	for n := range p.topics {
		s = append(s, n)
	}
	return s
}

// ---- enums ----

type declNode struct {
	name string
	key  *yaml.Node
	val  *yaml.Node
}

func (p *parser) typeNameOK(pos Pos, what, name string) bool {
	if !isIdent(name) || !('a' <= name[0] && name[0] <= 'z' || 'A' <= name[0] && name[0] <= 'Z') {
		p.errf(pos, "%s name %q is not an identifier, want letters, digits and '_', starting with a letter", what, name)
		return false
	}
	if _, ok := primitives[name]; ok || contains(reservedTypeNames, name) {
		p.errf(pos, "%s name %q is reserved for a built-in type", what, name)
		return false
	}
	return true
}

// declareTypes walks the entries of the enums or records section, which
// ctx names: each name must be a type name, then declare records it (or
// reports why not and returns false). Declaring every name before resolving
// any lets types refer to each other in any order.
func (p *parser) declareTypes(n *yaml.Node, ctx, what string, declare func(name string, pos Pos) bool) []declNode {
	if n == nil {
		return nil
	}
	es, ok := p.entries(n, ctx)
	if !ok {
		return nil
	}
	var out []declNode
	for _, e := range es {
		name, pos := e.key.Value, p.pos(e.key)
		if !p.typeNameOK(pos, what, name) || !declare(name, pos) {
			continue
		}
		out = append(out, declNode{name, e.key, e.val})
	}
	return out
}

func (p *parser) declareEnums(n *yaml.Node) []declNode {
	return p.declareTypes(n, "enums", "enum", func(name string, pos Pos) bool {
		p.enums[name] = &Enum{Pos: pos, Name: name}
		return true
	})
}

func (p *parser) resolveEnums(decls []declNode) {
	for _, d := range decls {
		en := p.enums[d.name]
		ctx := fmt.Sprintf("enum %q", d.name)
		o := p.object(d.val, ctx, "doc", "values")
		if o == nil {
			continue
		}
		en.Doc, _ = o.str("doc")
		if !o.has("values") {
			o.missing("values")
			continue
		}
		vs, ok := p.entries(o.val("values"), ctx+": values")
		if !ok {
			continue
		}
		if len(vs) == 0 {
			p.errf(o.valPos("values"), "%s: values: want at least one value", ctx)
		}
		byNum := map[int64]*EnumValue{}
		for _, v := range vs {
			vctx := fmt.Sprintf("%s: value %q", ctx, v.key.Value)
			if !isIdent(v.key.Value) || '0' <= v.key.Value[0] && v.key.Value[0] <= '9' || v.key.Value[0] == '_' {
				p.errf(p.pos(v.key), "%s: name is not an identifier", vctx)
				continue
			}
			ev := &EnumValue{Pos: p.pos(v.key), Name: v.key.Value}
			var num int64
			if v.val.Kind == yaml.MappingNode {
				vo := p.object(v.val, vctx, "number", "doc")
				if vo == nil {
					continue
				}
				ev.Doc, _ = vo.str("doc")
				if !vo.has("number") {
					vo.missing("number")
					continue
				}
				if num, ok = vo.int("number", math.MinInt32, math.MaxInt32); !ok {
					continue
				}
			} else if num, ok = p.intNode(v.val, vctx, math.MinInt32, math.MaxInt32); !ok {
				continue
			}
			ev.Number = int32(num)
			if prev := byNum[num]; prev != nil {
				p.errf(p.pos(v.val), "%s: number %d is already used by %q", vctx, num, prev.Name)
				continue
			}
			byNum[num] = ev
			en.Values = append(en.Values, ev)
		}
		slices.SortFunc(en.Values, func(a, b *EnumValue) int { return cmp.Compare(a.Number, b.Number) })
	}
}

// ---- records ----

func (p *parser) declareRecords(n *yaml.Node) []declNode {
	return p.declareTypes(n, "records", "record", func(name string, pos Pos) bool {
		if en := p.enums[name]; en != nil {
			p.errf(pos, "record %q: name is already used by an enum (at %d:%d)", name, en.Pos.Line, en.Pos.Col)
			return false
		}
		p.records[name] = &Record{Pos: pos, Name: name}
		return true
	})
}

func (p *parser) resolveRecords(decls []declNode) {
	for _, d := range decls {
		r := p.records[d.name]
		ctx := fmt.Sprintf("record %q", d.name)
		o := p.object(d.val, ctx, "doc", "deprecated", "schema_name", "fields")
		if o == nil {
			continue
		}
		r.Doc, _ = o.str("doc")
		r.Deprecated = o.bool("deprecated", false)
		p.recordSchemaName(r, o, ctx)
		if !o.has("fields") {
			o.missing("fields")
			continue
		}
		fs, ok := p.entries(o.val("fields"), ctx+": fields")
		if !ok {
			continue
		}
		byID := map[int64]*Field{}
		for _, fe := range fs {
			fctx := fmt.Sprintf("%s: field %q", ctx, fe.key.Value)
			if !isIdent(fe.key.Value) {
				p.errf(p.pos(fe.key), "%s: name is not an identifier, want letters, digits and '_'", fctx)
				continue
			}
			f := &Field{Pos: p.pos(fe.key), Name: fe.key.Value}
			fo := p.object(fe.val, fctx, "id", "type", "doc", "default", "deprecated", "json_name")
			if fo == nil {
				continue
			}
			f.Doc, _ = fo.str("doc")
			f.Deprecated = fo.bool("deprecated", false)
			p.fieldJSONName(f, fo, fctx)
			idOK := false
			if !fo.has("id") {
				fo.missing("id")
				p.hintf("every field needs a stable numeric id (1..65535): the wire format is keyed by it")
			} else if id, ok := fo.int("id", 1, 65535); ok {
				if prev := byID[id]; prev != nil {
					p.errf(fo.valPos("id"), "%s: id %d is already used by field %q", fctx, id, prev.Name)
				} else {
					f.ID = int(id)
					byID[id] = f
					idOK = true
				}
			}
			if ts, ok := fo.reqStr("type"); ok {
				f.Type = p.checkNotWindowed(p.resolveType(ts, fo.valPos("type"), fctx), fo.valPos("type"), fctx)
			}
			if fo.has("default") && f.Type != nil {
				f.Default = p.fieldDefault(fo.val("default"), f.Type, fctx)
			}
			if idOK {
				r.Fields = append(r.Fields, f)
			}
		}
		slices.SortFunc(r.Fields, func(a, b *Field) int { return cmp.Compare(a.ID, b.ID) })
		p.checkJSONNames(r)
	}
}

// fieldDefault type-checks a default value against the field type.
func (p *parser) fieldDefault(v *yaml.Node, t *Type, ctx string) any {
	ctx += ": default"
	if !p.noAlias(v, ctx) {
		return nil
	}
	bad := func() any {
		p.errf(p.pos(v), "%s: %s is not a valid %s", ctx, kindName(v), t)
		return nil
	}
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		if t.Kind == KindOptional && v.Tag == "!!null" {
			return nil
		}
		return bad()
	}
	switch t.Kind {
	case KindString, KindBytes:
		if v.Tag != "!!str" {
			return bad()
		}
		return v.Value
	case KindBool:
		var b bool
		if v.Tag != "!!bool" || v.Decode(&b) != nil {
			return bad()
		}
		return b
	case KindInt32, KindInt64, KindUint32, KindUint64, KindFloat32, KindFloat64:
		return p.numberDefault(v, t, ctx, bad)
	case KindTimestamp, KindDuration:
		return p.timeDefault(v, t, ctx, bad)
	case KindEnum:
		for _, ev := range t.Enum.Values {
			if ev.Name == v.Value {
				return v.Value
			}
		}
		var names []string
		for _, ev := range t.Enum.Values {
			names = append(names, ev.Name)
		}
		p.errf(p.pos(v), "%s: %q is not a value of enum %q, want %s", ctx, v.Value, t.Enum.Name, strings.Join(names, " or "))
		return nil
	}
	p.errf(p.pos(v), "%s: defaults are only allowed on scalar and enum fields, not %s", ctx, t)
	return nil
}

// numberDefault reads the default of a numeric field, range-checked for
// the 32-bit integers; bad reports a value of the wrong kind.
func (p *parser) numberDefault(v *yaml.Node, t *Type, ctx string, bad func() any) any {
	switch t.Kind {
	case KindInt32, KindInt64:
		var x int64
		if v.Tag != "!!int" || v.Decode(&x) != nil {
			return bad()
		}
		if t.Kind == KindInt32 && (x < math.MinInt32 || x > math.MaxInt32) {
			p.errf(p.pos(v), "%s: %d overflows int32", ctx, x)
			return nil
		}
		return x
	case KindUint32, KindUint64:
		var x uint64
		if v.Tag != "!!int" || v.Decode(&x) != nil {
			return bad()
		}
		if t.Kind == KindUint32 && x > math.MaxUint32 {
			p.errf(p.pos(v), "%s: %d overflows uint32", ctx, x)
			return nil
		}
		return x
	}
	var x float64
	if (v.Tag != "!!int" && v.Tag != "!!float") || v.Decode(&x) != nil {
		return bad()
	}
	return x
}

// timeDefault reads the default of a timestamp (RFC 3339 or epoch
// milliseconds) or duration field, as milliseconds.
func (p *parser) timeDefault(v *yaml.Node, t *Type, ctx string, bad func() any) any {
	if t.Kind == KindDuration {
		d, err := time.ParseDuration(v.Value)
		if v.Tag != "!!str" || err != nil {
			if v.Tag == "!!int" && v.Value == "0" {
				return int64(0)
			}
			p.errf(p.pos(v), "%s: %s is not a valid duration, want a Go duration such as \"5m\"", ctx, kindName(v))
			return nil
		}
		return d.Milliseconds()
	}
	if v.Tag == "!!int" {
		var x int64
		if v.Decode(&x) != nil {
			return bad()
		}
		return x
	}
	tm, err := time.Parse(time.RFC3339Nano, v.Value)
	if v.Tag != "!!str" && v.Tag != "!!timestamp" || err != nil {
		p.errf(p.pos(v), "%s: %s is not a valid timestamp, want RFC 3339 or milliseconds since the epoch", ctx, kindName(v))
		return nil
	}
	return tm.UnixMilli()
}

// checkRecordCycles rejects records that contain themselves through fields
// of record type (directly or via other records). Recursion through
// optional, list or map is fine: those can be empty.
func (p *parser) checkRecordCycles() {
	state := map[*Record]int{} // 0 new, 1 on stack, 2 done
	var visit func(r *Record, path []string) bool
	var reported = map[*Record]bool{}
	visit = func(r *Record, path []string) bool {
		state[r] = 1
		for _, f := range r.Fields {
			if f.Type == nil || f.Type.Kind != KindRecord {
				continue
			}
			next := f.Type.Record
			switch state[next] {
			case 1:
				if !reported[next] {
					reported[next] = true
					cycle := append(path, f.Name)
					p.errf(f.Pos, "record %q: field %q: record %q contains itself (%s)", r.Name, f.Name, next.Name, strings.Join(cycle, "."))
					p.hintf("use optional<%s> or list<%s> to make the recursion finite", next.Name, next.Name)
				}
			case 0:
				visit(next, append(path, f.Name))
			}
		}
		state[r] = 2
		return false
	}
	for _, r := range sortedValues(p.records) {
		if state[r] == 0 {
			visit(r, []string{r.Name})
		}
	}
}

// ---- topics ----

func (p *parser) parseTopics(n *yaml.Node) {
	p.eachNamed(n, "topics", "topic", func(e entry, name, ctx string) {
		t := &Topic{Pos: p.pos(e.key), Name: name, Kind: TopicStream}
		p.topics[name] = t
		o := p.object(e.val, ctx, "key", "value", "partitions", "read_as", "store", "timestamp", "doc",
			"key_format", "value_format", "json_timestamps", "subject_strategy", "versioned", "tombstones")
		if o == nil {
			return
		}
		t.Doc, _ = o.str("doc")
		p.topicTypes(t, o, ctx)
		p.topicFormats(t, o, ctx)
		if n, ok := o.int("partitions", 1, math.MaxInt32); ok {
			t.Partitions = int(n)
		}
		if k, ok := o.enum("read_as", string(TopicStream), string(TopicTable), string(TopicGlobalTable)); ok {
			t.Kind = TopicKind(k)
		}
		p.topicStore(t, o, ctx)
		p.topicVersioned(t, o, ctx)
		p.topicTombstones(t, o, ctx)
		if fn, ok := o.str("timestamp"); ok && t.Value != nil {
			p.topicTimestamp(t, o, ctx, fn)
		}
	})
}

// eachNamed calls f for each entry of a top-level section whose key is a
// valid name; ctx is `<what> "<name>"`.
func (p *parser) eachNamed(n *yaml.Node, section, what string, f func(e entry, name, ctx string)) {
	if n == nil {
		return
	}
	es, ok := p.entries(n, section)
	if !ok {
		return
	}
	for _, e := range es {
		name := e.key.Value
		if !p.checkName(p.pos(e.key), what, name) {
			continue
		}
		f(e, name, fmt.Sprintf("%s %q", what, name))
	}
}

// topicTypes resolves a topic's key and value types: a primitive, an enum
// or a record, and only the key may be windowed.
func (p *parser) topicTypes(t *Topic, o *obj, ctx string) {
	for _, side := range []string{"key", "value"} {
		s, ok := o.reqStr(side)
		if !ok {
			continue
		}
		ty := p.resolveType(s, o.valPos(side), ctx+": "+side)
		if ty != nil && side == "value" {
			ty = p.checkNotWindowed(ty, o.valPos(side), ctx+": "+side)
		}
		if ty != nil && !valueTypeOK(ty) && !(side == "key" && hasWindowed(ty)) {
			p.errf(o.valPos(side), "%s: %s type %q must be a primitive, an enum or a record", ctx, side, ty)
			p.hintf("wrap it in a record, e.g. a record with a field of type %s", ty)
			ty = nil
		}
		if side == "key" {
			t.Key = ty
		} else {
			t.Value = ty
		}
	}
}

// topicStore adds the store that materializes a topic read as a table.
func (p *parser) topicStore(t *Topic, o *obj, ctx string) {
	sn, ok := o.str("store")
	switch {
	case !ok:
		if t.Kind != TopicStream && !o.has("store") {
			p.errf(o.valPos("read_as"), "%s: read_as %s needs a store", ctx, t.Kind)
			p.hintf("add `store: <store name>`: it names the store (and its changelog) that materializes the table")
		}
	case t.Kind == TopicStream:
		p.errf(o.keyPos("store"), "%s: store is only for topics read_as table or global_table", ctx)
	case p.checkName(o.valPos("store"), "store", sn):
		if hasWindowed(t.Key) {
			p.errf(o.valPos("read_as"), "%s: a topic with windowed keys can only be read as a stream", ctx)
		}
		st := &Store{Pos: o.valPos("store"), Name: sn, Kind: StoreKeyValue, Key: t.Key, Value: t.Value, Logged: true, Cached: true}
		if p.addStore(st) {
			t.Store = st
		}
	}
}

// topicVersioned reads `versioned: {history_retention: 1h}`: the table's
// store keeps every version for the history retention
// (Stores.persistentVersionedKeyValueStore).
func (p *parser) topicVersioned(t *Topic, o *obj, ctx string) {
	if !o.has("versioned") {
		return
	}
	if t.Kind != TopicTable {
		p.errf(o.keyPos("versioned"), "%s: versioned is only for topics read_as table", ctx)
		return
	}
	vo := p.object(o.val("versioned"), ctx+": versioned", "history_retention")
	if vo == nil || t.Store == nil {
		return
	}
	if !vo.has("history_retention") {
		p.errf(o.valPos("versioned"), "%s: versioned needs history_retention", ctx)
		return
	}
	d, ok := vo.dur("history_retention")
	if !ok {
		return
	}
	t.Store.Versioned, t.Store.HistoryRetention, t.Store.Cached = true, d, false
}

// topicTombstones reads `tombstones: true`, which only a stream topic
// takes: a table reads a tombstone as the delete of its key, and no user
// function of a table sees it.
func (p *parser) topicTombstones(t *Topic, o *obj, ctx string) {
	if !o.has("tombstones") {
		return
	}
	t.Tombstones = o.bool("tombstones", false)
	if t.Kind != TopicStream {
		p.errf(o.keyPos("tombstones"), "%s: tombstones is only for topics read as a stream; a table reads a tombstone as a delete", ctx)
		t.Tombstones = false
	}
}

// topicTimestamp sets the record field a topic takes event time from.
func (p *parser) topicTimestamp(t *Topic, o *obj, ctx, fn string) {
	if t.Value.Kind != KindRecord {
		p.errf(o.valPos("timestamp"), "%s: timestamp: value type %q is not a record", ctx, t.Value)
		return
	}
	var f *Field
	var names []string
	for _, rf := range t.Value.Record.Fields {
		names = append(names, rf.Name)
		if rf.Name == fn {
			f = rf
		}
	}
	switch {
	case f == nil:
		p.errf(o.valPos("timestamp"), "%s: timestamp: record %q has no field %q%s", ctx, t.Value.Record.Name, fn, didYouMean(fn, names))
	case f.Type == nil:
	case f.Type.Kind != KindTimestamp && f.Type.Kind != KindInt64:
		p.errf(o.valPos("timestamp"), "%s: timestamp: field %q is %s, want timestamp or int64", ctx, fn, f.Type)
	default:
		t.TimestampField = f
	}
}

// addStore registers a store, reporting a duplicate name.
func (p *parser) addStore(st *Store) bool {
	if prev := p.stores[st.Name]; prev != nil {
		p.errf(st.Pos, "duplicate store name %q (first at %d:%d)", st.Name, prev.Pos.Line, prev.Pos.Col)
		p.hintf("every store needs its own name: it is also the name of its changelog topic")
		return false
	}
	p.stores[st.Name] = st
	return true
}

// addInternal registers an internal topic, reporting a duplicate name.
func (p *parser) addInternal(it *InternalTopic) bool {
	if prev := p.internal[it.Name]; prev != nil {
		p.errf(it.Pos, "duplicate internal topic name %q (first at %d:%d)", it.Name, prev.Pos.Line, prev.Pos.Col)
		return false
	}
	p.internal[it.Name] = it
	return true
}

// ---- stores ----

func (p *parser) parseStores(n *yaml.Node) {
	p.eachNamed(n, "stores", "store", func(e entry, name, ctx string) {
		st := &Store{Pos: p.pos(e.key), Name: name, Kind: StoreKeyValue, Logged: true, Cached: true}
		o := p.object(e.val, ctx, "kind", "key", "value", "in_memory", "logged", "cached", "retention", "window_size", "custom")
		if o == nil {
			return
		}
		if k, ok := o.enum("kind", string(StoreKeyValue), string(StoreWindow), string(StoreSession)); ok {
			st.Kind = StoreKind(k)
		}
		if s, ok := o.reqStr("key"); ok {
			st.Key = p.checkNotWindowed(p.resolveType(s, o.valPos("key"), ctx+": key"), o.valPos("key"), ctx+": key")
		}
		if s, ok := o.reqStr("value"); ok {
			st.Value = p.checkNotWindowed(p.resolveType(s, o.valPos("value"), ctx+": value"), o.valPos("value"), ctx+": value")
		}
		st.InMemory = o.bool("in_memory", false)
		st.Logged = o.bool("logged", true)
		st.Cached = o.bool("cached", true)
		ret, hasRet := o.dur("retention")
		ws, hasWS := o.dur("window_size")
		switch st.Kind {
		case StoreKeyValue:
			for _, k := range []string{"retention", "window_size"} {
				if o.has(k) {
					p.errf(o.keyPos(k), "%s: %s is only for window and session stores", ctx, k)
				}
			}
		case StoreSession:
			if o.has("window_size") {
				p.errf(o.keyPos("window_size"), "%s: window_size is only for window stores", ctx)
			}
			if !o.has("retention") {
				o.missing("retention")
			}
		case StoreWindow:
			if !o.has("retention") {
				o.missing("retention")
			}
			if !o.has("window_size") {
				o.missing("window_size")
			}
			if hasRet && hasWS && ret < ws {
				p.errf(o.valPos("retention"), "%s: retention %s is smaller than window_size %s", ctx, fmtDur(ret), fmtDur(ws))
			}
		}
		st.Retention, st.WindowSize = ret, ws
		if o.has("custom") {
			if s, ok := o.str("custom"); ok && p.checkFnName(o.valPos("custom"), ctx+": custom", s) {
				st.Custom = &Func{Pos: o.valPos("custom"), Role: RoleStore, Name: s}
			}
		}
		p.addStore(st)
	})
}

// fmtDur prints a duration the way people write them: 5m, not 5m0s.
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// checkFnName checks that s can name a Go function.
func (p *parser) checkFnName(pos Pos, ctx, s string) bool {
	if token.IsKeyword(s) {
		p.errf(pos, "%s: %q is a Go keyword, not a function name", ctx, s)
		return false
	}
	if !token.IsIdentifier(s) {
		p.errf(pos, "%s: %q is not a Go identifier", ctx, s)
		if strings.ContainsAny(s, "(). ") {
			p.hintf("fn names a function in the package; use expr for an expression")
		}
		return false
	}
	return true
}
