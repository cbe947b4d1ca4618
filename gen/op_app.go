package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// The application: the topology file around BuildTopology's wiring (the
// AppID, the user-function assertions, NewApp and main).

// generateTopology is the generator step that writes the topology file
// from the model.
func generateTopology(c *genCtx) error {
	m, f := c.model, c.newFile(topologyFileName)
	f.Commentf("AppID is the application id: the consumer group and the prefix of every internal topic.")
	f.Const().Id("AppID").Op("=").Lit(c.prog.App.ID)
	f.Line()
	f.Commentf("BuildTopology wires the topology of %s. The runtime calls it once per task, so", c.cfg.SpecPath)
	f.Comment("every task owns its own nodes and stores.")
	f.Func().Id("BuildTopology").Params(jen.Id("b").Op("*").Qual(pathSgstream, "Builder")).Block(m.wiring...)
	f.Line()
	for _, code := range m.extractors {
		f.Add(code)
	}
	if len(m.funcs) > 0 {
		var lines []jen.Code
		for _, a := range m.funcs {
			lines = append(lines, jen.Comment(fmt.Sprintf("%s: %s of node %q", a.pos, a.role, a.node.Name)))
			lines = append(lines, jen.Id("_").Add(a.sig).Op("=").Id(a.name))
		}
		f.Comment("The user functions the spec names, with the signatures the topology needs: a")
		f.Comment("mismatch fails `go build` here, next to the spec position of the step.")
		f.Var().Defs(lines...)
		f.Line()
	}
	if len(m.imports) > 0 {
		var lines []jen.Code
		for _, p := range sortedKeys(m.imports) {
			lines = append(lines, jen.Id("_").Op("=").Qual(p, m.imports[p]))
		}
		f.Comment("Keep the imports that inline expressions use.")
		f.Var().Defs(lines...)
		f.Line()
	}
	emitApp(c, f)
	return nil
}

func policyLit(p spec.ErrorPolicy) jen.Code {
	switch p {
	case spec.PolicyContinue:
		return jen.Qual(pathSgstream, "PolicyContinue")
	case spec.PolicyDeadLetter:
		return jen.Qual(pathSgstream, "PolicyDeadLetter")
	}
	return jen.Qual(pathSgstream, "PolicyFail")
}

func timestampPolicyLit(p spec.TimestampPolicy) jen.Code {
	switch p {
	case spec.TimestampSkip:
		return jen.Qual(pathSgstream, "TimestampSkip")
	case spec.TimestampPartitionTime:
		return jen.Qual(pathSgstream, "TimestampPartitionTime")
	case spec.TimestampDeadLetter:
		return jen.Qual(pathSgstream, "TimestampDeadLetter")
	}
	return jen.Qual(pathSgstream, "TimestampFail")
}

// emitApp writes NewApp (and main for package main): the description the
// generated binary's commands work from, its fields in sgapp.App's order.
func emitApp(c *genCtx, f *jen.File) {
	app, m := c.prog.App, c.model
	var codecs []jen.Code
	for _, t := range m.topics {
		codecs = append(codecs, codec(c, t))
	}
	guarantee := string(app.Guarantee)
	if guarantee == "" {
		guarantee = string(spec.AtLeastOnce)
	}
	var d keyed
	d.add("ID", jen.Id("AppID"))
	d.add("Build", jen.Id("BuildTopology"))
	d.add("Topics", jen.Index().Qual(pathSgreplay, "TopicCodec").Values(lines(codecs)...))
	if len(m.stores) > 0 {
		d.add("Stores", jen.Id("queryStores").Call()) // query.go
	}
	if hasRegistry(c.prog) {
		d.add("Registry", jen.Id("registrySerdes").Call()) // registry.go
	}
	d.add("Guarantee", jen.Lit(guarantee))
	if app.StandbyReplicas != 0 {
		d.add("StandbyReplicas", jen.Lit(app.StandbyReplicas))
	}
	if app.CommitInterval != 0 {
		d.add("CommitInterval", durationLit(app.CommitInterval))
	}
	d.add("Deserialization", policyLit(app.OnDeserializationError))
	d.add("Processing", policyLit(app.OnProcessingError))
	if app.DeadLetterTopic != "" {
		d.add("DeadLetterTopic", jen.Lit(app.DeadLetterTopic))
	}
	d.add("InvalidTime", timestampPolicyLit(app.InvalidTimestamp))
	if len(m.hooks) > 0 {
		d.add("OnStart", jen.Index().Func().Params(jen.Qual("context", "Context")).Error().Values(m.hooks...))
	}
	d.add("Run", jen.Qual(pathSgrun, "Run"))
	d.add("Produce", jen.Qual(pathSgrun, "Produce"))
	d.add("Consume", jen.Qual(pathSgrun, "Consume"))
	f.Comment("NewApp describes the application for the standard commands (run, produce, consume, replay, describe).")
	f.Func().Id("NewApp").Params().Op("*").Qual(pathSgapp, "App").Block(
		jen.Return(jen.Op("&").Qual(pathSgapp, "App").Values(d.items()...)),
	)
	if c.prog.Package == "main" {
		f.Line()
		f.Func().Id("main").Params().Block(
			jen.Qual("os", "Exit").Call(jen.Qual(pathSgapp, "Main").Call(jen.Id("NewApp").Call(), jen.Qual("os", "Args").Index(jen.Lit(1).Op(":")))),
		)
	}
}

// codec is the replay/driver codec of a declared topic.
func codec(c *genCtx, t *topicModel) jen.Code {
	k := t.t.Key
	switch k.Kind {
	case spec.KindWindowed:
		return jen.Qual(pathSgreplay, "TimeWindowedTopic").Call(jen.Lit(t.t.Name), c.topoSerde(k.Elem, nil), c.topicSerde(t.t, false, nil), durationLit(windowSizeOf(t.window)))
	case spec.KindSessionWindowed:
		return jen.Qual(pathSgreplay, "SessionWindowedTopic").Call(jen.Lit(t.t.Name), c.topoSerde(k.Elem, nil), c.topicSerde(t.t, false, nil))
	}
	ks, vs := c.topicSerde(t.t, true, nil), c.topicSerde(t.t, false, nil)
	if kj, vj := t.t.KeyFormat == spec.FormatJSON, t.t.ValueFormat == spec.FormatJSON; kj || vj {
		return jen.Qual(pathSgreplay, "JSONTopic").Call(jen.Lit(t.t.Name), ks, vs, jen.Lit(kj), jen.Lit(vj))
	}
	return jen.Qual(pathSgreplay, "Topic").Call(jen.Lit(t.t.Name), ks, vs)
}
