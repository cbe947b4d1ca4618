package gen

import (
	"sort"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// Sources and sinks: the nodes that read and write declared topics.

// source emits a stream, table or global table source of a declared topic.
func (g *topoGen) source(n *spec.Node) {
	t := n.Topic
	var cfg keyed
	cfg.add("Topic", jen.Lit(t.Name))
	cfg.add("Key", g.c.topicSerde(t, true, nil))
	cfg.add("Value", g.c.topicSerde(t, false, nil))
	if t.TimestampField != nil {
		ex := "timestamp" + GoName(t.Name)
		cfg.add("Timestamp", jen.Id(ex))
		g.extractor(ex, t)
	}
	if t.Partitions > 0 {
		cfg.add("Partitions", jen.Lit(t.Partitions))
	}
	conf := jen.Qual(pathSgstream, "SourceConfig").Types(g.typ(t.Key), g.typ(t.Value)).Values(cfg.items()...)
	switch {
	case t.Kind == spec.TopicTable && t.Store.Versioned:
		g.assign(n, jen.Qual(pathSgstream, "VersionedTableSource").Call(jen.Id("b"), jen.Lit(n.Name), conf, g.m.storeName(t.Store), durationLit(t.Store.HistoryRetention)))
	case t.Kind == spec.TopicTable:
		g.assign(n, jen.Qual(pathSgstream, "TableSource").Call(jen.Id("b"), jen.Lit(n.Name), conf, g.m.storeName(t.Store)))
	case t.Kind == spec.TopicGlobalTable:
		g.assign(n, jen.Qual(pathSgstream, "GlobalTableSource").Call(jen.Id("b"), jen.Lit(n.Name), conf, g.m.storeName(t.Store)))
	default:
		g.assign(n, jen.Qual(pathSgstream, "Source").Call(jen.Id("b"), jen.Lit(n.Name), conf))
	}
}

// extractor emits the event-time extractor of a topic: the timestamp field
// of the value, or the record timestamp for tombstones.
func (g *topoGen) extractor(name string, t *spec.Topic) {
	field := jen.Id("value").Dot(g.c.fieldNames[t.TimestampField])
	ms := field
	if t.TimestampField.Type.Kind == spec.KindTimestamp {
		ms = field.Clone().Dot("UnixMilli").Call()
	}
	g.m.extractors = append(g.m.extractors,
		jen.Commentf("%s extracts event time from field %q of topic %q; tombstones keep the record timestamp.", name, t.TimestampField.Name, t.Name),
		jen.Func().Id(name).Params(jen.Id("key").Add(g.typ(t.Key)), jen.Id("value").Add(g.typ(t.Value)), jen.Id("valueNull").Bool(), jen.Id("recordTs").Int64()).Int64().Block(
			jen.If(jen.Id("valueNull")).Block(jen.Return(jen.Id("recordTs"))),
			jen.Return(ms),
		),
		jen.Line(),
	)
}

// dynamicTopics are the topics a sink choosing its topic per record may
// write: the declared topics of in's key and value types, sorted.
func dynamicTopics(prog *spec.Program, in *spec.Node) []string {
	var topics []string
	for _, t := range prog.Topics {
		if t.Key.Equal(in.Key) && t.Value.Equal(in.Value) {
			topics = append(topics, t.Name)
		}
	}
	sort.Strings(topics)
	return topics
}

// sink emits To, or ToDynamic for a sink that chooses its topic per record
// among the declared topics of its key and value types. A windowed key
// serde partitions by the base key by itself (sgstream.WindowedKeySerde).
func (g *topoGen) sink(n *spec.Node) {
	in := n.Inputs[0]
	var cfg keyed
	if t := g.c.sinkTopic(n, dynamicTopics(g.prog, in)); t != nil {
		cfg.add("Key", g.c.topicSerde(t, true, keyWindow(in)))
		cfg.add("Value", g.c.topicSerde(t, false, nil))
	} else {
		cfg.add("Key", g.serde(in.Key, keyWindow(in)))
		cfg.add("Value", g.serde(in.Value, nil))
	}
	conf := jen.Qual(pathSgstream, "SinkConfig").Types(g.typ(in.Key), g.typ(in.Value)).Values(cfg.items()...)
	if n.Sink.Topic != nil {
		g.add(jen.Qual(pathSgstream, "To").Call(g.in(n, 0), jen.Lit(n.Name), jen.Lit(n.Sink.Topic.Name), conf))
		return
	}
	var lits []jen.Code
	for _, t := range dynamicTopics(g.prog, in) {
		lits = append(lits, jen.Lit(t))
	}
	// Kafka's TopicNameExtractor sees null values too: a pointer where they
	// can be null.
	op := "ToDynamic"
	if g.nulls.pointer(in) {
		op = "ToDynamicNullable"
	}
	f := g.fn(n, n.Sink.Chooser, g.signature(spec.RoleTopic, in.Key, g.val(in), nil, nil, nil))
	g.add(jen.Qual(pathSgstream, op).Call(g.in(n, 0), jen.Lit(n.Name), f, jen.Index().String().Values(lits...), conf))
}
