package spec

import "strings"

// Joins: one resolver per join shape (spec/ir.go's JoinShape), after the
// checks every join shares: the other side, the kind, the joiner and the
// value type, and the options that belong to other shapes.

// joinStep is a join being resolved.
type joinStep struct {
	*step
	o           *obj
	n           *Node
	j           *Join
	left, right *Node
}

// joinShapeDef is what differs between the join shapes.
type joinShapeDef struct {
	output  Shape // the join's result
	noOuter bool  // Kafka Streams has no outer join of this shape
	resolve func(*joinStep)
}

var joinShapes = map[JoinShape]joinShapeDef{
	JoinStreamStream: {output: ShapeStream, resolve: (*joinStep).streamStream},
	JoinStreamTable:  {output: ShapeStream, noOuter: true, resolve: (*joinStep).streamTable},
	JoinStreamGlobal: {output: ShapeStream, noOuter: true, resolve: (*joinStep).streamGlobal},
	JoinTableTable:   {output: ShapeTable, resolve: (*joinStep).tableTable},
	JoinForeignKey:   {output: ShapeTable, noOuter: true, resolve: (*joinStep).foreignKey},
}

// joinOptions are the keys that only one join shape takes, with how
// messages name the joins that take it, in the order they are checked.
var joinOptions = []struct {
	keys  []string
	shape JoinShape
	joins string
}{
	{[]string{"window"}, JoinStreamStream, "stream-stream joins"},
	{[]string{"grace"}, JoinStreamTable, "stream-table joins"},
	{[]string{"key_fn", "key_expr"}, JoinStreamGlobal, "stream-global table joins"},
	{[]string{"foreign_key_fn", "foreign_key_expr"}, JoinForeignKey, "table-table joins"},
}

// shapeWords spells a join shape for messages: "stream-table".
func shapeWords(js JoinShape) string {
	if js == JoinForeignKey {
		return "foreign-key"
	}
	return strings.ReplaceAll(strings.ReplaceAll(string(js), "global_table", "global table"), "_", "-")
}

func (p *parser) stepJoin(s *step) *Node {
	o, n := s.start()
	if o == nil {
		return n
	}
	j := &Join{Pos: s.pos, Kind: JoinInner}
	n.Join = j
	if k, ok := o.enum("kind", string(JoinInner), string(JoinLeft), string(JoinOuter)); ok {
		j.Kind = JoinKind(k)
	}
	n.Fn = s.fn(o, s.def.role, "fn", "expr", true)
	n.Value = s.typ(o, "value", true)
	var right *Node
	if !o.has("with") {
		s.errf(s.pos, "missing required key \"with\"")
	} else if name, ok := o.str("with"); ok {
		right = p.lookup(name, o.valPos("with"), s.ctx()+": with", s.pipe)
	}
	if right == nil {
		s.failed = true
		return n
	}
	n.Inputs = append(n.Inputs, right)
	if s.inBad || p.bad[right] {
		s.failed = true
		return n
	}
	js := &joinStep{step: s, o: o, n: n, j: j, left: s.in, right: right}
	j.Name, j.NamePos = s.stepName, s.namePos
	if !js.shape() {
		return n
	}
	def := joinShapes[j.Shape]
	n.Shape = def.output
	n.WindowedKey, n.Window, n.KeyWindow = false, nil, nil
	js.misplacedOptions(def)
	if js.left.WindowedKey || right.WindowedKey {
		s.errf(s.pos, "cannot join records with windowed keys")
		return n
	}
	def.resolve(js)
	js.resultStore(def)
	return n
}

// resultStore reads the join's store: a join whose result is a table
// (table-table, foreign-key) may materialize it, queryable and logged, as
// Kafka Streams' Materialized on those joins; a stream-stream join read it
// as the name of its stores (streamStreamState); a stream-table or
// stream-global join has nothing to materialize.
func (js *joinStep) resultStore(def joinShapeDef) {
	if !js.o.has("store") || js.j.Shape == JoinStreamStream {
		return
	}
	if def.output != ShapeTable {
		js.errf(js.o.keyPos("store"), "store is only for table-table and foreign-key joins (the store of their result) and stream-stream joins (the name of their stores), not for %s joins", shapeWords(js.j.Shape))
		js.p.hintf("add `to_table: {store: …}` after the join to materialize its output")
		return
	}
	if js.n.Value != nil {
		js.n.Store = js.store(js.o, StoreKeyValue, js.left.Key, js.n.Value, nil)
	}
}

