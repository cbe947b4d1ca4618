package sgquery

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// GlobalPartition is the partition of a global store (a global table's):
// one global task holds all of it, whatever the partition of the key.
const GlobalPartition = engine.GlobalPartition

// Errors; test with errors.Is. Returned errors wrap them with the store,
// partition and reason.
var (
	// ErrUnknownStore: the topology has no store of that name, or the store
	// is not queryable.
	ErrUnknownStore = errors.New("streamgen: unknown store")
	// ErrNotLocal: another instance runs the task that holds the key (or
	// the partition); KeyMetadata names it.
	ErrNotLocal = errors.New("streamgen: store partition is not on this instance")
	// ErrUnavailable: the store cannot answer now and will later: its task
	// is restoring, the group is rebalancing, or the instance is starting or
	// stopping. The HTTP endpoint answers 503 with Retry-After.
	ErrUnavailable = errors.New("streamgen: store is not available now")
	// ErrBadKey: the key does not serialize with the store's key serde, or
	// (HTTP) does not parse as the store's key type.
	ErrBadKey = errors.New("streamgen: bad key")
)

// StoreInfo is what an engine knows about a store's placement.
type StoreInfo struct {
	// Kind is the store's shape.
	Kind sgstream.StoreKind
	// Partitions is the number of tasks that hold a part of the store: the
	// partition count of the source topics of its sub-topology. 0 for a
	// global store.
	Partitions int
	// Global is set for the store of a global table: every instance holds
	// all of it (partition GlobalPartition).
	Global bool
}

// Host is an instance of the application, as seen by interactive queries.
type Host struct {
	// Addr is the instance's advertised query address (host:port); empty
	// when it runs without a query endpoint.
	Addr string
	// Self is set for this instance.
	Self bool
}

// Source is the engine's side of interactive queries.
type Source interface {
	// StoreInfo describes store; it fails with ErrUnknownStore when the
	// topology has none of that name, and with ErrUnavailable before the
	// engine knows the partition counts.
	StoreInfo(store string) (StoreInfo, error)
	// ReadLocal runs fn on the store of the task of partition
	// (GlobalPartition for a global store) if this instance runs
	// it, while the task cannot process. fn must be quick, must not write,
	// and must not keep the store or slices it returns. It fails with
	// ErrNotLocal when this instance does not run the task now (restoring
	// counts as not running), ErrUnavailable when the engine is not running.
	ReadLocal(ctx context.Context, store string, partition int32, fn func(sgstate.Store) error) error
	// Owner is the instance that runs the task of partition. It fails with
	// ErrUnavailable while no instance does (a rebalance is moving it).
	Owner(ctx context.Context, store string, partition int32) (Host, error)
}

// StandbySource is implemented by sources that hold standby replicas
// (Kafka Streams' stale stores): ReadStandby runs fn, as ReadLocal does,
// on this instance's standby copy of the store's partition, and says how
// many changelog offsets the copy is behind. It fails with ErrNotLocal
// when this instance holds no standby of it.
type StandbySource interface {
	ReadStandby(ctx context.Context, store string, partition int32, fn func(sgstate.Store) error) (lag int64, err error)
}

// KeyMetadata is where a key of a store lives (Kafka Streams'
// KeyQueryMetadata).
type KeyMetadata struct {
	// Partition is the partition of the task that holds the key:
	// Kafka's default partitioner (murmur2) on the serialized key over the
	// store's partitions, since records reach a store partitioned by its
	// key. GlobalPartition for a global store.
	Partition int32
	// Owner is the instance running that task.
	Owner Host
}

// partitionOf is the partition of a key's task in store.
func partitionOf(src Source, store string, kb []byte) (int32, StoreInfo, error) {
	info, err := src.StoreInfo(store)
	if err != nil {
		return 0, info, err
	}
	if info.Global {
		return GlobalPartition, info, nil
	}
	if info.Partitions <= 0 {
		return 0, info, fmt.Errorf("%w: store %q: its partitions are not known yet", ErrUnavailable, store)
	}
	return sgpartition.Partition(kb, int32(info.Partitions)), info, nil
}

// partitionsOf lists the partitions of store's tasks.
func partitionsOf(info StoreInfo) []int32 {
	if info.Global {
		return []int32{GlobalPartition}
	}
	ps := make([]int32, info.Partitions)
	for i := range ps {
		ps[i] = int32(i)
	}
	return ps
}
