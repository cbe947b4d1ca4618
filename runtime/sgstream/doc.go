// Package sgstream is the processor graph that generated topologies run on.
//
// Generated code builds a topology by calling the typed, generic operator
// functions of this package (Source, Filter, MapValues, GroupByKey, Count,
// WindowedBy, Join…). Each operator creates a node whose children are typed
// Processor values, so a record travels from node to node as a typed Go
// value with no serialization, boxing or reflection between operators of one
// sub-topology; bytes only appear at sources, sinks, repartition topics and
// state stores.
//
// A Topology is a build function plus the structure learnt by running it
// once. Every task (one sub-topology on one partition) runs the build
// function again with its own Builder, so every task owns fresh node
// instances and its own stores: the same code runs under the in-process
// testDriver (TopologyTestDriver semantics, several partitions allowed) and
// under the Kafka engine.
//
// Semantics follow Kafka Streams 4.x; see docs/semantics.md in the
// repository for the deliberate differences.
package sgstream
