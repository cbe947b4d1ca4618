package spec

import (
	"fmt"
	"time"
)

// This file is the resolved intermediate representation (IR) that Parse
// returns and that gen consumes. It is the contract between the frontend and
// the generator: every name is resolved to a pointer, every type is known,
// and every node carries the position of the spec text it came from.
//
// The IR is immutable once returned: gen must not modify it.

// Pos is a position in a spec file. Line and Col are 1-based.
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats the position as file:line:col, the form every diagnostic
// starts with.
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Program is a whole resolved spec file.
type Program struct {
	Pos     Pos
	File    string // path of the spec as given on the command line (relative)
	Version int    // always 1 for now
	// Package is the Go package name of the generated code.
	Package string
	// Imports are Go import paths made available to inline expressions.
	Imports []string
	App     *App
	Enums   []*Enum   // sorted by name
	Records []*Record // sorted by name
	Topics  []*Topic  // sorted by name
	Stores  []*Store  // every state store, declared or implied, sorted by name
	// Nodes is the topology graph in topological order (inputs always come
	// before the nodes that read them). Sources are nodes of op OpSource.
	Nodes []*Node
	// InternalTopics are the repartition and other internal topics the
	// topology needs, sorted by name (without the application-id prefix).
	InternalTopics []*InternalTopic
}

// Guarantee is a processing guarantee.
type Guarantee string

const (
	AtLeastOnce   Guarantee = "at_least_once"
	ExactlyOnceV2 Guarantee = "exactly_once_v2"
)

// ErrorPolicy tells the runtime what to do with a record that fails.
type ErrorPolicy string

const (
	PolicyFail       ErrorPolicy = "fail"
	PolicyContinue   ErrorPolicy = "continue"
	PolicyDeadLetter ErrorPolicy = "dead_letter"
)

// TimestampPolicy tells the runtime what to do with a negative (invalid)
// extracted timestamp.
type TimestampPolicy string

const (
	TimestampFail          TimestampPolicy = "fail"
	TimestampSkip          TimestampPolicy = "skip"
	TimestampPartitionTime TimestampPolicy = "partition_time"
	// TimestampDeadLetter writes the record to on_error.dead_letter_topic.
	TimestampDeadLetter TimestampPolicy = "dead_letter"
)

// App holds application settings.
type App struct {
	Pos                    Pos
	ID                     string
	Guarantee              Guarantee     // default at_least_once
	CommitInterval         time.Duration // 0 = runtime default for the guarantee
	StandbyReplicas        int           // standby replicas per task; 0 = none
	OnDeserializationError ErrorPolicy   // default fail
	OnProcessingError      ErrorPolicy   // default fail
	DeadLetterTopic        string        // required if any policy (invalid_timestamp included) is dead_letter
	InvalidTimestamp       TimestampPolicy
	// OnStart are user functions run once when `run` starts, after the
	// topics are checked and before any record is processed (Faust's
	// @app.task): func(ctx context.Context) error, role RoleOnStart.
	OnStart []*Func
}

// TypeKind is the kind of a spec type.
type TypeKind int

const (
	KindInvalid TypeKind = iota
	KindString
	KindBytes
	KindBool
	KindInt32
	KindInt64
	KindUint32
	KindUint64
	KindFloat32
	KindFloat64
	KindTimestamp // milliseconds since the epoch on the wire, time.Time in Go
	KindDuration  // milliseconds on the wire, time.Duration in Go
	KindOptional  // Elem is set
	KindList      // Elem is set
	KindMap       // string keys; Elem is the value type
	KindRecord    // Record is set
	KindEnum      // Enum is set
	// KindWindowed is a time-windowed key (tumbling, hopping, sliding):
	// Elem is the base key. On the wire: key bytes then the 8-byte window
	// start, as Kafka Streams' TimeWindowedSerializer. Spelled
	// "windowed<K>" in a topic's key.
	KindWindowed
	// KindSessionWindowed is a session-windowed key: Elem is the base key.
	// On the wire: key bytes, 8-byte end, 8-byte start (SessionKeySchema).
	// Spelled "session_windowed<K>".
	KindSessionWindowed
)

