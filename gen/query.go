package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// queriesFileName is the generated file holding the typed interactive
// queries.
const queriesFileName = "streamgen_queries.go"

// generateQueries is the generator step that writes streamgen_queries.go:
// Queries, with one typed read-only view (package sgquery) per store the
// typed driver also knows (tables, aggregations and the built-in stores of
// the stores section), and queryStores, the list NewApp hands to the
// run command's HTTP endpoint. A program without such stores gets no file.
func generateQueries(c *genCtx) error {
	stores := driverStores(c.prog)
	if len(stores) == 0 {
		return nil
	}
	for _, name := range []string{"Queries", "NewQueries", "queryStores"} {
		c.pkgScope.reserve(&c.diags, name, "generated interactive query identifier", c.prog.Pos)
	}
	if len(c.diags) > 0 {
		return nil
	}
	t := &topoGen{c: c, prog: c.prog}
	f := c.newFile(queriesFileName)
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
	for _, s := range stores {
		typ, ctor, kind := queryView(t, s)
		method := storeMethod(s.st)
		f.Line()
		f.Comment(fmt.Sprintf("%s reads the %s store %q.", method, kind, s.st.Name))
		f.Func().Params(jen.Id("q").Id("Queries")).Id(method).Params().Op("*").Add(typ).Block(
			jen.Return(ctor.Clone().Dot("On").Call(jen.Id("q").Dot("src"))),
		)
		list = append(list, jen.Line().Add(ctor))
	}
	list = append(list, jen.Line())
	f.Line()
	f.Comment("queryStores are the stores `run --query-addr` serves (sgapp.App.Stores).")
	f.Func().Id("queryStores").Params().Index().Qual(pathSgquery, "Store").Block(
		jen.Return(jen.Index().Qual(pathSgquery, "Store").Values(list...)),
	)
	return nil
}

// queryView is the sgquery view type of a store, the expression that makes
// it, and the store's kind in words.
func queryView(t *topoGen, s driverStore) (typ, ctor *jen.Statement, kind string) {
	st := s.st
	k, v := t.typ(st.Key), t.typ(st.Value)
	ks, vs := t.serde(st.Key, nil), t.serde(st.Value, nil)
	name := jen.Lit(st.Name)
	switch st.Kind {
	case spec.StoreWindow:
		return jen.Qual(pathSgquery, "Window").Types(k, v),
			jen.Qual(pathSgquery, "NewWindow").Call(name, ks, vs, durationLit(st.WindowSize), jen.Lit(s.timestamped)), "window"
	case spec.StoreSession:
		return jen.Qual(pathSgquery, "Session").Types(k, v),
			jen.Qual(pathSgquery, "NewSession").Call(name, ks, vs), "session"
	}
	return jen.Qual(pathSgquery, "KeyValue").Types(k, v),
		jen.Qual(pathSgquery, "NewKeyValue").Call(name, ks, vs), "key-value"
}
