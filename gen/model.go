package gen

import (
	"fmt"
	"sort"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/streamgen/streamgen/spec"
)

// model is the Go-level program the topology, driver and queries files are
// emitted from, as sqlc's codegen builds Go structs and queries before it
// writes them: the Go names of topics, stores and generated methods, the
// serde expressions, one descriptor per queryable store, and the topology
// wiring with the user functions it names. buildModel makes it once and
// reports every naming problem in that one place; the emit steps only
// write what it holds.
type model struct {
	// topics are the declared topics in spec order.
	topics []*topicModel
	// stores are the stores the driver and the queries can read, in spec
	// order: each gets one package-level descriptor.
	stores  []*storeModel
	storeOf map[*spec.Store]*storeModel

	// wiring is the body of BuildTopology: the operator calls of every IR
	// node, in the IR's topological order (topology.go and the op_*.go
	// files).
	wiring []jen.Code
	// extractors are the event-time extractor functions BuildTopology uses.
	extractors []jen.Code
	// hooks are the app's on_start functions.
	hooks []jen.Code
	// funcs are the user functions the wiring names, each with the Go
	// signature its role needs, sorted by name and signature: the
	// compile-time assertions of the topology file. genCtx.funcAsserts is
	// this list.
	funcs []*funcAssert
	// inline are the inline expressions (`expr:`) of the wiring, in wiring
	// order. genCtx.inlineExprs is this list.
	inline []*funcAssert
	// imports are the spec imports inline expressions use: path → one
	// selector, to keep the import alive.
	imports map[string]string
}

// topicModel is a declared topic as generated code reads and writes it.
type topicModel struct {
	t *spec.Topic
	// window feeds a topic with windowed keys: its size decodes a key's end.
	window *spec.Window
	// read and written say whether the topology reads the topic (the driver
	// gets Pipe methods) or writes it (a Read method).
	read, written bool
}

// storeModel is a store the driver and the queries can read.
type storeModel struct {
	st *spec.Store
	// desc is the package-level variable describing the store (an
	// sgquery view), e.g. finalStore.
	desc string
	// method is the Queries and TestDriver accessor, e.g. FinalStore.
	method string
	// timestamped is set for the window stores of windowed aggregations,
	// whose values are sgstream.TimestampedValue (Kafka's
	// TimestampedWindowStore); key-value stores of the DSL carry their
	// timestamps inside sgstream.KVStore.
	timestamped bool
	// global is set for the store of a global table.
	global bool
}

// kind is the store's kind in words.
func (s *storeModel) kind() string {
	switch s.st.Kind {
	case spec.StoreWindow:
		return "window"
	case spec.StoreSession:
		return "session"
	}
	if s.st.Versioned {
		return "versioned key-value"
	}
	return "key-value"
}

// buildModel is the generator step that resolves the program into its Go
// model. It must run after the names step (it needs the records' Go names)
// and before the steps that emit from the model.
func buildModel(c *genCtx) error {
	m := &model{storeOf: map[*spec.Store]*storeModel{}, imports: map[string]string{}}
	c.model = m
	reads, writes := topicUse(c.prog)
	for _, t := range c.prog.Topics {
		m.topics = append(m.topics, &topicModel{t: t, window: windowFeeding(c.prog, t), read: reads[t], written: writes[t]})
	}
	m.resolveStores(c)
	if !buildWiring(c, m) || len(c.diags) > 0 {
		return nil
	}
	reserveDriverNames(c, m)
	if len(c.diags) > 0 {
		return nil
	}
	reserveQueryNames(c, m)
	return nil
}

// resolveStores lists the readable stores and gives each its descriptor
// and accessor names. A descriptor never takes the name of a user function
// of the spec (they share the package scope).
func (m *model) resolveStores(c *genCtx) {
	userFuncs := map[string]bool{}
	for _, n := range c.prog.Nodes {
		for _, fn := range nodeFuncs(n) {
			userFuncs[fn.Name] = true
		}
	}
	for _, ds := range driverStores(c.prog) {
		s := &storeModel{st: ds.st, method: storeMethod(ds.st), timestamped: ds.timestamped, global: ds.global}
		base := localName(s.method)
		s.desc = base
		for i := 2; userFuncs[s.desc]; i++ {
			s.desc = fmt.Sprintf("%s%d", base, i)
		}
		m.stores = append(m.stores, s)
		m.storeOf[ds.st] = s
	}
}

// storeName is the expression of a store's name in generated code: its
// descriptor's Name when it has one, else the name itself.
func (m *model) storeName(st *spec.Store) jen.Code {
	if s := m.storeOf[st]; s != nil {
		return jen.Id(s.desc).Dot("Name").Call()
	}
	return jen.Lit(st.Name)
}

// sortFuncs turns the collected assertions into m.funcs, sorted by the
// function name and signature that key them.
func (m *model) sortFuncs(asserts map[string]*funcAssert) {
	keys := make([]string, 0, len(asserts))
	for k := range asserts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m.funcs = append(m.funcs, asserts[k])
	}
}

// windowFeeding finds the window of the first sink that writes topic t.
func windowFeeding(prog *spec.Program, t *spec.Topic) *spec.Window {
	if t.Key.Kind != spec.KindWindowed && t.Key.Kind != spec.KindSessionWindowed {
		return nil
	}
	for _, n := range prog.Nodes {
		if n.Op == spec.OpTo && n.Sink.Topic == t {
			return keyWindow(n.Inputs[0])
		}
	}
	return nil
}

// windowSizeOf is the size a windowed key of w decodes its end with (0
// without a window).
func windowSizeOf(w *spec.Window) time.Duration {
	if w == nil {
		return 0
	}
	return windowSize(w)
}

// keyed is a keyed struct literal that keeps its keys in the order they
// are added, which is the order of the struct's declaration: jen.Dict sorts
// them, and a person writes Topic, Key, Value.
type keyed []jen.Code

// add appends the element name: v.
func (k *keyed) add(name string, v jen.Code) { *k = append(*k, jen.Id(name).Op(":").Add(v)) }

// items are the literal's elements for Values: on one line when there is
// one, else one per line, as gofmt lays out a hand-written literal.
func (k keyed) items() []jen.Code {
	if len(k) <= 1 {
		return k
	}
	return lines(k)
}

// lines puts each element of a composite literal on its own line.
func lines(elems []jen.Code) []jen.Code {
	out := make([]jen.Code, 0, len(elems)+1)
	for _, e := range elems {
		out = append(out, jen.Line().Add(e))
	}
	return append(out, jen.Line())
}

// sortedKeys are the keys of a string map in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
