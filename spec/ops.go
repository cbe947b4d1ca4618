package spec

// opDef is what the parser knows of one step operation. The table below is
// the only list of operations: readStep recognises a step by it, runStep
// resolves through it, hints quote its examples, and schema_test.go checks
// it against schema.json, so adding an operation is one row plus its
// resolver (and the schema's entry, which the test then demands).
type opDef struct {
	op Op
	// keys are the keys of the op's mapping, in the order did-you-mean
	// tries them. `name` is not among them: it belongs to the step.
	keys []string
	// nameInBody lets the step's `name` also be written inside the op's
	// mapping, as the reference allows for the ops that name an internal
	// topic or store.
	nameInBody bool
	// inputs are the shapes the op reads; nil when the resolver checks the
	// input itself (join takes any pair, windowed_by explains a stream).
	inputs []Shape
	// role is the role of the op's fn/expr, or "" when it has none or the
	// role depends on the input (group_by).
	role FuncRole
	// example shows the op with its declared output types, for the hint
	// that streamgen does not infer types; "" when it declares none.
	example string
	// resolve checks the step and builds its node. It always returns a
	// node; mistakes are reported and mark the step failed.
	resolve func(*parser, *step) *Node
}

// Shape sets that several operations read.
var (
	streamOnly    = []Shape{ShapeStream}
	streamOrTable = []Shape{ShapeStream, ShapeTable}
	aggInputs     = []Shape{ShapeGroupedStream, ShapeGroupedTable, ShapeTimeWindowedStream, ShapeSessionWindowedStream}
	fnKeys        = []string{"fn", "expr"}
)

// opTable lists the operations in reference order, which is also the order
// in which messages list them.
var opTable = []*opDef{
	{op: OpFilter, keys: []string{"fn", "expr", "not_null"}, inputs: streamOrTable, role: RolePredicate, resolve: (*parser).stepFilter},
	{op: OpFilterNot, keys: fnKeys, inputs: streamOrTable, role: RolePredicate, resolve: (*parser).stepFilter},
	{op: OpMap, keys: []string{"fn", "expr", "key", "value", "window_size"}, inputs: streamOnly, role: RoleKeyValueMap,
		example: "map: {fn: ToUser, key: string, value: User}", resolve: (*parser).stepMap},
	{op: OpMapValues, keys: []string{"fn", "expr", "value"}, inputs: streamOrTable, role: RoleValueMap,
		example: "map_values: {fn: ToSummary, value: Summary}", resolve: (*parser).stepMapValues},
	{op: OpFlatMap, keys: []string{"fn", "expr", "key", "value", "window_size"}, inputs: streamOnly, role: RoleFlatMap,
		example: "flat_map: {fn: Items, key: string, value: Item}", resolve: (*parser).stepMap},
	{op: OpFlatMapValues, keys: []string{"fn", "expr", "value"}, inputs: streamOnly, role: RoleFlatMapValues,
		example: "flat_map_values: {fn: Items, value: Item}", resolve: (*parser).stepMapValues},
	{op: OpSelectKey, keys: []string{"fn", "expr", "key", "window_size"}, inputs: streamOnly, role: RoleKeySelect,
		example: "select_key: {expr: \"value.UserID\", key: string}", resolve: (*parser).stepSelectKey},
	{op: OpPeek, keys: fnKeys, inputs: streamOnly, role: RoleAction, resolve: (*parser).stepPeek},
	{op: OpForeach, keys: fnKeys, inputs: streamOnly, role: RoleAction, resolve: (*parser).stepPeek},
	{op: OpSplit, keys: []string{"branches", "default"}, inputs: streamOnly, role: RolePredicate, resolve: (*parser).stepSplit},
	{op: OpMerge, keys: []string{"with"}, inputs: streamOnly, resolve: (*parser).stepMerge},
	{op: OpRepartition, keys: []string{"partitions"}, nameInBody: true, inputs: streamOnly, resolve: (*parser).stepRepartition},
	{op: OpTo, keys: []string{"topic", "topic_fn", "topic_expr"}, inputs: streamOnly, role: RoleTopic, resolve: (*parser).stepTo},
	{op: OpToTable, keys: []string{"store"}, inputs: streamOnly, resolve: (*parser).stepToTable},
	{op: OpToStream, inputs: []Shape{ShapeTable}, resolve: (*parser).stepToStream},
	{op: OpGroupByKey, nameInBody: true, inputs: streamOnly, resolve: (*parser).stepGroupByKey},
	{op: OpGroupBy, keys: []string{"fn", "expr", "key", "value", "window_size"}, nameInBody: true, inputs: streamOrTable,
		example: "group_by: {expr: \"value.UserID\", key: string, name: orders-by-user}", resolve: (*parser).stepGroupBy},
	{op: OpWindowedBy, keys: []string{"tumbling", "hopping", "sliding", "session", "retention", "emit"},
		resolve: (*parser).stepWindowedBy},
	{op: OpCount, keys: []string{"store", "emit"}, inputs: aggInputs, resolve: (*parser).stepCount},
	{op: OpReduce, keys: []string{"fn", "expr", "adder", "subtractor", "store", "emit"}, inputs: aggInputs,
		role: RoleReduce, resolve: (*parser).stepReduce},
	{op: OpAggregate, keys: []string{"init", "fn", "expr", "adder", "subtractor", "merger", "value", "store", "emit"},
		inputs: aggInputs, role: RoleAggregate,
		example: "aggregate: {init: NewStats, fn: AddOrder, value: Stats, store: stats}", resolve: (*parser).stepAggregate},
	{op: OpCogroup, keys: []string{"fn", "expr", "with", "init", "value", "store", "window", "merger", "emit"},
		inputs: []Shape{ShapeGroupedStream}, role: RoleAggregate,
		example: "cogroup: {fn: AddOrder, with: [...], init: NewStats, value: Stats, store: stats}", resolve: (*parser).stepCogroup},
	{op: OpSuppress, keys: []string{"until", "time_limit", "max_records", "max_bytes", "when_full"}, nameInBody: true,
		inputs: []Shape{ShapeTable}, resolve: (*parser).stepSuppress},
	{op: OpJoin, keys: []string{"with", "kind", "fn", "expr", "value", "window", "grace", "key_fn", "key_expr", "foreign_key_fn", "foreign_key_expr", "store"},
		nameInBody: true, role: RoleJoin,
		example: "join: {with: users, fn: Enrich, value: EnrichedOrder}", resolve: (*parser).stepJoin},
	{op: OpProcess, keys: []string{"fn", "stores", "key", "value", "window_size"}, inputs: streamOnly, role: RoleProcessor,
		example: "process: {fn: NewProcessor, key: string, value: Order}", resolve: (*parser).stepProcess},
	{op: OpProcessValues, keys: []string{"fn", "stores", "value"}, inputs: streamOnly, role: RoleProcessor,
		example: "process_values: {fn: NewProcessor, value: Order}", resolve: (*parser).stepProcess},
}

// opByName finds a step operation by its key in the spec.
var opByName = func() map[string]*opDef {
	m := make(map[string]*opDef, len(opTable))
	for _, d := range opTable {
		m[string(d.op)] = d
	}
	return m
}()

// opNames are the operation keys in reference order.
func opNames() []string {
	names := make([]string, len(opTable))
	for i, d := range opTable {
		names[i] = string(d.op)
	}
	return names
}

// runStep resolves a step through its operation's row.
func (p *parser) runStep(s *step) *Node {
	return s.def.resolve(p, s)
}
