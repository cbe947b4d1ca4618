// Package serdes is the serialization library that streamgen-generated code
// and the streamgen runtime use. It imports only the standard library.
//
// It has four parts:
//
//   - append-style msgpack primitives (AppendString, ReadString, Skip, …),
//     public low-level API as protowire is: generated record code calls
//     them, and so may hand-written code that reads or writes the record
//     format. Encoding appends to a caller-owned buffer and allocates
//     nothing else; decoding allocates only what the result owns (strings,
//     slices, maps, pointers of optional fields). The loops over a
//     record's fields and a collection's elements that only generated code
//     calls live in runtime/sgimpl.
//   - Kafka-compatible serdes for primitive keys and values (String, Int64,
//     …), byte-for-byte equal to Kafka's Java serializers.
//   - the Serde interface the runtime uses, with Msgpack for generated
//     records and Enum for generated enums.
//   - the json format of topics that name it (json_*.go): append-style
//     JSON primitives (AppendJSONString, ReadJSONInt64, ReadJSONObject,
//     SkipJSON, …) that generated AppendJSON and DecodeJSON methods call
//     (the collection appenders are in runtime/sgimpl), and JSON and
//     JSONValue, their serdes. docs/formats.md has the mapping.
//
// # Record wire format
//
// A record is a msgpack map. Keys are field IDs from the spec, written as
// positive integers in their smallest form (one byte for IDs below 128).
// IDs rather than names make the encoding compact and let fields be renamed
// without breaking data already in Kafka. The spec guarantees an ID is never
// reused for another type.
//
// Decoders also accept a string key equal to the field's spec name, so data
// written by msgpack/v5's Marshal of a struct tagged `msgpack:"user_id"`, by
// a Python dict, or by hand decodes too. Keys that match no field, and keys
// of any other type, are skipped with their values: an older reader can read
// newer data. Fields missing from the map take the default declared in the
// spec, or the Go zero value: a newer reader can read older data. A field
// whose value is msgpack nil is treated as missing.
//
// Values are encoded as follows:
//
//	string            str (decoders accept bin too)
//	bytes             bin (decoders accept str too)
//	bool              bool
//	int32, int64      smallest int form; decoders accept any int form whose value fits
//	uint32, uint64    smallest uint form; likewise
//	float32, float64  float32 / float64; decoders accept either, and integers
//	timestamp         int64 milliseconds since the Unix epoch (time.Time, UTC
//	                  when decoded); decoders also accept the msgpack
//	                  timestamp extension (type -1)
//	duration          int64 milliseconds (time.Duration)
//	enum              its int32 number; unknown numbers are kept as they are
//	record            a nested map in this same format
//	list<T>           array
//	map<string,T>     map with str keys, written in sorted key order so equal
//	                  records encode to equal bytes
//	optional<T>       the field is omitted when nil
//
// Every required field is always written, even when it holds the zero value:
// a reader whose schema declares a non-zero default must not substitute it
// for a value that was actually zero.
//
// # Errors
//
// Decoding never panics and never allocates more than the input can back:
// every declared length and element count is checked against the remaining
// input first. Failures are *DecodeError values carrying the field path
// (such as "items[2].sku") and the byte offset; errors.Is(err, ErrDecode)
// matches all of them.
//
// # Stability
//
// The Append and Read functions, Serde, Record and the serdes are used by
// generated code, so changing them needs a new generated-code version (see
// runtime/sgimpl.EnforceVersion).
package serdes
