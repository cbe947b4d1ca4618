package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// queriesFileName is the generated file holding the store descriptors and
// the typed interactive queries.
const queriesFileName = "streamgen_queries.go"

// reserveQueryNames claims the queries file's identifiers (part of
// buildModel). A program without readable stores gets no file.
func reserveQueryNames(c *genCtx, m *model) {
	if len(m.stores) == 0 {
		return
	}
	for _, name := range []string{"Queries", "NewQueries", "queryStores"} {
		c.pkgScope.reserve(&c.diags, name, "generated interactive query identifier", c.prog.Pos)
	}
	for _, s := range m.stores {
		c.pkgScope.reserve(&c.diags, s.desc, fmt.Sprintf("descriptor of store %q", s.st.Name), s.st.Pos)
	}
}

// generateQueries is the generator step that writes streamgen_queries.go:
// one descriptor (an sgquery view) per store the typed driver also knows
// (tables, aggregations and the built-in stores of the stores section),
// which BuildTopology, the driver and the queries all name it by; Queries,
// with one typed read-only view per store; and queryStores, the list NewApp
// hands to the run command's HTTP endpoint.
func generateQueries(c *genCtx) error {
	stores := c.model.stores
	if len(stores) == 0 {
		return nil
	}
	f := c.newFile(queriesFileName)
	var descs []jen.Code
	for _, s := range stores {
		descs = append(descs, jen.Id(s.desc).Op("=").Add(storeDescriptor(c, s)))
	}
	f.Comment("The stores the application can read, each described once: BuildTopology, Queries,")
	f.Comment("queryStores and the TestDriver take their names and serdes from here.")
	f.Var().Defs(descs...)
	f.Line()
	f.Comment("Queries reads the application's stores while it runs: Kafka Streams' interactive")
	f.Comment("queries, with the spec's key and value types. Each method is a read-only view of one")
	f.Comment("store on the engine the Queries was made for; reads are local (a key another")
	f.Comment("instance holds fails with sgquery.ErrNotLocal, and KeyMetadata names that instance).")
	f.Comment("`run --query-addr` serves the same stores over HTTP and answers for every key.")
	f.Type().Id("Queries").Struct(jen.Id("src").Qual(pathSgquery, "Source"))
	f.Line()
	f.Comment("NewQueries reads from src, such as the *sgkafka.Engine running BuildTopology.")
	f.Func().Id("NewQueries").Params(jen.Id("src").Qual(pathSgquery, "Source")).Id("Queries").Block(
		jen.Return(jen.Id("Queries").Values(jen.Id("src"))),
	)
	var list []jen.Code
	var widths []int
	for _, s := range stores {
		f.Line()
		f.Comment(fmt.Sprintf("%s reads the %s store %q.", s.method, s.kind(), s.st.Name))
		f.Func().Params(jen.Id("q").Id("Queries")).Id(s.method).Params().Op("*").Add(queryView(c, s)).Block(
			jen.Return(jen.Id(s.desc).Dot("On").Call(jen.Id("q").Dot("src"))),
		)
		list = append(list, jen.Id(s.desc))
		widths = append(widths, len(s.desc))
	}
	f.Line()
	f.Comment("queryStores are the stores `run --query-addr` serves (sgapp.App.Stores).")
	f.Func().Id("queryStores").Params().Index().Qual(pathSgquery, "Store").Block(
		jen.Return(jen.Index().Qual(pathSgquery, "Store").Values(rows(list, widths)...)),
	)
	return nil
}

// queryView is the sgquery view type of a store.
func queryView(c *genCtx, s *storeModel) *jen.Statement {
	k, v := c.topoType(s.st.Key), c.topoType(s.st.Value)
	switch s.st.Kind {
	case spec.StoreWindow:
		return jen.Qual(pathSgquery, "Window").Types(k, v)
	case spec.StoreSession:
		return jen.Qual(pathSgquery, "Session").Types(k, v)
	}
	return jen.Qual(pathSgquery, "KeyValue").Types(k, v)
}

// storeDescriptor is the expression that describes a store: the sgquery
// constructor of its kind.
func storeDescriptor(c *genCtx, s *storeModel) *jen.Statement {
	st := s.st
	name := jen.Lit(st.Name)
	ks, vs := c.storeSerdes(st)
	switch {
	case st.Kind == spec.StoreWindow && s.timestamped:
		return jen.Qual(pathSgquery, "NewTimestampedWindow").Call(name, ks, vs, durationLit(st.WindowSize))
	case st.Kind == spec.StoreWindow:
		return jen.Qual(pathSgquery, "NewWindow").Call(name, ks, vs, durationLit(st.WindowSize))
	case st.Kind == spec.StoreSession:
		return jen.Qual(pathSgquery, "NewSession").Call(name, ks, vs)
	}
	return jen.Qual(pathSgquery, "NewKeyValue").Call(name, ks, vs)
}
