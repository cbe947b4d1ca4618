// Package sgstream is the typed DSL that topologies are written in: the
// operators generated code calls (and a topology written by hand may call),
// the stream, table and store handles they pass around, and what a user's
// processor sees of its task.
//
// Generated code builds a topology by calling the typed, generic operator
// functions of this package (Source, Filter, MapValues, GroupByKey, Count,
// WindowedBy, Join…) on a Builder. Each operator creates a node whose
// children are typed values, so a record travels from node to node as a
// typed Go value with no serialization, boxing or reflection between
// operators of one sub-topology; bytes only appear at sources, sinks,
// repartition topics and state stores.
//
// NewTopology runs the build function once to learn the topology's
// structure and returns an opaque Topology to hand to an engine: the Kafka
// engine (runtime/sgkafka) or the in-process test driver (runtime/sgtest).
// Every task (one sub-topology on one partition) runs the build function
// again with its own Builder, so every task owns fresh node instances and
// its own stores, and the same code runs under both engines.
//
// This package also implements what the engines drive: tasks, their
// topology's structure and the byte-level test driver. That API is the
// engines' alone and lives behind runtime/internal/engine, which only
// runtime packages can import; the few names both sides share (Header,
// RawRecord, Policy, TimestampPolicy, StoreSpec, StoreKind, TaskID) are
// aliases of its types.
//
// Semantics follow Kafka Streams 4.x; see docs/semantics.md in the
// repository for the deliberate differences.
package sgstream