var kindNames = [...]string{"invalid", "string", "bytes", "bool", "int32", "int64", "uint32", "uint64",
	"float32", "float64", "timestamp", "duration", "optional", "list", "map", "record", "enum",
	"windowed", "session_windowed"}

func (k TypeKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("TypeKind(%d)", int(k))
}

// Type is a resolved spec type.
type Type struct {
	Kind   TypeKind
	Elem   *Type
	Record *Record
	Enum   *Enum
}

// Primitive reports whether the type is one of the scalar kinds (string
// through duration), which have Kafka-compatible serdes of their own.
func (t *Type) Primitive() bool { return t.Kind >= KindString && t.Kind <= KindDuration }

// String spells the type the way the spec does: "optional<list<Order>>".
func (t *Type) String() string {
	switch t.Kind {
	case KindOptional, KindList, KindWindowed, KindSessionWindowed:
		return t.Kind.String() + "<" + t.Elem.String() + ">"
	case KindMap:
		return "map<string," + t.Elem.String() + ">"
	case KindRecord:
		return t.Record.Name
	case KindEnum:
		return t.Enum.Name
	}
	return t.Kind.String()
}

// Equal reports whether two types are the same spec type.
func (t *Type) Equal(u *Type) bool {
	if t == nil || u == nil {
		return t == u
	}
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case KindOptional, KindList, KindMap, KindWindowed, KindSessionWindowed:
		return t.Elem.Equal(u.Elem)
	case KindRecord:
		return t.Record == u.Record
	case KindEnum:
		return t.Enum == u.Enum
	}
	return true
}

// Record is a record schema.
type Record struct {
	Pos        Pos
	Name       string // as written in the spec (a valid identifier)
	Doc        string
	Deprecated bool
	// SchemaName is the full name of the record in registry formats: the
	// Avro record's name with its namespace and the Protobuf message's
	// package-qualified name ("io.example.Order"), and the subject under
	// RecordNameStrategy. The spec's schema_name, else Name.
	SchemaName    string
	SchemaNamePos Pos
	Fields        []*Field // sorted by ID
}

// Field is one field of a record. IDs are stable across schema versions:
// the wire format is keyed by ID, so renaming a field is safe and reusing
// an ID for another type is not.
type Field struct {
	Pos        Pos
	Name       string // as written in the spec; gen makes a Go name of it
	ID         int    // 1..65535, unique within the record
	Type       *Type
	Doc        string
	Deprecated bool
	// Default is the value a reader uses when the field is missing on the
	// wire, as a literal of the field's type (string, bool, int64, uint64,
	// float64, or an enum value name); nil means the zero value. Timestamp
	// and duration defaults are int64 milliseconds.
	Default any
	// JSONName is the member name of the field in the json format: the
	// spec's json_name, else Name as written.
	JSONName string
	// JSONNamePos is the position of json_name (the field's when unset).
	JSONNamePos Pos
}

// Enum is an enumeration with stable numbers.
type Enum struct {
	Pos    Pos
	Name   string
	Doc    string
	Values []*EnumValue // sorted by Number
}

// EnumValue is one value of an enum.
type EnumValue struct {
	Pos    Pos
	Name   string
	Number int32
	Doc    string
}

// TopicKind is how a topic is read when a pipeline starts from it.
type TopicKind string

const (
	TopicStream      TopicKind = "stream"
	TopicTable       TopicKind = "table"
	TopicGlobalTable TopicKind = "global_table"
)

