package spec

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, path string) *Program {
	t.Helper()
	prog, err := ParseFile(path)
	if err != nil {
		t.Fatalf("ParseFile(%q):\n%v", path, err)
	}
	return prog
}

func TestFullProgram(t *testing.T) {
	prog := mustParse(t, "testdata/full.yaml")
	if prog.File != "testdata/full.yaml" || prog.Version != 1 || prog.Package != "full" {
		t.Errorf("program: file %q version %d package %q", prog.File, prog.Version, prog.Package)
	}
	if !slices.Equal(prog.Imports, []string{"strings"}) {
		t.Errorf("imports = %v", prog.Imports)
	}
	app := prog.App
	if app.ID != "full-app" || app.Guarantee != ExactlyOnceV2 || app.CommitInterval != 100*time.Millisecond ||
		app.OnDeserializationError != PolicyDeadLetter || app.OnProcessingError != PolicyContinue ||
		app.DeadLetterTopic != "dlq" || app.InvalidTimestamp != TimestampSkip {
		t.Errorf("app = %+v", *app)
	}
	if app.Pos.String() != "testdata/full.yaml:8:3" {
		t.Errorf("app pos = %v", app.Pos)
	}

	var recNames []string
	for _, r := range prog.Records {
		recNames = append(recNames, r.Name)
	}
	if want := []string{"Country", "Enriched", "Item", "Order", "Payment", "Stats", "Tree", "User"}; !slices.Equal(recNames, want) {
		t.Errorf("records = %v, want %v", recNames, want)
	}
	if len(prog.Enums) != 1 || len(prog.Enums[0].Values) != 3 || prog.Enums[0].Values[2].Name != "SHIPPED" ||
		prog.Enums[0].Values[2].Number != 2 || prog.Enums[0].Values[2].Doc != "On its way." {
		t.Errorf("enum Status not resolved as written")
	}
}

func TestFullFields(t *testing.T) {
	prog := mustParse(t, "testdata/full.yaml")
	var order *Record
	for _, r := range prog.Records {
		if r.Name == "Order" {
			order = r
		}
	}
	type fw struct {
		name, typ string
		def       any
	}
	want := []fw{
		{"id", "string", nil}, {"user_id", "string", nil}, {"amount", "float64", 0.5},
		{"placed_at", "timestamp", nil}, {"items", "list<Item>", nil}, {"note", "optional<string>", nil},
		{"tags", "map<string,int64>", nil}, {"status", "Status", "PENDING"}, {"raw", "bytes", nil},
		{"paid", "bool", false}, {"small", "int32", int64(-3)}, {"big", "int64", nil},
		{"u32", "uint32", nil}, {"u64", "uint64", uint64(7)}, {"ratio", "float32", nil},
		{"ttl", "duration", int64(300000)}, {"legacy", "string", nil},
		{"nested", "optional<list<map<string,Item>>>", nil}, {"due", "timestamp", int64(1704164645000)},
	}
	if len(order.Fields) != len(want) {
		t.Fatalf("Order has %d fields, want %d", len(order.Fields), len(want))
	}
	for i, w := range want {
		f := order.Fields[i]
		if f.ID != i+1 || f.Name != w.name || f.Type.String() != w.typ || f.Default != w.def {
			t.Errorf("field %d = {%d %q %s %#v}, want {%d %q %s %#v}", i, f.ID, f.Name, f.Type, f.Default, i+1, w.name, w.typ, w.def)
		}
	}
	if f := order.Fields[16]; !f.Deprecated || f.Doc != "Replaced by note." {
		t.Errorf("legacy field: deprecated %v doc %q", f.Deprecated, f.Doc)
	}
	if f := order.Fields[7]; f.Type.Kind != KindEnum || f.Type.Enum.Name != "Status" {
		t.Errorf("status field type not resolved to the enum")
	}
	if f := order.Fields[4]; f.Type.Elem.Record == nil || f.Type.Elem.Record.Name != "Item" {
		t.Errorf("items field element not resolved to record Item")
	}
	if got := order.Fields[3].Pos.String(); got != "testdata/full.yaml:36:7" {
		t.Errorf("placed_at pos = %s", got)
	}
	for _, topic := range prog.Topics {
		switch topic.Name {
		case "orders":
			if topic.TimestampField != order.Fields[3] || topic.Partitions != 4 || topic.Kind != TopicStream {
				t.Errorf("topic orders = %+v", *topic)
			}
		case "users":
			if topic.Kind != TopicTable || topic.Store == nil || topic.Store.Name != "users-store" {
				t.Errorf("topic users = %+v", *topic)
			}
		case "countries":
			if topic.Kind != TopicGlobalTable || topic.Store == nil || topic.Store.Name != "countries-store" {
				t.Errorf("topic countries = %+v", *topic)
			}
		}
	}
}