// shape finds the join shape from the two sides, or reports why they
// cannot join.
func (js *joinStep) shape() bool {
	left, right, o := js.left.Shape, js.right.Shape, js.o
	switch {
	case left == ShapeStream && right == ShapeStream:
		js.j.Shape = JoinStreamStream
	case left == ShapeStream && right == ShapeTable:
		js.j.Shape = JoinStreamTable
	case left == ShapeStream && right == ShapeGlobalTable:
		js.j.Shape = JoinStreamGlobal
	case left == ShapeTable && right == ShapeTable && (o.has("foreign_key_fn") || o.has("foreign_key_expr")):
		js.j.Shape = JoinForeignKey
	case left == ShapeTable && right == ShapeTable:
		js.j.Shape = JoinTableTable
	case left == ShapeTable && right == ShapeStream:
		js.errf(o.valPos("with"), "a table cannot join stream %q", js.right.Name)
		js.p.hintf("start the join from the stream side: a stream-table join looks each stream record up in the table")
		return false
	default:
		js.errf(o.valPos("with"), "cannot join a %s with a %s", shapeNames[left], shapeNames[right])
		js.p.hintf("joins take a stream or table on the left and a stream, table or global table on the right; see %s#joins", docURL)
		return false
	}
	return true
}

// misplacedOptions reports the options of other join shapes, and outer
// joins where Kafka Streams has none.
func (js *joinStep) misplacedOptions(def joinShapeDef) {
	o, shape := js.o, js.j.Shape
	for _, opt := range joinOptions {
		for _, k := range opt.keys {
			if shape != opt.shape && o.has(k) {
				js.errf(o.keyPos(k), "%s is only for %s, not %s", k, opt.joins, shapeWords(shape))
			}
		}
	}
	if js.j.Kind == JoinOuter && def.noOuter {
		js.errf(o.valPos("kind"), "kind %q is not supported for %s joins, want inner or left", js.j.Kind, shapeWords(shape))
	}
}

// sameKey reports whether both sides have one key type; when not, it
// reports the mismatch with the remedy for this shape.
func (js *joinStep) sameKey(hint string, args ...any) bool {
	if js.left.Key.Equal(js.right.Key) {
		return true
	}
	js.keyMismatch()
	js.p.hintf(hint, args...)
	return false
}

func (js *joinStep) keyMismatch() {
	js.errf(js.pos, "key type %q of %q does not match %q of %q", typeString(js.right.Key), js.right.Name, typeString(js.left.Key), js.left.Name)
}

func (js *joinStep) streamStream() {
	js.sameKey("re-key one side with select_key (or map) so that both keys have the same type; see %s#joins", docURL)
	js.joinWindow()
	if js.needName("a stream-stream join creates state stores, which are named after it") {
		js.streamStreamState()
	}
}

// joinWindow reads a stream-stream join's window: how far apart two
// records' timestamps may be, and the grace for late ones.
func (js *joinStep) joinWindow() {
	o, j, p := js.o, js.j, js.p
	if !o.has("window") {
		js.errf(js.pos, "stream-stream join needs a window")
		p.hintf("add `window: {time_difference: 5m}` (or before/after, and grace): records join when their timestamps are that close")
		return
	}
	wo := p.object(o.val("window"), js.ctx()+": window", "time_difference", "before", "after", "grace")
	if wo == nil {
		return
	}
	td, hasTD := wo.dur("time_difference")
	j.Before, j.After = td, td
	if b, ok := wo.dur("before"); ok {
		j.Before = b
	}
	if a, ok := wo.dur("after"); ok {
		j.After = a
	}
	j.Grace, _ = wo.dur("grace")
	if !hasTD && !wo.has("time_difference") && (!wo.has("before") || !wo.has("after")) {
		js.errf(p.pos(wo.n), "window: want time_difference, or both before and after")
	}
}

// streamStreamState adds the window stores of a stream-stream join (and
// the outer join's store of unmatched records), named after the join or
// after its `store:`, and repartitions a side whose key changed upstream.
func (js *joinStep) streamStreamState() {
	p, j, name := js.p, js.j, js.stepName
	size := j.Before + j.After
	ret := size + j.Grace
	pos := js.namePos
	if js.o.has("store") {
		base, ok := js.o.str("store")
		if !ok || !p.checkName(js.o.valPos("store"), "store", base) {
			js.failed = true
			return
		}
		j.StoreName, pos = base, js.o.valPos("store")
	}
	this, other, outer := streamJoinStoreNames(name, j.StoreName, j.Kind)
	mk := func(store string, value *Type, kind StoreKind) *Store {
		st := p.internalStoreAt(js.step, pos, store, kind, js.left.Key, value)
		if st != nil && kind == StoreWindow {
			st.RetainDuplicates, st.WindowSize, st.Retention = true, size, ret
		}
		return st
	}
	j.ThisStore = mk(this, js.left.Value, StoreWindow)
	j.OtherStore = mk(other, js.right.Value, StoreWindow)
	if outer != "" {
		j.OuterStore = mk(outer, js.left.Value, StoreKeyValue)
	}
	if p.keyChangedAt[js.left] != nil {
		j.ThisRepartition = js.repartition(js.n, name+"-left", 0)
	}
	if p.keyChangedAt[js.right] != nil {
		j.OtherRepartition = js.repartition(js.n, name+"-right", 0)
	}
}

