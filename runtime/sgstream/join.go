package sgstream

import (
	"fmt"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// Joins: Kafka Streams' KStream-KStream, KStream-KTable,
// KStream-GlobalKTable, KTable-KTable (primary key) and KTable-KTable
// foreign-key joins, with the emission rules, timestamps, null handling and
// output order of Kafka Streams 4.x (KStreamKStreamJoin with the KIP-633
// outer-join store, KStreamKTableJoinProcessor, KTableKTable*Join,
// foreignkeyjoin/*).
//
// Every joiner receives the key and the values in (left, right) order,
// whichever side triggered. A missing side (the unmatched side of a left or
// outer join, a deleted table row) is passed as the zero value of its type,
// which is nil for generated record types: that is how Kafka's null reaches
// user code. A joiner that returns a nil record produces a null value.

// JoinKind is the kind of a join.
type JoinKind int

const (
	// InnerJoin emits only when both sides are present.
	InnerJoin JoinKind = iota
	// LeftJoin emits for every left record (or row), with a null right
	// side when there is no match.
	LeftJoin
	// OuterJoin emits for records (or rows) of either side, with a null
	// other side when there is no match. Only stream-stream and
	// table-table joins have it.
	OuterJoin
)

func (k JoinKind) String() string {
	switch k {
	case InnerJoin:
		return "inner"
	case LeftJoin:
		return "left"
	case OuterJoin:
		return "outer"
	}
	return fmt.Sprintf("JoinKind(%d)", int(k))
}

// JoinWindows is the window of a stream-stream join: a left record at
// time t joins the right records with timestamps in [t - Before,
// t + After], both bounds inclusive (Kafka's JoinWindows; before(x) and
// after(y) make it asymmetric, ofTimeDifference(d) sets both to d). Grace
// is how long after the window ends a record may still arrive; it delays
// the emission of unmatched left/outer results and extends the store
// retention.
type JoinWindows struct {
	Before time.Duration
	After  time.Duration
	Grace  time.Duration
}

// Validate reports windows Kafka rejects: Before + After must not be
// negative (either alone may be), Grace must not be negative.
func (w JoinWindows) Validate() error {
	switch {
	case w.Before.Milliseconds()+w.After.Milliseconds() < 0:
		return fmt.Errorf("streamgen: join windows: before + after must not be negative, got before %v, after %v", w.Before, w.After)
	case w.Grace < 0:
		return fmt.Errorf("streamgen: join windows: grace must not be negative, got %v", w.Grace)
	}
	return nil
}

// Size is the window size of the join stores, Before + After.
func (w JoinWindows) Size() time.Duration { return w.Before + w.After }

// StoreRetention is the retention of the join stores: Before + After +
// Grace, which Kafka enforces for join window stores, but at least 1 ms.
//
// A window of size 0 with grace 0 is legitimate (only equal timestamps
// join), but a store with retention 0 would hide everything: its fetches
// start one past its observed stream time minus the retention. With 1 ms
// exactly the observed stream time stays visible, which is all such a join
// can match, and older entries expire as they would anyway.
func (w JoinWindows) StoreRetention() time.Duration {
	return max(w.Before+w.After+w.Grace, time.Millisecond)
}

// StreamJoinSerdes is what a stream-stream join's stores need, as Kafka
// Streams' StreamJoined holds it: the serdes of the key, the left value and
// the right value, and optionally the name the stores are named after.
type StreamJoinSerdes[K, V1, V2 any] struct {
	Key   serdes.Serde[K]
	Left  serdes.Serde[V1]
	Right serdes.Serde[V2]
	// StoreName, when set, gives the stores the names Kafka Streams gives
	// them for StreamJoined.withStoreName(StoreName), so that the join can
	// take over a Kafka Streams application's join state:
	// <StoreName>-this-join-store and <StoreName>-other-join-store, with
	// "-outer" before the side that emits unmatched records, and
	// <StoreName>-left-shared-join-store or -outer-shared-join-store for
	// the unmatched records of a left or outer join. Default: the join's
	// own names, <name>-this, <name>-other and <name>-outer.
	StoreName string
}

// JoinStreams joins two co-partitioned streams within w (Kafka's
// KStream#join/leftJoin/outerJoin with JoinWindows.ofTimeDifference*).
//
// It creates the window stores <name>-this (left records) and <name>-other
// (right records), which retain duplicates, have window size Before+After
// and retention Before+After+Grace, and, for left and outer joins, the
// key-value store <name>-outer that holds unmatched records until their
// window closes (KIP-633): an unmatched left record at time T is emitted as
// joiner(key, left, nil) with timestamp T once the join's stream time
// exceeds T + After + Grace, and never if a match arrives first.
// sd.StoreName gives the stores Kafka Streams' names instead. opts adjust
// all three stores.
func JoinStreams[K, V1, V2, VR any](left Stream[K, V1], right Stream[K, V2], name string, kind JoinKind, w JoinWindows, joiner Joiner[K, V1, V2, VR], sd StreamJoinSerdes[K, V1, V2], opts ...WindowStoreOpt) Stream[K, VR] {
	return joinStreams(left, right, name, kind, w, joiner, sd, opts)
}

// JoinStreamTable joins a stream with a co-partitioned table (Kafka's
// KStream#join/leftJoin(KTable)): each stream record looks the table up by
// its key; table updates never emit. Only InnerJoin and LeftJoin exist.
// The result has the stream record's timestamp. Records with a null value
// are dropped, and so are null keys except in a left join, which emits
// them with a null table side. The table must be
// lookup-able (materialized, or derived from a materialized table).
// A versioned table is read as of the stream record's timestamp; see
// JoinStreamTableGrace for the grace period (KIP-923).
func JoinStreamTable[K, V1, V2, VR any](s Stream[K, V1], t Table[K, V2], name string, kind JoinKind, joiner Joiner[K, V1, V2, VR]) Stream[K, VR] {
	return joinStreamTable(s, t, name, kind, joiner)
}

// JoinStreamGlobal joins a stream with a global table (Kafka's
// KStream#join/leftJoin(GlobalKTable)): keyMapper maps each stream record
// to the global table's key, which need not be the stream's key. Only
// InnerJoin and LeftJoin exist. The result keeps the stream's key and
// timestamp. A record with a null key is not dropped (KIP-962): the mapper
// receives the zero key and the value, and its result is looked up; records
// with a null value, or whose mapped key is null, are dropped (a left join
// keeps a null-key record whatever the mapper returns).
func JoinStreamGlobal[K, V1, K2, V2, VR any](s Stream[K, V1], g GlobalTable[K2, V2], name string, kind JoinKind, keyMapper func(key K, value V1) K2, joiner Joiner[K, V1, V2, VR]) Stream[K, VR] {
	return joinStreamGlobal(s, g, name, kind, keyMapper, joiner)
}

// JoinTables joins two co-partitioned tables on their primary key (Kafka's
// KTable#join/leftJoin/outerJoin(KTable)): an update on either side looks
// the other side up and emits the joined row, or a tombstone per Kafka's
// rules, with timestamp max(this update, other row). store names the store
// that materializes the result, or is "" (then lookups compute the join
// from both sides); value serializes result values and is required when
// store is set.
func JoinTables[K, V1, V2, VR any](l Table[K, V1], r Table[K, V2], name string, kind JoinKind, joiner Joiner[K, V1, V2, VR], store string, value serdes.Serde[VR]) Table[K, VR] {
	return joinTables(l, r, name, kind, joiner, store, value)
}

// ForeignKeySerdes are the serdes of a foreign-key join. Nil fields are
// taken from the tables' handles (l.Key, l.Value, r.Key).
type ForeignKeySerdes[K, V1, KO, VR any] struct {
	Key        serdes.Serde[K]  // left (primary) key
	Value      serdes.Serde[V1] // left value (hashed to detect stale responses)
	ForeignKey serdes.Serde[KO] // right key
	Result     serdes.Serde[VR] // result values; required when store is set
}

// JoinForeignKey joins table l with table r on fk(l's value) == r's key
// (KIP-213, Kafka's KTable#join/leftJoin with a foreign-key extractor). The
// result is keyed by l's key. Only InnerJoin and LeftJoin exist.
//
// It creates the store <name>-subscriptions on r's side and the internal
// topics <app id>-<name>-subscription-registration-topic (l → r, keyed by
// the foreign key) and <app id>-<name>-subscription-response-topic (r → l,
// back to the left record's partition). store materializes the result, or
// is "" (then the result cannot be looked up).
func JoinForeignKey[K, V1, KO, V2, VR any](l Table[K, V1], r Table[KO, V2], name string, kind JoinKind, fk func(value V1) KO, joiner Joiner[K, V1, V2, VR], store string, sd ForeignKeySerdes[K, V1, KO, VR]) Table[K, VR] {
	return joinForeignKey(l, r, name, kind, fk, joiner, store, sd)
}