func TestFullNodes(t *testing.T) {
	prog := mustParse(t, "testdata/full.yaml")
	type nw struct {
		op         Op
		shape      Shape
		key, value string
		inputs     string
	}
	want := map[string]nw{
		"orders":                             {OpSource, ShapeStream, "string", "Order", ""},
		"valid.filter1":                      {OpFilter, ShapeStream, "string", "Order", "orders"},
		"valid":                              {OpProcessValues, ShapeStream, "string", "Order", "valid.peek4"},
		"sized":                              {OpSplit, ShapeBranched, "string", "Order", "valid"},
		"big":                                {OpBranch, ShapeStream, "string", "Order", "sized"},
		"small":                              {OpBranch, ShapeStream, "string", "Order", "sized"},
		"all-sizes.merge1":                   {OpMerge, ShapeStream, "string", "Order", "big,small"},
		"all-sizes":                          {OpTo, ShapeNone, "?", "?", "all-sizes.merge1"},
		"by-user":                            {OpGroupByKey, ShapeGroupedStream, "string", "Order", "by-user.select_key1"},
		"totals":                             {OpAggregate, ShapeTable, "string", "Stats", "by-user"},
		"counts-5m.windowed_by1":             {OpWindowedBy, ShapeTimeWindowedStream, "string", "Order", "by-user"},
		"counts-5m.count2":                   {OpCount, ShapeTable, "windowed<string>", "int64", "counts-5m.windowed_by1"},
		"counts-5m.counts-final":             {OpSuppress, ShapeTable, "windowed<string>", "int64", "counts-5m.count2"},
		"counts-5m.to_stream4":               {OpToStream, ShapeStream, "windowed<string>", "int64", "counts-5m.counts-final"},
		"counts-5m.map5":                     {OpMap, ShapeStream, "string", "int64", "counts-5m.to_stream4"},
		"sessions.windowed_by1":              {OpWindowedBy, ShapeSessionWindowedStream, "string", "Order", "by-user"},
		"sessions.aggregate2":                {OpAggregate, ShapeTable, "session_windowed<string>", "Stats", "sessions.windowed_by1"},
		"by-status.orders-by-status":         {OpGroupBy, ShapeGroupedStream, "Status", "Order", "valid"},
		"users-per-country.users-by-country": {OpGroupBy, ShapeGroupedTable, "string", "User", "users-per-country.filter1"},
		"latest-user":                        {OpReduce, ShapeTable, "string", "User", "latest-user.users-by-country-3"},
		"paid-orders.order-payments":         {OpJoin, ShapeStream, "string", "Order", "valid,payments-by-order"},
		"enrich-orders.orders-users":         {OpJoin, ShapeStream, "string", "Enriched", "enrich-orders.select_key1,users"},
		"enrich-orders.join3":                {OpJoin, ShapeStream, "string", "Enriched", "enrich-orders.orders-users,countries"},
		"order-table":                        {OpToTable, ShapeTable, "string", "Order", "orders"},
		"order-users":                        {OpJoin, ShapeTable, "string", "Enriched", "order-table,users"},
		"user-with-totals.join1":             {OpJoin, ShapeTable, "string", "Enriched", "users,totals"},
		"activity":                           {OpCogroup, ShapeTable, "windowed<string>", "Stats", "orders-grouped,payments-grouped"},
		"items.flat_map_values1":             {OpFlatMapValues, ShapeStream, "string", "Item", "valid"},
		"items.items-by-sku":                 {OpRepartition, ShapeStream, "string", "Item", "items.flat_map2"},
		"items.process4":                     {OpProcess, ShapeStream, "string", "int64", "items.items-by-sku"},
	}
	index := map[*Node]int{}
	byName := map[string]*Node{}
	for i, n := range prog.Nodes {
		index[n] = i
		byName[n.Name] = n
		for _, in := range n.Inputs {
			if j, ok := index[in]; !ok || j >= i {
				t.Errorf("node %q reads %q, which does not come before it", n.Name, in.Name)
			}
		}
		for _, f := range []*Func{n.Fn, n.Init, n.Merger, n.Adder, n.Subtractor} {
			if f != nil && (f.Role == "" || (f.Name == "") == (f.Expr == "")) {
				t.Errorf("node %q: func %+v needs a role and exactly one of name or expr", n.Name, *f)
			}
		}
	}
	if len(prog.Nodes) != 64 {
		t.Errorf("%d nodes, want 64", len(prog.Nodes))
	}
	for name, w := range want {
		n := byName[name]
		if n == nil {
			t.Errorf("no node %q", name)
			continue
		}
		var ins []string
		for _, in := range n.Inputs {
			ins = append(ins, in.Name)
		}
		got := nw{n.Op, n.Shape, typeString(n.Key), typeString(n.Value), strings.Join(ins, ",")}
		if got != w {
			t.Errorf("node %q = %+v, want %+v", name, got, w)
		}
	}
	// Roles, windows, emit, positions.
	if f := byName["counts-5m.map5"].Fn; f.Role != RoleKeyValueMap || f.Name != "Unwindow" {
		t.Errorf("map fn = %+v", *f)
	}
	if n := byName["by-status.orders-by-status"]; n.Fn.Role != RoleKeySelect || n.Repartition == nil || n.Repartition.Name != "orders-by-status" {
		t.Errorf("stream group_by: fn %+v repartition %+v", *n.Fn, n.Repartition)
	}
	if n := byName["users-per-country.users-by-country"]; n.Fn.Role != RoleKeyValueMap {
		t.Errorf("table group_by fn role = %s", n.Fn.Role)
	}
	if n := byName["counts-5m.count2"]; n.Emit != EmitOnClose || n.Window == nil || n.Window.Size != 5*time.Minute ||
		n.Window.Grace != time.Minute || !n.WindowedKey {
		t.Errorf("windowed count: emit %q window %+v", n.Emit, n.Window)
	}
	if n := byName["counts-5m.counts-final"]; n.Suppress.Kind != SuppressUntilWindowCloses || n.Suppress.Name != "counts-final" || n.Suppress.WhenFull != "shutdown" {
		t.Errorf("suppress = %+v", *n.Suppress)
	}
	if n := byName["sessions"]; n.Suppress.Kind != SuppressUntilTimeLimit || n.Suppress.TimeLimit != time.Minute ||
		n.Suppress.MaxRecords != 1000 || n.Suppress.MaxBytes != 1048576 || n.Suppress.WhenFull != "emit_early" {
		t.Errorf("suppress = %+v", *n.Suppress)
	}
	if n := byName["sessions.aggregate2"]; n.Merger == nil || n.Merger.Name != "MergeStats" || n.Init.Role != RoleInit || n.Agg.String() != "Stats" {
		t.Errorf("session aggregate: merger %+v", n.Merger)
	}
	if n := byName["country-stats"]; n.Adder.Role != RoleAggregate || n.Subtractor.Expr != "SubUser(key, value, agg)" || n.Fn != nil {
		t.Errorf("table aggregate: adder %+v subtractor %+v", n.Adder, n.Subtractor)
	}
	if n := byName["latest-user"]; n.Adder.Name != "PickUser" || n.Adder.Role != RoleReduce || n.Subtractor.Name != "DropUser" {
		t.Errorf("table reduce: adder %+v subtractor %+v", n.Adder, n.Subtractor)
	}
	if n := byName["sized"]; len(n.Branches) != 2 || n.Branches[0] != byName["big"] || !byName["small"].Default || byName["small"].Fn != nil ||
		byName["big"].Fn.Expr != "value.Amount > 100" || byName["big"].Doc != "Large orders." {
		t.Errorf("split branches not resolved")
	}
	if n := byName["all-sizes"]; n.Sink.Chooser == nil || n.Sink.Chooser.Role != RoleTopic || n.Sink.Topic != nil {
		t.Errorf("to with topic_fn: sink %+v", *n.Sink)
	}
	if n := byName["big-out"]; n.Sink.Topic == nil || n.Sink.Topic.Name != "big-orders" {
		t.Errorf("to big-orders: sink %+v", *n.Sink)
	}
	if n := byName["valid"]; len(n.Stores) != 1 || n.Stores[0].Name != "dedup" || n.Doc != "Drops orders seen before." || n.Fn.Role != RoleProcessor {
		t.Errorf("process_values: stores %v doc %q", n.Stores, n.Doc)
	}
	if n := byName["activity"]; len(n.Cogroup) != 2 || n.Cogroup[1].Input != byName["payments-grouped"] ||
		n.Cogroup[1].Aggregator.Name != "AddPaymentActivity" || n.Window.Kind != WindowTumbling || n.Emit != EmitOnUpdate {
		t.Errorf("cogroup not resolved: %+v", n.Cogroup)
	}
	if got := byName["valid.filter1"].Pos.String(); got != "testdata/full.yaml:104:9" {
		t.Errorf("valid.filter1 pos = %s", got)
	}
	if got := byName["big"].Pos.String(); got != "testdata/full.yaml:116:22" {
		t.Errorf("branch big pos = %s", got)
	}
}