// Topic is a declared external topic.
type Topic struct {
	Pos        Pos
	Name       string
	Key        *Type
	Value      *Type
	Partitions int // 0 = unknown / whatever exists
	Kind       TopicKind
	// Store is the store that materializes a table or global table read
	// from this topic (nil for streams).
	Store *Store
	// TimestampField is the value field that holds event time; nil means
	// the Kafka record timestamp. It is of kind timestamp or int64 (ms).
	TimestampField *Field
	// Tombstones declares that the topic's values can be null where it is
	// read as a stream (`tombstones: true`): user functions downstream then
	// take primitive and enum values as pointers, nil being the tombstone.
	// Without it the generator takes a stream topic's values as present.
	Tombstones bool
	Doc        string
	// KeyFormat and ValueFormat are the wire formats of the key and the
	// value (key_format, value_format): FormatDefault unless the spec names
	// one. See formats.go.
	KeyFormat, ValueFormat Format
	// JSONTimestamps is how json encoders write timestamps on this topic
	// (json_timestamps); decoders accept both forms.
	JSONTimestamps JSONTimestamps
	// SubjectStrategy names the registry subjects of the topic's sides in
	// a registry format (subject_strategy; default SubjectTopic), set at
	// SubjectStrategyPos.
	SubjectStrategy    SubjectStrategy
	SubjectStrategyPos Pos
	// FormatPos is where the topic's formats are declared: value_format's
	// position, else key_format's, else the topic's.
	FormatPos Pos
}

// StoreKind is the shape of a state store.
type StoreKind string

const (
	StoreKeyValue StoreKind = "key_value"
	StoreWindow   StoreKind = "window"
	StoreSession  StoreKind = "session"
)

// Store is a named state store. Every store the topology uses has an explicit
// name from the spec, so its changelog topic
// (<application id>-<name>-changelog) never changes when the topology is
// edited elsewhere.
type Store struct {
	Pos       Pos
	Name      string
	Kind      StoreKind
	Key       *Type
	Value     *Type
	InMemory  bool          // default false: Pebble
	Logged    bool          // changelog on (default true)
	Cached    bool          // record cache on (default true)
	Retention time.Duration // window and session stores
	// Custom is the user's constructor for a user-written store (nil for
	// built-in stores): func() <runtime store interface>.
	Custom *Func
	// RetainDuplicates is set for stream-stream join window stores.
	RetainDuplicates bool
	// WindowSize is set for window stores (time windows and join windows).
	WindowSize time.Duration
	// Versioned is set on the store of a topic read as a versioned table
	// (KIP-889): a key-value store that keeps every version for
	// HistoryRetention.
	Versioned        bool
	HistoryRetention time.Duration
}

// InternalTopic is a topic the runtime creates: a repartition topic, or a
// foreign-key join's subscription/response topics.
type InternalTopic struct {
	Pos        Pos
	Name       string // without the application id; the runtime adds "<app id>-" and the suffix
	Partitions int    // 0 = same as the source topics of the sub-topology
	Node       *Node  // the node that writes it
	// Kind says what the topic is for, which fixes the suffix the runtime
	// appends: "-repartition" for repartition topics, "-topic" for the
	// foreign-key join's subscription topics (whose Name already ends in
	// "-subscription-registration" or "-subscription-response").
	Kind InternalTopicKind
}

// InternalTopicKind is the purpose of an internal topic.
type InternalTopicKind string

const (
	InternalRepartition              InternalTopicKind = "repartition"
	InternalSubscriptionRegistration InternalTopicKind = "subscription_registration"
	InternalSubscriptionResponse     InternalTopicKind = "subscription_response"
)

// Shape is what a node produces, in Kafka Streams' terms.
type Shape int

const (
	ShapeNone                  Shape = iota // terminal: to, foreach
	ShapeStream                             // KStream<K,V>
	ShapeTable                              // KTable<K,V>
	ShapeGlobalTable                        // GlobalKTable<K,V>
	ShapeGroupedStream                      // KGroupedStream<K,V>
	ShapeGroupedTable                       // KGroupedTable<K,V>
	ShapeTimeWindowedStream                 // TimeWindowedKStream (tumbling, hopping, sliding)
	ShapeSessionWindowedStream              // SessionWindowedKStream
	ShapeCogrouped                          // CogroupedKStream
	ShapeBranched                           // the result of split: only its branches are read
)

