package sgstream

import (
	"reflect"
	"unsafe"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// Header is a Kafka record header: a string Key and a byte Value.
type Header = engine.Header

// Record is one record as it flows between nodes.
//
// Kafka allows a null key and a null value on any topic, and Kafka Streams'
// semantics depend on them (aggregations skip nulls, a null table value is a
// delete). Go's primitive types have no null, so nullness travels beside the
// value: KeyNull and ValueNull. For record types, whose Go type is a pointer,
// ValueNull is always equal to Value == nil.
type Record[K, V any] struct {
	Key       K
	Value     V
	KeyNull   bool
	ValueNull bool
	Timestamp int64
	Headers   []Header
}

// KeyValue is a key and a value, the element type flat_map functions return.
type KeyValue[K, V any] struct {
	Key   K
	Value V
}

// tableChange is a table update: the new value and, where an operator needs it,
// the old one (Kafka Streams' Change<V> with sendOldValues).
type tableChange[V any] struct {
	New     V
	Old     V
	NewNull bool
	OldNull bool
	// NotLatest marks an out-of-order update of a versioned table: one
	// older than the key's latest version (Kafka's Change.isLatest false).
	NotLatest bool
}

// Windowed is a windowed key: the base key and the window bounds in
// milliseconds. For time windows End is exclusive; for session and sliding
// windows it is inclusive, as in Kafka Streams.
type Windowed[K any] struct {
	Key   K
	Start int64
	End   int64
}

// isNull reports whether v is a null value: a nil generated record (a
// pointer type with an IsNil method that works on a nil receiver), or a
// nil pointer to a plain value (the *int64 of a stream whose values can be
// null, see Nullable). This is how a mapper that returns nil produces a
// tombstone. Per-record callers use a nullTest made
// when the node is built.
func isNull[V any](v V) bool { return newNullTest[V]().of(v) }

// nullTest is isNull with the type half of the check made once, when a node
// is built: for most types (strings, numbers, structs without IsNil) no value
// is ever null, and asking reflect per record was a measurable part of a
// stateless chain.
type nullTest[V any] struct {
	possible bool
	// pointer is set for pointer types without an IsNil method: the value
	// is null when the pointer is nil.
	pointer bool
}

func newNullTest[V any]() nullTest[V] {
	t := reflect.TypeFor[V]()
	if t.Kind() == reflect.Pointer && !t.Implements(nullableType) {
		return nullTest[V]{possible: true, pointer: true}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return nullTest[V]{possible: true}
	}
	return nullTest[V]{possible: t.Implements(nullableType)}
}

// of is isNull(v). It must not allocate for the common types: converting a
// string or a struct to an interface does, so only types that may be null
// are converted; for pointer-shaped ones (generated records are pointers)
// the conversion stores the pointer itself.
func (n nullTest[V]) of(v V) bool {
	if !n.possible {
		return false
	}
	if n.pointer {
		// V is a pointer type: its value is one machine word.
		return *(*unsafe.Pointer)(unsafe.Pointer(&v)) == nil
	}
	nv, ok := any(v).(nullable)
	return ok && nv.IsNil()
}

// nullable is implemented by generated record pointers (serdes.Record).
type nullable interface{ IsNil() bool }

var nullableType = reflect.TypeFor[nullable]()