func TestFullJoins(t *testing.T) {
	prog := mustParse(t, "testdata/full.yaml")
	type jw struct {
		shape               JoinShape
		kind                JoinKind
		before, after, grac time.Duration
		stores, reparts     string
	}
	want := map[string]jw{
		"paid-orders.order-payments": {JoinStreamStream, JoinOuter, 10 * time.Minute, 10 * time.Minute, time.Minute,
			"order-payments-this,order-payments-other,order-payments-outer", "-,order-payments-right"},
		"enrich-orders.orders-users": {JoinStreamTable, JoinLeft, 0, 0, 0, "", "orders-users,-"},
		"enrich-orders.join3":        {JoinStreamGlobal, JoinInner, 0, 0, 0, "", "-,-"},
		"order-users":                {JoinForeignKey, JoinInner, 0, 0, 0, "order-user-subscriptions", "-,-"},
		"user-with-totals.join1":     {JoinTableTable, JoinOuter, 0, 0, 0, "", "-,-"},
	}
	seen := 0
	for _, n := range prog.Nodes {
		if n.Op != OpJoin {
			continue
		}
		seen++
		j := n.Join
		var stores []string
		for _, s := range []*Store{j.ThisStore, j.OtherStore, j.OuterStore, j.SubscriptionStore} {
			if s != nil {
				stores = append(stores, s.Name)
			}
		}
		rp := func(r *Repartition) string {
			if r == nil {
				return "-"
			}
			return r.Name
		}
		got := jw{j.Shape, j.Kind, j.Before, j.After, j.Grace, strings.Join(stores, ","), rp(j.ThisRepartition) + "," + rp(j.OtherRepartition)}
		if got != want[n.Name] {
			t.Errorf("join %q = %+v, want %+v", n.Name, got, want[n.Name])
		}
		if n.Fn == nil || n.Fn.Role != RoleJoin {
			t.Errorf("join %q: joiner %+v", n.Name, n.Fn)
		}
	}
	if seen != len(want) {
		t.Errorf("%d joins, want %d", seen, len(want))
	}
	for _, n := range prog.Nodes {
		switch n.Name {
		case "enrich-orders.join3":
			if n.Join.KeyMapper == nil || n.Join.KeyMapper.Role != RoleKeySelect || n.Join.KeyMapper.Expr != "value.User.Country" {
				t.Errorf("global join key mapper = %+v", n.Join.KeyMapper)
			}
		case "order-users":
			if n.Join.ForeignKey == nil || n.Join.ForeignKey.Role != RoleForeignKey {
				t.Errorf("fk join foreign key = %+v", n.Join.ForeignKey)
			}
		}
	}
}