// Op is a node's operation.
type Op string

const (
	OpSource        Op = "source"          // Topic is set; shape stream, table or global table
	OpFilter        Op = "filter"          // Fn predicate; stream or table
	OpFilterNot     Op = "filter_not"      // Fn predicate; stream or table
	OpMap           Op = "map"             // Fn (k,v)->(k2,v2)
	OpMapValues     Op = "map_values"      // Fn (k,v)->v2; stream or table
	OpFlatMap       Op = "flat_map"        // Fn (k,v)->[]KeyValue[k2,v2]
	OpFlatMapValues Op = "flat_map_values" // Fn (k,v)->[]v2
	OpSelectKey     Op = "select_key"      // Fn (k,v)->k2
	OpPeek          Op = "peek"            // Fn (k,v)
	OpForeach       Op = "foreach"         // Fn (k,v); terminal
	OpSplit         Op = "split"           // Branches; shape Branched
	OpBranch        Op = "branch"          // one branch of a split; Inputs[0] is the split node
	OpMerge         Op = "merge"           // Inputs are 2+ streams
	OpRepartition   Op = "repartition"     // Repartition is set
	OpTo            Op = "to"              // Sink is set; terminal
	OpToTable       Op = "to_table"        // Store is set
	OpToStream      Op = "to_stream"       // table (or windowed table) to stream
	OpGroupByKey    Op = "group_by_key"    // stream -> grouped stream
	OpGroupBy       Op = "group_by"        // Fn (k,v)->k2 on a stream, or (k,v)->(k2,v2) on a table; Repartition set
	OpWindowedBy    Op = "windowed_by"     // Window is set
	OpCount         Op = "count"           // Store is set
	OpReduce        Op = "reduce"          // Fn reducer (stream) or Adder/Subtractor (table); Store set
	OpAggregate     Op = "aggregate"       // Init, Fn aggregator (or Adder/Subtractor); Merger for sessions; Store set
	OpCogroup       Op = "cogroup"         // Cogroup is set: several grouped streams with their aggregators
	OpSuppress      Op = "suppress"        // Suppress is set
	OpJoin          Op = "join"            // Join is set; Inputs[0] this side, Inputs[1] the other
	OpProcess       Op = "process"         // Fn processor constructor; Stores lists its stores
	OpProcessValues Op = "process_values"  // like process, key fixed
)

// FuncRole names what a user function does, which fixes its Go signature.
type FuncRole string

const (
	RolePredicate     FuncRole = "predicate"         // func(key K, value V) bool
	RoleKeyValueMap   FuncRole = "key_value_mapper"  // func(key K, value V) (K2, V2)
	RoleValueMap      FuncRole = "value_mapper"      // func(key K, value V) V2
	RoleFlatMap       FuncRole = "flat_mapper"       // func(key K, value V) []KeyValue[K2,V2]
	RoleFlatMapValues FuncRole = "flat_value_mapper" // func(key K, value V) []V2
	RoleKeySelect     FuncRole = "key_selector"      // func(key K, value V) K2
	RoleAction        FuncRole = "action"            // func(key K, value V)
	RoleInit          FuncRole = "initializer"       // func() A
	RoleAggregate     FuncRole = "aggregator"        // func(key K, value V, agg A) A
	RoleReduce        FuncRole = "reducer"           // func(agg V, value V) V
	RoleMerge         FuncRole = "merger"            // func(key K, a A, b A) A  (session windows)
	RoleJoin          FuncRole = "joiner"            // func(key K, left V1, right V2) VR
	RoleTopic         FuncRole = "topic_chooser"     // func(key K, value V) string
	RoleForeignKey    FuncRole = "foreign_key"       // func(value V) K2
	RoleProcessor     FuncRole = "processor"         // func() <processor interface of the runtime>
	RoleStore         FuncRole = "store"
	RoleOnStart       FuncRole = "on_start" // func() <store interface of the runtime>
)

