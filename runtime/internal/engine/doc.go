// Package engine is the contract between runtime/sgstream, which builds
// and runs topologies, and the engines that drive them: runtime/sgkafka
// (Kafka), the in-process test driver under runtime/sgtest, and the
// runtime packages around them (sgapp, sgquery, sgrun).
//
// Generated code never sees it. sgstream's public API is the typed DSL
// generated code and hand-written topologies call; everything an engine
// needs and a topology does not (tasks, their configuration and counters,
// store providers, the byte-level test driver, the topics and
// sub-topologies of the graph) is declared here, where Go's internal rule
// keeps it to packages under runtime/. The few names both audiences share
// (Header, RawRecord, Policy, TimestampPolicy, StoreSpec, StoreKind) are
// defined here and aliased by sgstream.
//
// sgstream implements Topology, Task and Driver with unexported types. An
// engine gets a Topology from the public *sgstream.Topology by a pointer
// conversion (sgstream.Topology is declared as Handle), so no
// registration, reflection or extra call sits between them; the per-record
// cost of the split is the one interface call of Task.Process.
package engine