func TestFullStores(t *testing.T) {
	prog := mustParse(t, "testdata/full.yaml")
	type sw struct {
		kind                StoreKind
		key, value          string
		retention, size     time.Duration
		dups, logged, inMem bool
	}
	want := map[string]sw{
		"activity-store":           {StoreWindow, "string", "Stats", time.Hour, time.Hour, false, true, false},
		"countries-store":          {StoreKeyValue, "string", "Country", 0, 0, false, true, false},
		"country-stats-store":      {StoreKeyValue, "string", "Stats", 0, 0, false, true, false},
		"counts-5m-store":          {StoreWindow, "string", "int64", 6 * time.Minute, 5 * time.Minute, false, true, false},
		"counts-final-store":       {StoreKeyValue, "windowed<string>", "int64", 0, 0, false, true, false},
		"dedup":                    {StoreKeyValue, "string", "int64", 0, 0, false, true, true},
		"hopping-store":            {StoreWindow, "string", "Order", time.Hour, 10 * time.Minute, false, true, false},
		"latest-user-store":        {StoreKeyValue, "string", "User", 0, 0, false, true, false},
		"order-payments-other":     {StoreWindow, "string", "Payment", 21 * time.Minute, 20 * time.Minute, true, true, false},
		"order-payments-outer":     {StoreKeyValue, "string", "Order", 0, 0, false, true, false},
		"order-payments-this":      {StoreWindow, "string", "Order", 21 * time.Minute, 20 * time.Minute, true, true, false},
		"order-user-subscriptions": {StoreKeyValue, "string", "string", 0, 0, false, true, false},
		"orders-by-id":             {StoreKeyValue, "string", "Order", 0, 0, false, true, false},
		"recent":                   {StoreWindow, "string", "Order", time.Hour, time.Minute, false, false, false},
		"session-buffer-store":     {StoreKeyValue, "session_windowed<string>", "Stats", 0, 0, false, true, false},
		"session-store":            {StoreSession, "string", "Stats", 30 * time.Minute, 0, false, true, false},
		"sliding-store":            {StoreWindow, "string", "Stats", 21 * time.Minute, 10 * time.Minute, false, true, false},
		"status-counts":            {StoreKeyValue, "Status", "int64", 0, 0, false, true, false},
		"user-totals-store":        {StoreKeyValue, "string", "Stats", 0, 0, false, true, false},
		"users-per-country-store":  {StoreKeyValue, "string", "int64", 0, 0, false, true, false},
		"users-store":              {StoreKeyValue, "string", "User", 0, 0, false, true, false},
		"visits":                   {StoreSession, "string", "int64", 2 * time.Hour, 0, false, true, false},
	}
	var names []string
	for _, s := range prog.Stores {
		names = append(names, s.Name)
		got := sw{s.Kind, typeString(s.Key), typeString(s.Value), s.Retention, s.WindowSize, s.RetainDuplicates, s.Logged, s.InMemory}
		if w, ok := want[s.Name]; !ok || got != w {
			t.Errorf("store %q = %+v, want %+v", s.Name, got, w)
		}
	}
	if !slices.IsSorted(names) || len(names) != len(want) {
		t.Errorf("stores = %v, want %d sorted", names, len(want))
	}
	var its []string
	for _, it := range prog.InternalTopics {
		its = append(its, it.Name+"/"+string(it.Kind)+"/"+it.Node.Name)
	}
	wantIT := []string{
		"items-by-sku/repartition/items.items-by-sku",
		"order-payments-right/repartition/paid-orders.order-payments",
		"order-user-subscription-registration/subscription_registration/order-users",
		"order-user-subscription-response/subscription_response/order-users",
		"orders-by-status/repartition/by-status.orders-by-status",
		"orders-by-user/repartition/by-user",
		"orders-users/repartition/enrich-orders.orders-users",
		"payments-by-order-key/repartition/payments-grouped",
		"users-by-country/repartition/users-per-country.users-by-country",
		"users-by-country-2/repartition/country-stats.users-by-country-2",
		"users-by-country-3/repartition/latest-user.users-by-country-3",
	}
	if !slices.Equal(its, wantIT) {
		t.Errorf("internal topics:\n%s\nwant:\n%s", strings.Join(its, "\n"), strings.Join(wantIT, "\n"))
	}
}

