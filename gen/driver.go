package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// driverFileName is the generated file holding the typed test driver.
const driverFileName = "streamgen_driver.go"

// embeddedDriverMethods are the exported methods and fields of the embedded
// *sgtest.Driver (its own field Driver and, through it, sgstream.TestDriver's).
// A generated method of the same name would silently hide one of them, so
// generated names must not take them.
var embeddedDriverMethods = []string{
	"Driver", "TestDriver",
	"AdvanceWallClock", "Close", "GlobalStore", "KeyPartition", "OpenStore", "Output", "OutputAll",
	"OutputTopics", "Partitions", "Pipe", "Store", "StorePartition", "TaskStore", "Tasks",
}

// driverGen emits the typed test driver of one program from its model:
// Kafka Streams' TopologyTestDriver with the topology's own types. It
// renders Go types and serdes as the topology does, so the driver encodes
// exactly as the topology does.
type driverGen struct {
	c *genCtx
	f *jen.File
}

// driverStore is a store the driver can give a typed view of.
type driverStore struct {
	st *spec.Store
	// timestamped and global are storeModel's.
	timestamped bool
	global      bool
}

// reserveDriverNames claims the driver's identifiers and method names
// (part of buildModel). Topic and store names map to method names
// non-injectively (orders-record and orders both give PipeOrdersRecord),
// so every name is reserved before anything is emitted and all collisions
// are reported in one run.
func reserveDriverNames(c *genCtx, m *model) {
	methods := newScope()
	for _, name := range embeddedDriverMethods {
		methods.reserve(&c.diags, name, "the embedded sgtest.Driver", spec.Pos{})
	}
	for _, name := range []string{"TestDriver", "NewTestDriver"} {
		c.pkgScope.reserve(&c.diags, name, "generated test driver identifier", c.prog.Pos)
	}
	for _, t := range m.topics {
		what := fmt.Sprintf("test driver method of topic %q", t.t.Name)
		if t.read {
			methods.reserve(&c.diags, "Pipe"+GoName(t.t.Name), what, t.t.Pos)
			methods.reserve(&c.diags, "Pipe"+GoName(t.t.Name)+"Record", what, t.t.Pos)
		}
		if t.written {
			methods.reserve(&c.diags, "Read"+GoName(t.t.Name), what, t.t.Pos)
		}
	}
	for _, s := range m.stores {
		what := fmt.Sprintf("test driver method of store %q", s.st.Name)
		methods.reserve(&c.diags, s.method, what, s.st.Pos)
		methods.reserve(&c.diags, s.method+"ForKey", what, s.st.Pos)
	}
}

// generateDriver is the generator step that writes streamgen_driver.go.
func generateDriver(c *genCtx) error {
	g := &driverGen{c: c, f: c.newFile(driverFileName)}
	g.emitType()
	for _, t := range c.model.topics {
		if t.read {
			g.emitPipe(t)
		}
		if t.written {
			g.emitRead(t)
		}
	}
	for _, s := range c.model.stores {
		g.emitStore(s)
	}
	return nil
}

// topicUse finds the declared topics the topology reads (its sources) and
// writes: sink topics, the dead-letter topic, and every declared topic when
// a sink chooses its topic per record, since it may pick any of them.
func topicUse(prog *spec.Program) (reads, writes map[*spec.Topic]bool) {
	reads, writes = map[*spec.Topic]bool{}, map[*spec.Topic]bool{}
	dynamic := false
	for _, n := range prog.Nodes {
		switch {
		case n.Op == spec.OpSource && n.Topic != nil:
			reads[n.Topic] = true
		case n.Op == spec.OpTo && n.Sink != nil && n.Sink.Topic != nil:
			writes[n.Sink.Topic] = true
		case n.Op == spec.OpTo && n.Sink != nil && n.Sink.Chooser != nil:
			dynamic = true
		}
	}
	for _, t := range prog.Topics {
		if dynamic || prog.App != nil && prog.App.DeadLetterTopic == t.Name {
			writes[t] = true
		}
	}
	return reads, writes
}

// driverStores lists, in prog.Stores order, the stores whose layout the
// driver knows: those of DSL tables and aggregations (sgstream.KVStore, or
// window and session stores of the aggregate), and the built-in stores of
// the spec's stores section, which processors are expected to read through
// the same typed views. Custom stores, suppression buffers and the
// internal stores of stream-stream and foreign-key joins (whose keys and
// values the runtime wraps) are left out.
func driverStores(prog *spec.Program) []driverStore {
	dsl := map[*spec.Store]bool{}
	declared := map[*spec.Store]bool{}
	global := map[*spec.Store]bool{}
	for _, n := range prog.Nodes {
		switch n.Op {
		case spec.OpSource, spec.OpToTable, spec.OpCount, spec.OpReduce, spec.OpAggregate, spec.OpCogroup, spec.OpJoin:
			if n.Store != nil {
				dsl[n.Store] = true
			}
		}
		if n.Op == spec.OpSource && n.Store != nil && n.Shape == spec.ShapeGlobalTable {
			global[n.Store] = true
		}
		for _, st := range n.Stores {
			declared[st] = true
		}
	}
	var out []driverStore
	for _, st := range prog.Stores {
		if st.Key == nil || st.Value == nil {
			continue
		}
		switch {
		case dsl[st]:
			out = append(out, driverStore{st: st, timestamped: st.Kind == spec.StoreWindow, global: global[st]})
		case declared[st] && st.Custom == nil:
			out = append(out, driverStore{st: st})
		}
	}
	return out
}

