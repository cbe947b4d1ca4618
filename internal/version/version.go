// Package version holds the generated-code API version shared by the
// generator (gen) and the runtime (runtime/sgimpl).
//
// It imports nothing so that both sides can depend on it without the
// generator pulling in the runtime or the runtime pulling in the generator.
package version

const (
	// GenVersion is the version of the generated-code API that the current
	// generator emits. It goes up only when generated code starts to need
	// runtime API that older runtimes lack; it is unrelated to release
	// versions, so goldens do not churn on every release.
	//
	// 3: generated code calls sgrun.Run, GroupByKey with options, sinks
	// whose windowed key serde partitions, store descriptors, typed window
	// query constructors and serdes/serdestest; the runtime dropped the
	// version 2 forms of those, so it supports 3 only.
	//
	// 4: generated records call serdes.DecodeRecord and Fields, the generic
	// collection readers and writers (ReadList, AppendMap, ...), ReadEnum,
	// ReadPtr and AppendEnum. Version 3 code uses none of them and the
	// runtime keeps all it calls, so the runtime supports 3 and 4.
	//
	// 5: the record glue of version 4 (DecodeRecord, Fields, ReadPtr, the
	// collection readers and writers, SortedKeys) moved from serdes, whose
	// documentation users read, to runtime/sgimpl, and generated records
	// call it there. Older generated code names it in serdes and would not
	// compile, so the runtime supports 5 only.
	//
	// 6: generated code calls the nullable operators of the `tombstones`
	// topic option (GroupByNullable, ToDynamicNullable, the windowed and
	// session AggregateNullable/ReduceNullable forms, CogroupNullable) that
	// keep a null value null through user functions. Version 5 code calls
	// none of them and the runtime keeps all it calls, so the runtime
	// supports 5 and 6.
	GenVersion = 6

	// MinVersion is the oldest GenVersion the current runtime still supports.
	MinVersion = 5

	// MaxVersion is the newest GenVersion the current runtime supports.
	MaxVersion = 6
)