func TestMinimalDefaults(t *testing.T) {
	prog := mustParse(t, "testdata/minimal.yaml")
	app := prog.App
	if app.Guarantee != AtLeastOnce || app.OnDeserializationError != PolicyFail || app.OnProcessingError != PolicyFail ||
		app.InvalidTimestamp != TimestampFail || app.CommitInterval != 0 || app.DeadLetterTopic != "" {
		t.Errorf("defaults = %+v", *app)
	}
	if len(prog.Nodes) != 2 || prog.Nodes[1].Name != "copy" || prog.Nodes[1].Sink.Topic.Name != "out" {
		t.Errorf("nodes = %v", prog.Nodes)
	}
}

func TestPackageFromDirectory(t *testing.T) {
	src, err := os.ReadFile("testdata/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src = []byte(strings.Replace(string(src), "package: minimal\n", "", 1))
	prog, err := Parse(filepath.Join("somewhere", "shop", "streamgen.yaml"), src)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Package != "shop" {
		t.Errorf("package = %q, want the directory name", prog.Package)
	}
	_, err = Parse(filepath.Join("somewhere", "my-shop", "streamgen.yaml"), src)
	if err == nil || !strings.Contains(err.Error(), `the directory name "my-shop" is not a valid Go package name`) {
		t.Errorf("err = %v", err)
	}
}

func TestDiagnosticsSortedAndComplete(t *testing.T) {
	// Three independent problems in reverse order of position.
	src := header + "topology:\n  - name: x\n    from: orders\n    steps:\n      - filter: {fn: 1F}\n      - count: {store: c}\n" +
		"  - name: y\n    from: nowhere\n    steps: [{to: out}]\n"
	_, err := Parse("t.yaml", []byte(src))
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) != 3 {
		t.Fatalf("want 3 diagnostics, got %v", err)
	}
	lines := strings.Split(err.Error(), "\n")
	if !strings.HasPrefix(lines[0], "t.yaml:20:22: ") || !strings.HasPrefix(lines[1], "t.yaml:21:9: ") {
		t.Errorf("not sorted by position:\n%v", err)
	}
}

func TestTestdataSpecsParse(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) < 2 {
		t.Fatalf("testdata specs: %v", files)
	}
	for _, f := range files {
		mustParse(t, f)
	}
}