// storeMethod is the name of a store's accessor: the store's Go name with
// "Store" appended unless it already ends so (users-store → UsersStore,
// dedup → DedupStore).
func storeMethod(st *spec.Store) string {
	name := GoName(st.Name)
	if !strings.HasSuffix(name, "Store") {
		name += "Store"
	}
	return name
}

// recv is the receiver of every driver method.
func recv() *jen.Statement { return jen.Id("d").Op("*").Id("TestDriver") }

// inner is the embedded sgtest.Driver.
func inner() *jen.Statement { return jen.Id("d").Dot("Driver") }

// ifErrReturn is `if err != nil { return nil, err }`.
func ifErrReturn() *jen.Statement {
	return jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err()))
}

func (g *driverGen) emitType() {
	f, app := g.f, g.c.prog.App
	if app == nil {
		app = &spec.App{}
	}
	f.Comment("TestDriver runs the topology of " + g.c.cfg.SpecPath + " in process with its own types (runtime/sgtest:")
	f.Comment("Kafka Streams' TopologyTestDriver). Pipe methods process a record and all it causes before")
	f.Comment("they return, Read methods return and remove what was written to a topic, in write order, and")
	f.Comment("store methods read the stores of one partition's task as the last pipe left them.")
	f.Type().Id("TestDriver").Struct(jen.Op("*").Qual(pathSgtest, "Driver"))
	f.Line()
	f.Comment("NewTestDriver builds the topology and a driver for it, with the spec's error policies")
	f.Comment(fmt.Sprintf("(deserialization %s, processing %s, invalid timestamps %s) unless opts override them.",
		orDefault(string(app.OnDeserializationError), "fail"), orDefault(string(app.OnProcessingError), "fail"), orDefault(string(app.InvalidTimestamp), "fail")))
	body := []jen.Code{
		jen.Id("opts").Op("=").Append(jen.Index().Qual(pathSgtest, "Opt").Values(
			jen.Qual(pathSgtest, "ErrorPolicies").Call(policyLit(app.OnDeserializationError), policyLit(app.OnProcessingError), jen.Lit(app.DeadLetterTopic)),
			jen.Qual(pathSgtest, "InvalidTimestamps").Call(timestampPolicyLit(app.InvalidTimestamp)),
		), jen.Id("opts").Op("...")),
		jen.List(jen.Id("d"), jen.Err()).Op(":=").Qual(pathSgtest, "Build").Call(jen.Id("AppID"), jen.Id("BuildTopology"), jen.Id("opts").Op("...")),
		ifErrReturn(),
		jen.Return(jen.Op("&").Id("TestDriver").Values(jen.Id("d")), jen.Nil()),
	}
	if hasRegistry(g.c.prog) {
		// Registry formats run on the in-memory registry (sgtest.BindRegistry).
		body = append([]jen.Code{
			jen.If(jen.Err().Op(":=").Qual(pathSgtest, "BindRegistry").Call(jen.Id("registrySerdes").Call().Op("...")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		}, body...)
	}
	f.Func().Id("NewTestDriver").Params(jen.Id("opts").Op("...").Qual(pathSgtest, "Opt")).Params(jen.Op("*").Id("TestDriver"), jen.Error()).Block(body...)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// topicSerdes are the key and value serdes of a declared topic, as the
// topology's codecs use them (a windowed key decodes its end with the size
// of the window that feeds the topic).
func (g *driverGen) topicSerdes(t *topicModel) (key, value *jen.Statement) {
	var w *spec.Window
	if t.t.Key.Kind == spec.KindWindowed {
		w = t.window
	}
	return g.c.topicSerde(t.t, true, w), g.c.topicSerde(t.t, false, nil)
}

func (g *driverGen) recordType(k, v *spec.Type) *jen.Statement {
	return jen.Qual(pathSgstream, "Record").Types(g.c.topoType(k), g.c.topoType(v))
}

// emitPipe writes a topic's two pipe methods. Their docs are one line: the
// rules they follow (nulls, partitions) are sgtest.PipeTyped's, documented
// once there.
func (g *driverGen) emitPipe(tm *topicModel) {
	f, t := g.f, tm.t
	name := GoName(t.Name)
	pipe, pipeRecord := "Pipe"+name, "Pipe"+name+"Record"
	k, v := g.c.topoType(t.Key), g.c.topoType(t.Value)
	null := ""
	if t.Value.Kind == spec.KindRecord {
		null = "; a nil value is a tombstone"
	}
	f.Line()
	f.Comment(fmt.Sprintf("%s pipes a record into %q, partitioned by key, and processes it to completion%s.", pipe, t.Name, null))
	f.Func().Params(recv()).Id(pipe).Params(
		jen.Id("key").Add(k), jen.Id("value").Add(v), jen.Id("timestamp").Int64(), jen.Id("headers").Op("...").Qual(pathSgstream, "Header"),
	).Error().Block(
		jen.Return(jen.Id("d").Dot(pipeRecord).Call(g.recordType(t.Key, t.Value).Values(
			jen.Id("Key").Op(":").Id("key"), jen.Id("Value").Op(":").Id("value"),
			jen.Id("Timestamp").Op(":").Id("timestamp"), jen.Id("Headers").Op(":").Id("headers"),
		))),
	)
	f.Line()
	ks, vs := g.topicSerdes(tm)
	f.Comment(fmt.Sprintf("%s is %s for a whole record: null keys and values, or a partition (sgtest.PipeTyped).", pipeRecord, pipe))
	f.Func().Params(recv()).Id(pipeRecord).Params(
		jen.Id("r").Add(g.recordType(t.Key, t.Value)), jen.Id("opts").Op("...").Qual(pathSgtest, "PipeOpt"),
	).Error().Block(
		jen.Return(jen.Qual(pathSgtest, "PipeTyped").Call(inner(), jen.Lit(t.Name), ks, vs, jen.Id("r"), jen.Id("opts").Op("..."))),
	)
}

func (g *driverGen) emitRead(tm *topicModel) {
	f, t := g.f, tm.t
	read := "Read" + GoName(t.Name)
	ks, vs := g.topicSerdes(tm)
	f.Line()
	f.Comment(fmt.Sprintf("%s returns and removes the records written to %q so far, in write order (sgtest.ReadTyped).", read, t.Name))
	f.Func().Params(recv()).Id(read).Params().Params(jen.Index().Add(g.recordType(t.Key, t.Value)), jen.Error()).Block(
		jen.Return(jen.Qual(pathSgtest, "ReadTyped").Call(inner(), jen.Lit(t.Name), ks, vs)),
	)
}

// emitStore writes a store's accessors. They read the store's name and
// serdes from its descriptor (query.go), so the store is stated once.
func (g *driverGen) emitStore(s *storeModel) {
	f, st := g.f, s.st
	method := s.method
	desc := func(sel string) *jen.Statement { return jen.Id(s.desc).Dot(sel).Call() }
	k, v := g.c.topoType(st.Key), g.c.topoType(st.Value)
	vs := desc("ValueSerde")
	var typ *jen.Statement
	var open string
	switch st.Kind {
	case spec.StoreWindow:
		open = "WindowStore"
		if s.timestamped {
			v = jen.Qual(pathSgstream, "TimestampedValue").Types(v)
			vs = jen.Qual(pathSgstream, "TimestampedValueSerde").Types(g.c.topoType(st.Value)).Values(jen.Id("Inner").Op(":").Add(vs))
		}
		typ = jen.Qual(pathSgstream, "TypedWindowStore").Types(k, v)
	case spec.StoreSession:
		open = "SessionStore"
		typ = jen.Qual(pathSgstream, "TypedSessionStore").Types(k, v)
	case spec.StoreKeyValue:
		open = "KVStore"
		if st.Versioned {
			open = "VersionedStore"
		}
		typ = jen.Qual(pathSgstream, open).Types(k, v)
	default:
		open = "KVStore"
		typ = jen.Qual(pathSgstream, "KVStore").Types(k, v)
	}
	where := "of the task on partition (empty where no record reached yet)"
	if s.global {
		where = "of a global table: every partition gives the one replica"
	}
	f.Line()
	f.Comment(fmt.Sprintf("%s is the %s store %q %s.", method, s.kind(), st.Name, where))
	f.Func().Params(recv()).Id(method).Params(jen.Id("partition").Int32()).Params(jen.Op("*").Add(typ), jen.Error()).Block(
		jen.Return(jen.Qual(pathSgtest, open).Call(inner(), desc("Name"), jen.Id("partition"), desc("KeySerde"), vs)),
	)
	f.Line()
	f.Comment(fmt.Sprintf("%sForKey is %s on the partition that holds key (sgtest.StorePartition).", method, method))
	f.Func().Params(recv()).Id(method+"ForKey").Params(jen.Id("key").Add(g.c.topoType(st.Key))).Params(jen.Op("*").Add(typ.Clone()), jen.Error()).Block(
		jen.Return(jen.Qual(pathSgtest, "ForKey").Call(inner(), desc("Name"), jen.Id("key"), desc("KeySerde"), jen.Id("d").Dot(method))),
	)
}
