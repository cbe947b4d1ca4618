package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// The registry formats (avro, protobuf, jsonschema; docs/formats.md
// "Schema registry"): a topic side in one of them has a serde that wraps
// the format's generated codec (a serdes.SchemaCodec) in the Confluent
// wire format. The serde learns its schema id when the runtime binds it
// to a registry at start, so there is exactly one per topic side: a
// package variable in streamgen_registry.go, which every source, sink,
// store, replay codec and the test driver refer to, and which
// registrySerdes lists for the runtime to bind (sgapp.App.Registry).

// registryFile is the file the registry step writes.
const registryFile = "streamgen_registry.go"

// registryUse is one registry serde: its topic side and codec.
type registryUse struct {
	topic *spec.Topic
	key   bool
	codec *jen.Statement
}

// registryVar is the package variable of a topic side's registry serde.
func registryVar(t *spec.Topic, key bool) string {
	if key {
		return "sgRegistry" + GoName(t.Name) + "Key"
	}
	return "sgRegistry" + GoName(t.Name) + "Value"
}

// registrySerde is the serde of a topic side in a registry format, whose
// format's codec is the expression codec (a serdes.SchemaCodec of the
// side's type): a reference to the side's package variable, declared by
// the registry step. topicSerde calls it for every registry format.
func (c *genCtx) registrySerde(t *spec.Topic, key bool, codec *jen.Statement) *jen.Statement {
	name := registryVar(t, key)
	if c.registry == nil {
		c.registry = map[string]*registryUse{}
	}
	if c.registry[name] == nil {
		side := "value"
		if key {
			side = "key"
		}
		c.pkgScope.reserve(&c.diags, name, fmt.Sprintf("registry serde of topic %q %s", t.Name, side), t.Pos)
		c.registry[name] = &registryUse{topic: t, key: key, codec: codec}
	}
	return jen.Id(name)
}

// hasRegistry reports whether a topic of the spec has a side in a
// registry format.
func hasRegistry(prog *spec.Program) bool {
	for _, t := range prog.Topics {
		if t.KeyFormat.IsRegistry() || t.ValueFormat.IsRegistry() {
			return true
		}
	}
	return false
}

// generateRegistry is the generator step writing streamgen_registry.go:
// the registry serde of every topic side in a registry format, in topic
// order, and registrySerdes listing them. It asks topicSerde for each side
// itself, so the file does not depend on which other step asked first.
func generateRegistry(c *genCtx) error {
	if !hasRegistry(c.prog) {
		return nil
	}
	c.pkgScope.reserve(&c.diags, "registrySerdes", "the list of registry serdes", c.prog.Pos)
	f := c.newFile(registryFile)
	var list []jen.Code
	for _, t := range c.prog.Topics {
		for _, key := range []bool{true, false} {
			if formatOf(t, key).IsRegistry() {
				c.topicSerde(t, key, nil)
				c.emitRegistryVar(f, c.registry[registryVar(t, key)])
				list = append(list, jen.Id(registryVar(t, key)))
			}
		}
	}
	f.Line()
	f.Comment("// registrySerdes are the registry serdes of the app's topics, for the runtime")
	f.Comment("// to bind to a schema registry before records flow (sgapp.App.Registry).")
	f.Func().Id("registrySerdes").Params().Index().Qual(pathSerdes, "RegistryBinder").Block(
		jen.Return(jen.Index().Qual(pathSerdes, "RegistryBinder").Values(lines(list)...)))
	return nil
}

// emitRegistryVar declares one registry serde variable.
func (c *genCtx) emitRegistryVar(f *jen.File, u *registryUse) {
	ty, side := u.topic.Value, "value"
	if u.key {
		ty, side = u.topic.Key, "key"
	}
	var subj keyed
	subj.add("Topic", jen.Lit(u.topic.Name))
	if u.key {
		subj.add("Key", jen.True())
	}
	if u.topic.SubjectStrategy == spec.SubjectRecord {
		subj.add("Strategy", jen.Qual(pathSerdes, "RecordNameStrategy"))
		subj.add("Record", jen.Lit(ty.Record.SchemaName))
	}
	f.Line()
	f.Commentf("// %s is the %s serde of topic %q, in the %s format.", registryVar(u.topic, u.key), side, u.topic.Name, formatOf(u.topic, u.key))
	f.Var().Id(registryVar(u.topic, u.key)).Op("=").Qual(pathSerdes, "NewRegistrySerde").Types(c.valueType(ty)).Call(
		u.codec, jen.Qual(pathSerdes, "Subject").Values(subj.items()...))
}

// formatOf is the format of a topic side.
func formatOf(t *spec.Topic, key bool) spec.Format {
	if key {
		return t.KeyFormat
	}
	return t.ValueFormat
}