// Func is user logic: either the name of a Go function in the user's package
// or an inline Go expression. Inline expressions see the parameters named in
// the role's signature (key, value, agg, left, right, a, b) and the spec's
// imports; they are checked to be a single Go expression.
type Func struct {
	Pos  Pos
	Role FuncRole
	Name string // Go identifier, or ""
	Expr string // Go expression, or ""
}

// Node is one operation of the topology graph.
type Node struct {
	Pos Pos
	// Name is unique in the program: "<pipeline>" for the last step of a
	// pipeline, otherwise "<pipeline>.<step name or op><n>". Stores and
	// internal topics never take their names from here.
	Name   string
	Op     Op
	Inputs []*Node
	Shape  Shape
	// Key and Value are the output types (for grouped, windowed and
	// cogrouped shapes: the key and value types of the records inside).
	Key   *Type
	Value *Type
	// Doc is the step's doc string, if any.
	Doc string

	Fn         *Func // the main user function of the op (see Op docs)
	Init       *Func // aggregate, cogroup
	Merger     *Func // session-windowed aggregate
	Adder      *Func // table reduce/aggregate
	Subtractor *Func // table reduce/aggregate
	// Agg is the aggregate value type (aggregate and cogroup).
	Agg *Type

	Topic       *Topic       // source
	Sink        *Sink        // to
	Store       *Store       // the store of a stateful op, table source or to_table
	Stores      []*Store     // process/process_values: stores the processor may use
	Window      *Window      // windowed_by (and propagated onto the aggregation nodes)
	Join        *Join        // join
	Suppress    *Suppress    // suppress
	Repartition *Repartition // repartition, group_by, and group_by_key after a key change
	Branches    []*Node      // split: its branch nodes, in order (first match wins)
	Default     bool         // branch: this is the default branch (Fn is nil)
	Cogroup     []*CogroupInput
	// Emit is the emit strategy of a windowed aggregation.
	Emit EmitStrategy
	// WindowedKey is set when the records' key is a windowed key
	// (Windowed[Key]): on windowed aggregations and on the nodes downstream
	// of them until the key is replaced (Window is then set as well), and
	// on a step that declares a windowed key and the nodes after it
	// (KeyWindow is then set).
	WindowedKey bool
	// NotNull is set on a filter written `filter: {not_null: true}`: it
	// drops the records whose value is null (Kafka Streams'
	// `filter((k, v) -> v != null)`), on every value type, and has no Fn.
	NotNull bool
	// KeyWindow is the window a windowed key declared by a re-keying step
	// (map, flat_map, select_key, group_by, process) decodes with: for
	// windowed<K> the input's window or the step's window_size, for
	// session_windowed<K> a session window (the key carries its end). Nil
	// on windowed aggregations, whose key window is Window.
	KeyWindow *Window
}

// Sink is where a `to` step writes.
type Sink struct {
	Topic *Topic // fixed topic, or nil when Chooser is set
	// Chooser picks the topic per record (Kafka Streams' TopicNameExtractor).
	// Every topic it may return must be declared; the runtime checks at
	// produce time that the name is one of them.
	Chooser *Func
}

// WindowKind is the kind of a window.
type WindowKind string

const (
	WindowTumbling WindowKind = "tumbling"
	WindowHopping  WindowKind = "hopping"
	WindowSliding  WindowKind = "sliding"
	WindowSession  WindowKind = "session"
)

// Window configures windowed aggregation.
type Window struct {
	Pos       Pos
	Kind      WindowKind
	Size      time.Duration // tumbling, hopping
	Advance   time.Duration // hopping (tumbling: = Size)
	TimeDiff  time.Duration // sliding
	Gap       time.Duration // session
	Grace     time.Duration // default 0 (KIP-633)
	Retention time.Duration // 0 = default (size+grace, gap+grace, timeDiff*2+grace... as Kafka Streams)
}