// streamJoinStoreNames names the stores of stream-stream join name:
// <name>-this, <name>-other and, for left and outer joins, <name>-outer;
// or, with storeName, as Kafka Streams names them for
// StreamJoined.withStoreName(storeName): after each side's join processor
// ("-this-join", "-other-join", "-outer" before the side that emits
// unmatched records) plus "-store", and the unmatched records'
// "-left-shared-join-store" or "-outer-shared-join-store". The runtime
// names them with topograph.StreamJoinStores, which gen's tests hold
// this to.
func streamJoinStoreNames(name, storeName string, kind JoinKind) (this, other, outer string) {
	if storeName == "" {
		this, other = name+"-this", name+"-other"
		if kind != JoinInner {
			outer = name + "-outer"
		}
		return this, other, outer
	}
	switch kind {
	case JoinLeft:
		return storeName + "-this-join-store", storeName + "-outer-other-join-store", storeName + "-left-shared-join-store"
	case JoinOuter:
		return storeName + "-outer-this-join-store", storeName + "-outer-other-join-store", storeName + "-outer-shared-join-store"
	}
	return storeName + "-this-join-store", storeName + "-other-join-store", ""
}

func (js *joinStep) streamTable() {
	js.sameKey("re-key the stream with select_key (or map) to the table's key type; see %s#joins", docURL)
	c := js.p.keyChangedAt[js.left]
	switch {
	case c == nil:
	case js.stepName == "":
		js.errf(js.pos, "missing name: the key changed upstream (%s %q), so the stream must be repartitioned and the repartition topic needs a name", c.Op, c.Name)
		js.p.hintf("add `name: <join name>` to the step, next to \"join\":; see %s#names-that-never-move", docURL)
	default:
		js.j.ThisRepartition = js.repartition(js.n, js.stepName, 0)
	}
	if !js.o.has("grace") {
		return
	}
	d, ok := js.o.dur("grace")
	if !ok {
		return
	}
	switch {
	case !VersionedTable(js.right):
		js.errf(js.o.keyPos("grace"), "grace: the table %q is not versioned; a stream-table join grace period needs a versioned table", js.right.Name)
		js.p.hintf("read the table's topic with `versioned: {history_retention: <at least the grace>}`")
	case js.stepName == "":
		js.errf(js.pos, "missing name: a join with a grace period needs a name (it names the buffer store <name>-Buffer)")
	default:
		js.j.TableGrace, js.j.HasTableGrace = d, true
	}
}

// VersionedTable reports whether table node n has Kafka Streams' versioned
// semantics: a versioned table source, or a filter, filter_not or
// map_values of one, which have no store of their own and inherit them
// (Kafka's isVersionedOrVersionedUpstream for the operators streamgen has;
// joins, aggregations and to_table set theirs to not versioned).
func VersionedTable(n *Node) bool { return versionedSource(n) != nil }

// versionedSource is the versioned table source whose semantics table node
// n inherits, or nil.
func versionedSource(n *Node) *Node {
	for n != nil && n.Shape == ShapeTable {
		switch {
		case n.Op == OpSource:
			if n.Topic != nil && n.Topic.Store != nil && n.Topic.Store.Versioned {
				return n
			}
			return nil
		case (n.Op == OpFilter || n.Op == OpFilterNot || n.Op == OpMapValues) && len(n.Inputs) == 1:
			n = n.Inputs[0]
		default:
			return nil
		}
	}
	return nil
}

func (js *joinStep) streamGlobal() {
	o := js.o
	js.j.KeyMapper = js.fn(o, RoleKeySelect, "key_fn", "key_expr", false)
	if js.j.KeyMapper == nil && !o.has("key_fn") && !o.has("key_expr") && !js.left.Key.Equal(js.right.Key) {
		js.keyMismatch()
		js.p.hintf("add key_fn or key_expr to map each stream record to the global table's key (%s)", typeString(js.right.Key))
	}
	// The global table is looked up, not co-partitioned: the stream's key
	// stays, and so does its need to repartition downstream.
	js.p.keepKey(js.n, js.left)
}

func (js *joinStep) tableTable() {
	js.sameKey("to join on a field of the value, use foreign_key_fn or foreign_key_expr; see %s#joins", docURL)
}

func (js *joinStep) foreignKey() {
	p, name := js.p, js.stepName
	js.j.ForeignKey = js.fn(js.o, RoleForeignKey, "foreign_key_fn", "foreign_key_expr", true)
	if !js.needName("a foreign-key join creates a state store and internal topics, which are named after it") {
		return
	}
	js.j.SubscriptionStore = p.internalStore(js.step, name+"-subscriptions", StoreKeyValue, js.right.Key, js.left.Key)
	for _, k := range []InternalTopicKind{InternalSubscriptionRegistration, InternalSubscriptionResponse} {
		topic := name + "-" + strings.ReplaceAll(string(k), "_", "-")
		if p.checkName(js.namePos, "internal topic", topic) {
			p.addInternal(&InternalTopic{Pos: js.namePos, Name: topic, Node: js.n, Kind: k})
		}
	}
}
