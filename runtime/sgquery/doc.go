// Package sgquery serves interactive queries: reads of a running
// application's state stores from outside its topology, as Kafka Streams'
// interactive queries do (KafkaStreams#store, queryMetadataForKey).
//
// Three layers:
//
//   - Source is the engine's side. It reads a store of one task on this
//     instance while the task cannot process (ReadLocal), and knows which
//     instance runs every task (Owner). *sgkafka.Engine implements it.
//   - KeyValue, Window and Session are typed views of one store each, with
//     the store's key and value types. Generated code makes one per
//     queryable store (NewKeyValue, NewWindow, NewSession) and binds them to
//     a Source with On. Their reads are local, like Kafka Streams' store():
//     a key another instance owns fails with ErrNotLocal, and KeyMetadata
//     names the owner.
//   - NewHandler is the HTTP endpoint (`run --query-addr`). It answers for
//     every key: a key owned by another instance is forwarded to that
//     instance's advertised query address (or redirected with 307), and
//     ranges are gathered from every instance. Keys and values travel as the
//     JSON of the replay format (package sgreplay).
//
// # Consistency
//
// A read sees the task's latest processed state, record cache included (as
// Kafka Streams' interactive queries read through the caching store). Under
// exactly-once that state may include writes of a transaction that has not
// committed yet and could still abort; Kafka Streams reads the same way
// (before KIP-892's read-committed queries). Reads of different partitions
// are not a snapshot of one moment.
package sgquery