// EmitStrategy of a windowed aggregation (KIP-825).
type EmitStrategy string

const (
	EmitOnUpdate EmitStrategy = "on_update" // default
	EmitOnClose  EmitStrategy = "on_close"
)

// JoinKind is inner, left or outer.
type JoinKind string

const (
	JoinInner JoinKind = "inner"
	JoinLeft  JoinKind = "left"
	JoinOuter JoinKind = "outer"
)

// JoinShape says which two kinds of input are joined.
type JoinShape string

const (
	JoinStreamStream JoinShape = "stream_stream"
	JoinStreamTable  JoinShape = "stream_table"
	JoinStreamGlobal JoinShape = "stream_global_table"
	JoinTableTable   JoinShape = "table_table"
	JoinForeignKey   JoinShape = "foreign_key" // table-table on a value-derived key
)

// Join configures a join node. Inputs[0] is the left side, Inputs[1] the right.
type Join struct {
	Pos   Pos
	Kind  JoinKind
	Shape JoinShape
	// Name is the step's own name (its name: key), "" when it has none:
	// Kafka Streams names a named join's processors after it (Joined.as,
	// Named.as), where the node's Name is qualified by its pipeline.
	Name string
	// NamePos is where Name is written, when it is set.
	NamePos Pos
	// Stream-stream window: left.ts - Before <= right.ts <= left.ts + After.
	Before time.Duration
	After  time.Duration
	Grace  time.Duration
	// TableGrace is a stream-table join's grace period (KIP-923), set when
	// HasTableGrace: stream records wait that long for the versioned
	// table's updates before they join.
	TableGrace    time.Duration
	HasTableGrace bool
	// KeyMapper maps a stream record to the global table's key
	// (stream-global joins): RoleKeySelect with the stream's key and value.
	KeyMapper *Func
	// ForeignKey extracts the right table's key from a left value (FK joins).
	ForeignKey *Func
	// Stores used by the join: stream-stream joins have ThisStore, OtherStore
	// and (left/outer) OuterStore; FK joins have SubscriptionStore.
	// OuterStore is keyed by the join key and holds the left value type;
	// the runtime wraps both (timestamped key with side, left-or-right
	// value). SubscriptionStore is keyed by the right (foreign) key type and
	// holds the left key type; the runtime combines them.
	ThisStore, OtherStore, OuterStore, SubscriptionStore *Store
	// StoreName is a stream-stream join's `store:`, the base its stores are
	// named after as Kafka Streams names them for
	// StreamJoined.withStoreName, or "" for
	// streamgen's own names.
	StoreName string
	// ThisRepartition and OtherRepartition are set when that side's key
	// changed upstream and must be repartitioned before the join:
	// "<name>-left"/"<name>-right" for stream-stream joins, "<name>" for the
	// stream of a stream-table join.
	ThisRepartition, OtherRepartition *Repartition
}

// SuppressKind is the suppression mode.
type SuppressKind string

const (
	SuppressUntilWindowCloses SuppressKind = "until_window_closes"
	SuppressUntilTimeLimit    SuppressKind = "until_time_limit"
)

// Suppress configures a suppress node.
type Suppress struct {
	Pos        Pos
	Kind       SuppressKind
	TimeLimit  time.Duration
	MaxRecords int    // 0 = unbounded
	MaxBytes   int64  // 0 = unbounded
	WhenFull   string // "shutdown" (default) or "emit_early" (time limit only)
	Name       string // buffer name (explicit, for its changelog)
}

// Repartition configures a repartition topic.
type Repartition struct {
	Pos        Pos
	Name       string // explicit; topic is <app id>-<name>-repartition
	Partitions int    // 0 = as the upstream source topics
}

// CogroupInput is one grouped stream of a cogroup with its aggregator.
type CogroupInput struct {
	Pos        Pos
	Input      *Node // a grouped-stream node
	Aggregator *Func
}
