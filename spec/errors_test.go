package spec

import (
	"errors"
	"strings"
	"testing"
)

// header is prepended to most error cases; it is 15 lines long, so what a
// case appends starts on line 16.
const header = `version: 1
package: p
app: {id: app}
records:
  Order:
    fields:
      id: {id: 1, type: string}
      user_id: {id: 2, type: string}
  User:
    fields:
      id: {id: 1, type: string}
topics:
  orders: {key: string, value: Order}
  users: {key: int64, value: User, read_as: table, store: users-store}
  out: {key: string, value: Order}
`

type errCase struct {
	name string
	src  string
	want string // the whole Error() text
}

var errCases = []errCase{
	{"missing version", "app: {id: a}\ntopology: []\n",
		"t.yaml:1:1: missing required key \"version\"\n\n\tstart the file with `version: 1`; see docs/spec-reference.md\n"},
	{"unsupported version", "version: 2\nwhatever: true\n",
		"t.yaml:1:10: version: unsupported version 2, want 1"},
	{"unknown top-level key", header + "topolgy: []\n",
		"t.yaml:1:1: missing required key \"topology\"\nt.yaml:16:1: unknown key \"topolgy\" (did you mean \"topology\"?)"},
	{"duplicate key", "version: 1\npackage: p\napp: {id: a, id: b}\ntopology: [{name: x, from: in, steps: [{to: in}]}]\ntopics: {in: {key: string, value: string}}\n",
		"t.yaml:3:14: app: duplicate key \"id\" (first at 3:7)"},
	{"yaml syntax", "version: 1\napp: {id: a\n",
		"t.yaml:1:1: invalid YAML: did not find expected ',' or '}'"},
	{"alias", "version: 1\npackage: p\napp: &a {id: a}\ntopics: {in: {key: string, value: string}}\ntopology: [{name: x, from: in, steps: [{to: in}]}]\nrecords: *a\n",
		"t.yaml:6:10: records: aliases are not supported"},
	{"unknown topic value type", header + "  bad: {key: string, value: Ordr}\n" + pipe,
		"t.yaml:16:29: topic \"bad\": value: unknown type \"Ordr\" (did you mean \"Order\"?)"},
	{"duplicate field id", strings.Replace(header, "user_id: {id: 2,", "user_id: {id: 1,", 1) + pipe,
		"t.yaml:8:21: record \"Order\": field \"user_id\": id 1 is already used by field \"id\""},
	{"field id out of range", strings.Replace(header, "user_id: {id: 2,", "user_id: {id: 0,", 1) + pipe,
		"t.yaml:8:21: record \"Order\": field \"user_id\": id: 0 is out of range, want 1..65535"},
	{"map with non-string keys", strings.Replace(header, "user_id: {id: 2, type: string}", "user_id: {id: 2, type: \"map<int64,string>\"}", 1) + pipe,
		"t.yaml:8:30: record \"Order\": field \"user_id\": invalid type \"map<int64,string>\": map keys must be string"},
	{"record contains itself", strings.Replace(header, "      id: {id: 1, type: string}\ntopics", "      id: {id: 1, type: string}\n      boss: {id: 2, type: User}\ntopics", 1) + pipe,
		"t.yaml:12:7: record \"User\": field \"boss\": record \"User\" contains itself (User.boss)\n\n\tuse optional<User> or list<User> to make the recursion finite\n"},
	{"enum duplicate number", strings.Replace(header, "records:\n", "enums: {Status: {values: {A: 0, B: 0}}}\nrecords:\n", 1) + pipe,
		"t.yaml:4:36: enum \"Status\": value \"B\": number 0 is already used by \"A\""},
	{"bad enum default", strings.Replace(header, "records:\n", "enums: {Status: {values: {A: 0, B: 1}}}\nrecords:\n  R: {fields: {s: {id: 1, type: Status, default: C}}}\n", 1) + pipe,
		"t.yaml:6:50: record \"R\": field \"s\": default: \"C\" is not a value of enum \"Status\", want A or B"},
	{"topic value must not be a list", header + "  lists: {key: string, value: \"list<Order>\"}\n" + pipe,
		"t.yaml:16:31: topic \"lists\": value type \"list<Order>\" must be a primitive, an enum or a record\n\n\twrap it in a record, e.g. a record with a field of type list<Order>\n"},
	{"table without store", header + "  t: {key: string, value: User, read_as: table}\n" + pipe,
		"t.yaml:16:42: topic \"t\": read_as table needs a store\n\n\tadd `store: <store name>`: it names the store (and its changelog) that materializes the table\n"},
	{"timestamp field of the wrong type", header + "  ts: {key: string, value: Order, timestamp: user_id}\n" + pipe,
		"t.yaml:16:46: topic \"ts\": timestamp: field \"user_id\" is string, want timestamp or int64"},
	{"dead letter without topic", strings.Replace(header, "app: {id: app}", "app: {id: app, on_error: {processing: dead_letter}}", 1) + pipe,
		"t.yaml:3:39: app: on_error: processing is dead_letter but dead_letter_topic is not set\n\n\tadd `dead_letter_topic: <topic>` under on_error, naming a declared topic\n"},
	{"dead letter timestamps without on_error", strings.Replace(header, "app: {id: app}", "app: {id: app, invalid_timestamp: dead_letter}", 1) + pipe,
		"t.yaml:3:35: app: invalid_timestamp is dead_letter but on_error.dead_letter_topic is not set\n\n\tadd `on_error: {dead_letter_topic: <topic>}` under app, naming a declared topic\n"},
	{"dead letter timestamps without topic", strings.Replace(header, "app: {id: app}", "app: {id: app, invalid_timestamp: dead_letter, on_error: {processing: continue}}", 1) + pipe,
		"t.yaml:3:35: app: invalid_timestamp is dead_letter but on_error.dead_letter_topic is not set\n\n\tadd `dead_letter_topic: <topic>` under on_error, naming a declared topic\n"},
	{"dead letter topic undeclared", strings.Replace(header, "app: {id: app}", "app: {id: app, on_error: {processing: dead_letter, dead_letter_topic: dlq}}", 1) + pipe,
		"t.yaml:3:71: app: on_error: dead_letter_topic: unknown topic \"dlq\"\n\n\tdeclare the dead-letter topic under topics (key: bytes, value: bytes)\n"},
	{"join key mismatch", header + "topology:\n  - name: x\n    from: orders\n    steps:\n      - join: {with: users, fn: J, value: Order}\n",
		"t.yaml:20:9: join \"x\": key type \"int64\" of \"users\" does not match \"string\" of \"orders\"\n\n\tre-key the stream with select_key (or map) to the table's key type; see docs/spec-reference.md#joins\n"},
	{"windowed_by on an ungrouped stream", header + steps("- windowed_by: {tumbling: {size: 1m}}", "- count: {store: c}"),
		"t.yaml:20:9: windowed_by \"x.windowed_by1\": windowed_by on an ungrouped stream \"orders\"\n\n\tadd group_by_key (or group_by) before windowed_by; see docs/spec-reference.md#steps\n"},
	{"count on a stream", header + steps("- count: {store: c}"),
		"t.yaml:20:9: count \"x\": input \"orders\" is a stream, want a grouped stream, a grouped table, a time-windowed stream or a session-windowed stream\n\n\tgroup the stream first with group_by_key or group_by; see docs/spec-reference.md#steps\n"},
	{"to_table without store", header + steps("- to_table: {}"),
		"t.yaml:20:9: to_table \"x\": missing required key \"store\"\n\n\tname the state store, e.g. `store: x-store`: the name also fixes its changelog topic; see docs/spec-reference.md#names-that-never-move\n"},
	{"merge of different types", header + "  names: {key: string, value: string}\n" + steps("- merge: {with: [names]}", "- to: out"),
		"t.yaml:21:24: merge \"x.merge1\": value type \"string\" of \"names\" does not match \"Order\" of \"orders\"\n\n\tmerge needs streams of one key and value type; convert one side with map_values first\n"},
	{"aggregate without value and init", header + steps("- group_by_key:", "- aggregate: {fn: Add, store: s}"),
		"t.yaml:21:9: aggregate \"x\": missing required key \"init\" (the initializer)\nt.yaml:21:9: aggregate \"x\": missing required key \"value\" (the output value type)\n\n\tstreamgen does not infer types from Go code: declare them, e.g.\n\t- aggregate: {init: NewStats, fn: AddOrder, value: Stats, store: stats}\n"},
	{"table reduce without subtractor", header + "topology:\n  - name: x\n    from: users\n    steps:\n      - group_by: {fn: G, key: string, value: User, name: regroup}\n      - reduce: {fn: R, store: s}\n",
		"t.yaml:21:9: reduce \"x\": reduce on a grouped table needs adder and subtractor (and no fn or expr)\n\n\tthe subtractor removes a record's old value when the table row changes; see docs/spec-reference.md#steps\n"},
	{"session aggregate without merger", header + steps("- group_by_key:", "- windowed_by: {session: {gap: 5m}}", "- aggregate: {init: I, fn: A, value: int64, store: s}"),
		"t.yaml:22:9: aggregate \"x\": session-windowed aggregate needs a merger\n\n\tadd `merger: <func(key K, a A, b A) A>`: it combines two sessions that a record bridges\n"},
	{"step after a terminal step", header + steps("- to: out", "- filter: {fn: F}", "- peek: {fn: P}"),
		"t.yaml:21:9: pipeline \"x\": step 2 (filter) comes after \"to\", which ends the pipeline"},
	{"dangling from", header + "topology:\n  - name: x\n    from: ordres\n    steps:\n      - filter: {fn: F}\n      - to: out\n",
		"t.yaml:18:11: pipeline \"x\": from: unknown topic or pipeline \"ordres\" (did you mean \"orders\"?)"},
	{"from a later pipeline", header + "topology:\n  - name: x\n    from: y\n    steps: [{to: out}]\n  - name: y\n    from: orders\n    steps: [{filter: {fn: F}}]\n",
		"t.yaml:18:11: pipeline \"x\": from: pipeline \"y\" is defined later; a pipeline may only read earlier pipelines\n\n\tmove pipeline \"y\" above this one\n"},
	{"dangling with", header + steps("- join: {with: nowhere, fn: J, value: Order}"),
		"t.yaml:20:22: join \"x\": with: unknown topic or pipeline \"nowhere\""},
	{"duplicate pipeline and store names", header + "topology:\n  - name: x\n    from: orders\n    steps: [{to_table: {store: users-store}}]\n  - name: x\n    from: orders\n    steps: [{to: out}]\n",
		"t.yaml:19:32: duplicate store name \"users-store\" (first at 14:59)\n\n\tevery store needs its own name: it is also the name of its changelog topic\n\nt.yaml:20:11: duplicate pipeline name \"x\" (first at 17:11)"},
	{"invalid name characters", header + "topology:\n  - name: \"my pipeline\"\n    from: orders\n    steps: [{to: out}]\n",
		"t.yaml:17:11: pipeline name \"my pipeline\" has invalid characters, want letters, digits, '.', '_' or '-'"},
	{"emit on_close without window", header + steps("- group_by_key:", "- count: {store: c, emit: on_close}"),
		"t.yaml:21:33: count \"x\": emit \"on_close\" needs a windowed aggregation\n\n\tadd a windowed_by step before count, or remove emit\n"},
	{"windowed cogroup emitting on close", header + "topology:\n  - name: g\n    from: orders\n    steps: [{group_by_key: {}}]\n  - name: x\n    from: g\n    steps:\n      - cogroup: {fn: A, with: [{from: g, fn: B}], init: I, value: int64, store: s, window: {tumbling: {size: 1m}}, emit: on_close}\n",
		"t.yaml:23:123: cogroup \"x\": emit \"on_close\" is not available for a windowed cogroup, which emits every update as in Kafka Streams\n\n\tfor final results, remove emit and add `- suppress: {until: window_closes, name: <name>}` after the cogroup\n"},
	{"suppress until window_closes without window", header + steps("- group_by_key:", "- count: {store: c}", "- suppress: {until: window_closes, name: final}"),
		"t.yaml:22:27: suppress \"x\": until window_closes needs a windowed aggregation upstream, but \"x.count2\" is not windowed\n\n\tsuppress until window_closes only applies to the result of count, reduce or aggregate after windowed_by;\n\tuse until: time_limit for other tables\n"},
	{"invalid expr", header + steps("- filter: {expr: \"value != nil; true\"}", "- to: out"),
		"t.yaml:20:24: filter \"x.filter1\": expr: invalid Go expression \"value != nil; true\": 1:13: expected 'EOF', found ';'\n\n\texpr takes a single expression; put statements in a function and use fn\n"},
	{"map expr with one expression", header + steps("- map: {expr: \"key\", key: string, value: Order}", "- to: out"),
		"t.yaml:20:21: map \"x.map1\": expr: want the new key and the new value as two Go expressions, \"<key>, <value>\"; have \"key\"\n\n\te.g. expr: \"value.UserID, value\"\n"},
	{"map expr with three expressions", header + steps("- map: {expr: \"key, value, 1\", key: string, value: Order}", "- to: out"),
		"t.yaml:20:21: map \"x.map1\": expr: want the new key and the new value as two Go expressions, \"<key>, <value>\"; have \"key, value, 1\"\n\n\te.g. expr: \"value.UserID, value\"\n"},
	{"map expr closing the pair early", header + steps("- map: {expr: \"key, value)(1\", key: string, value: Order}", "- to: out"),
		"t.yaml:20:21: map \"x.map1\": expr: want the new key and the new value as two Go expressions, \"<key>, <value>\"; have \"key, value)(1\"\n\n\te.g. expr: \"value.UserID, value\"\n"},
	{"fn is a keyword", header + steps("- filter: {fn: func}", "- to: out"),
		"t.yaml:20:22: filter \"x.filter1\": fn: \"func\" is a Go keyword, not a function name"},
	{"map without output types", header + steps("- map: {fn: M}", "- to: out"),
		"t.yaml:20:9: map \"x.map1\": missing required key \"key\" (the output key type)\n\n\tstreamgen does not infer types from Go code: declare them, e.g.\n\t- map: {fn: ToUser, key: string, value: User}\n\nt.yaml:20:9: map \"x.map1\": missing required key \"value\" (the output value type)"},
	{"group_by_key after a key change needs a name", header + steps("- select_key: {expr: \"value.UserID\", key: string}", "- group_by_key:", "- count: {store: c}"),
		"t.yaml:21:9: group_by_key \"x.group_by_key2\": missing name: the key changed upstream (select_key \"x.select_key1\"), so records must be repartitioned and the repartition topic needs a name\n\n\tadd `name: <repartition name>` to the step, next to \"group_by_key\":. streamgen requires explicit names for\n\tinternal topics, as Kafka Streams does with ensure.explicit.internal.resource.naming=true (KIP-1111),\n\tso they never move when the topology changes; see docs/spec-reference.md#names-that-never-move\n"},
	{"group_by without name", header + steps("- group_by: {fn: G, key: string}", "- count: {store: c}"),
		"t.yaml:20:9: group_by \"x.group_by1\": missing name: group_by always repartitions, and the repartition topic needs a name\n\n\tadd `name: <name>` to the step, next to \"group_by\":. streamgen requires explicit names for\n\tinternal topics and stores, as Kafka Streams does with ensure.explicit.internal.resource.naming=true (KIP-1111),\n\tso they never move when the topology changes; see docs/spec-reference.md#names-that-never-move\n"},
	{"stream-stream join without window", header + steps("- join: {with: orders, fn: J, value: Order, name: self}"),
		"t.yaml:20:9: join \"x\": stream-stream join needs a window\n\n\tadd `window: {time_difference: 5m}` (or before/after, and grace): records join when their timestamps are that close\n"},
	{"retention below the minimum", header + steps("- group_by_key:", "- windowed_by: {hopping: {size: 10m, advance: 1m, grace: 1m}, retention: 5m}", "- count: {store: c}"),
		"t.yaml:21:80: windowed_by \"x.windowed_by2\": retention 5m is smaller than size plus grace (11m)\n\n\tomit retention to use the minimum, or raise it to at least 11m\n"},
	{"unknown operation", header + steps("- fliter: {fn: F}", "- to: out"),
		"t.yaml:20:9: pipeline \"x\": step 1: unknown key \"fliter\" (did you mean \"filter\"?)"},
	{"two operations in one step", header + steps("- {filter: {fn: F}, peek: {fn: P}}", "- to: out"),
		"t.yaml:20:27: pipeline \"x\": step 1: has both \"filter\" and \"peek\", want exactly one operation per step"},
	{"name inside a filter", header + steps("- filter: {fn: F, name: keep}", "- to: out"),
		"t.yaml:20:25: filter \"x.filter1\": unknown key \"name\"\n\n\tname belongs to the step, next to \"filter\":, not inside it:\n\t- filter: {...}\n\t  name: <name>\n"},
	{"to a topic of another type", header + steps("- to: users"),
		"t.yaml:20:13: to \"x\": key type \"string\" of \"orders\" does not match \"int64\" of topic \"users\"\nt.yaml:20:13: to \"x\": value type \"Order\" of \"orders\" does not match \"User\" of topic \"users\""},
	{"windowed count to a plain topic", header + "  counts: {key: string, value: int64}\n" + steps("- group_by_key:", "- windowed_by: {tumbling: {size: 1m}}", "- count: {store: c}", "- to_stream:", "- to: counts") + "",
		"t.yaml:25:13: to \"x\": key type \"windowed<string>\" of \"x.to_stream4\" does not match \"string\" of topic \"counts\"\n\n\trecords of a windowed aggregation have windowed keys: declare the topic's key as \"windowed<string>\",\n\tor replace the key first with map or select_key\n"},
	{"no cascade from an unknown type", strings.Replace(header, "orders: {key: string, value: Order}", "orders: {key: string, value: Ordr}", 1) + steps("- filter: {fn: F}", "- group_by_key:", "- count: {store: c}", "- to_stream:", "- to: out"),
		"t.yaml:13:32: topic \"orders\": value: unknown type \"Ordr\" (did you mean \"Order\"?)"},
	{"outer stream-table join", header + "topology:\n  - name: x\n    from: orders\n    steps:\n      - select_key: {fn: K, key: int64}\n      - join: {with: users, kind: outer, fn: J, value: Order, name: j}\n",
		"t.yaml:21:35: join \"x\": kind \"outer\" is not supported for stream-table joins, want inner or left"},
	{"negative standby replicas", strings.Replace(header, "app: {id: app}", "app: {id: app, standby_replicas: -1}", 1) + pipe,
		"t.yaml:3:34: app: standby_replicas: -1 is out of range, want 0..16"},
	{"stream-stream join store names colliding", header + "  o2: {key: string, value: Order}\n" + steps(
		"- join: {with: o2, fn: J, value: Order, name: a, window: {time_difference: 1m}, store: s}",
		"- join: {with: o2, fn: J, value: Order, name: b, kind: left, window: {time_difference: 1m}, store: s}"),
		"t.yaml:22:106: duplicate store name \"s-this-join-store\" (first at 21:94)\n\n\tevery store needs its own name: it is also the name of its changelog topic\n"},
	{"stream-stream join store name invalid", header + "  o2: {key: string, value: Order}\n" + steps(
		"- join: {with: o2, fn: J, value: Order, name: a, window: {time_difference: 1m}, store: \"s s\"}"),
		"t.yaml:21:94: store name \"s s\" has invalid characters, want letters, digits, '.', '_' or '-'"},
	{"suppress of a versioned table", header + versionedTopic + "topology:\n  - name: x\n    from: v\n    steps:\n      - suppress: {until: time_limit, time_limit: 1s, name: s}\n",
		"t.yaml:21:9: suppress \"x\": suppress is only for tables that are not versioned, and \"v\" is versioned\n\n\t" + versionedSuppressHint},
	{"suppress of a table inheriting versioned semantics", header + versionedTopic + "topology:\n  - name: x\n    from: v\n    steps:\n      - filter: {fn: F}\n      - map_values: {fn: M, value: string}\n      - suppress: {until: time_limit, time_limit: 1s, name: s}\n",
		"t.yaml:23:9: suppress \"x\": suppress is only for tables that are not versioned, and \"x.map_values2\" is versioned: it inherits versioned semantics from \"v\" through filter and map_values\n\n\t" + versionedSuppressHint},
	{"store on a stream-table join", header + "topology:\n  - name: x\n    from: orders\n    steps:\n      - select_key: {fn: K, key: int64}\n      - join: {with: users, fn: J, value: Order, name: j, store: s}\n",
		"t.yaml:21:59: join \"x\": store is only for table-table and foreign-key joins (the store of their result) and stream-stream joins (the name of their stores), not for stream-table joins\n\n\tadd `to_table: {store: …}` after the join to materialize its output\n"},
	{"grace on a table that is not versioned", header + "topology:\n  - name: x\n    from: orders\n    steps:\n      - select_key: {fn: K, key: int64}\n      - join: {with: users, fn: J, value: Order, name: j, grace: 1s}\n",
		"t.yaml:21:59: join \"x\": grace: the table \"users\" is not versioned; a stream-table join grace period needs a versioned table\n\n\tread the table's topic with `versioned: {history_retention: <at least the grace>}`\n"},
	{"versioned on a stream topic", header + "  t: {key: string, value: User, versioned: {history_retention: 1h}}\n" + pipe,
		"t.yaml:16:33: topic \"t\": versioned is only for topics read_as table"},
	{"tombstones on a table topic", header + "  t: {key: string, value: int64, read_as: table, store: t-store, tombstones: true}\n" + pipe,
		"t.yaml:16:66: topic \"t\": tombstones is only for topics read as a stream; a table reads a tombstone as a delete"},
	{"tombstones not a bool", header + "  t: {key: string, value: int64, tombstones: yes please}\n" + pipe,
		"t.yaml:16:46: topic \"t\": tombstones: want true or false, got \"yes please\""},
	{"versioned without history_retention", header + "  t: {key: string, value: User, read_as: table, store: t-store, versioned: {}}\n" + pipe,
		"t.yaml:16:76: topic \"t\": versioned needs history_retention"},
}

// versionedTopic appends a versioned table topic "v" to header's topics.
const versionedTopic = "  v: {key: string, value: User, read_as: table, store: v-store, versioned: {history_retention: 1h}}\n"

const versionedSuppressHint = "Kafka Streams refuses this topology too; to suppress, copy the rows into a plain table first\n\t(`to_stream: {}`, then `to_table: {store: <name>}`), or read the topic without `versioned`\n"

// pipe is a valid topology for cases whose problem is elsewhere.
const pipe = "topology: [{name: x, from: orders, steps: [{to: out}]}]\n"

// steps makes a one-pipeline topology "x" from orders with the given steps.
func steps(ss ...string) string {
	return "topology:\n  - name: x\n    from: orders\n    steps:\n      " + strings.Join(ss, "\n      ") + "\n"
}

func TestErrors(t *testing.T) {
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("no error for:\n%s", c.src)
			}
			var ds Diagnostics
			if !errors.As(err, &ds) {
				t.Fatalf("error is %T, want Diagnostics", err)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}
