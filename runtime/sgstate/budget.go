package sgstate

import (
	"fmt"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Limits of a MemoryBudget.
const (
	// MinStoreMemoryBytes is the smallest budget NewMemoryBudget accepts:
	// its memtable half holds 32 stores at Pebble's smallest memtables
	// (minStoreMemTables each), and a block cache much smaller than this
	// makes every read go to disk.
	MinStoreMemoryBytes = 32 << 20
	// minStoreMemTables is what one open store holds at least: its mutable
	// memtable and the flushed one Pebble keeps for reuse, each of Pebble's
	// first memtable size (256 KiB), which no setting lowers.
	minStoreMemTables = 2 * pebbleFirstMemTable
	// pebbleFirstMemTable is the size of the first memtable Pebble gives a
	// store (it doubles the size of later ones up to MemTableSize).
	pebbleFirstMemTable = 256 << 10
	// minBudgetMemTableSize is the smallest MemTableSize the budget gives a
	// store: batches of half of it or more bypass the memtable as flushable
	// batches, one flush each, so smaller sizes turn every commit into an
	// sstable.
	minBudgetMemTableSize = 1 << 20
	// budgetSizingStores is the fewest stores the budget sizes a new
	// store's MemTableSize for. Stores open one by one (a task at a time);
	// sizing the first for the whole share would let each of them grow
	// memtables that later stores cannot take back.
	budgetSizingStores = 16
	// memTableEntryOverhead estimates what Pebble's memtable adds to a
	// batch entry's bytes (its skiplist node: offsets, sizes, the key
	// trailer and the links of an average tower). It is rounded up, so the
	// count the budget keeps errs on the side of flushing early.
	memTableEntryOverhead = 48
)

// MemoryBudget bounds the memory of every Pebble store that shares it: their
// block cache plus all their memtables, Kafka Streams'
// BoundedMemoryRocksDBConfig (one cache and a WriteBufferManager) built for
// Pebble, which has no WriteBufferManager.
//
// The block cache is one cache of the whole budget. Pebble charges every
// memtable it allocates to the cache of its store (the cache's capacity
// shrinks by the memtable's size while it lives), so blocks and memtables
// together stay within the budget as long as the memtables do. The
// memtables get at most half (MemTableShare); the cache keeps the rest and
// whatever the memtables do not use.
//
// A SharedDB counts as one store and takes its memtable size from the
// budget once (joinShared); its stores do not join the budget themselves.
//
// The memtable half is split evenly over the open stores. A store holds two
// memtables (the one written and the flushed one Pebble keeps for reuse),
// and Pebble grows a memtable only when it filled more than half of the one
// before. So each store gets a target memtable size of at most half its
// even share, rounded down to a power of two; a store's
// MemTableSize is sized when it opens, and a store whose MemTableSize is
// above the current target (it opened when fewer stores were open) flushes
// its memtable itself once its writes reach half the target, which keeps
// Pebble from growing it. The flush is asked for on the commit path and
// not waited for: a flush carries the commits it ends with, checkpoints
// included, exactly like a flush of a full memtable.
//
// What is not bounded: memtables a store grew before more stores opened
// (Pebble never shrinks them; they go when the store closes), flushes in
// flight (a store flushing faster than its disk keeps up holds more than
// two memtables until Pebble's own stop-writes limit), the 512 KiB Pebble
// needs at least per store (when the share is smaller than that times the
// open stores, a warning is logged), and everything outside Pebble: the
// Go heap, the record cache, the Kafka clients' buffers.
//
// A MemoryBudget is safe for concurrent use. Its cache exists while a store
// that uses it is open.
type MemoryBudget struct {
	total  int64
	logger *slog.Logger

	mu     sync.Mutex
	cache  *pebble.Cache
	stores int
	warned bool
	// target is the memtable size per store the share allows with the
	// stores open now; read on every commit.
	target atomic.Int64
}

// NewMemoryBudget returns a budget of bytes for Pebble's block cache and
// memtables. bytes must be at least MinStoreMemoryBytes. logger receives
// the warning that the share is too small for the open stores; nil
// discards it.
func NewMemoryBudget(bytes int64, logger *slog.Logger) (*MemoryBudget, error) {
	if err := CheckMemoryBudget(bytes); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &MemoryBudget{total: bytes, logger: logger}, nil
}

// CheckMemoryBudget reports whether bytes is a usable budget.
func CheckMemoryBudget(bytes int64) error {
	if bytes < MinStoreMemoryBytes {
		return fmt.Errorf("streamgen: state store memory budget %d bytes is below the minimum of %d (%d MiB)",
			bytes, MinStoreMemoryBytes, MinStoreMemoryBytes>>20)
	}
	return nil
}

// Bytes is the whole budget.
func (b *MemoryBudget) Bytes() int64 { return b.total }

// MemTableShare is the part of the budget the memtables may hold: half.
func (b *MemoryBudget) MemTableShare() int64 { return b.total / 2 }

// join registers a store that opens and returns its cache and its
// MemTableSize.
func (b *MemoryBudget) join() (*pebble.Cache, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cache == nil {
		b.cache = pebble.NewCache(b.total)
	}
	b.stores++
	b.retarget()
	size := pow2Below(b.MemTableShare() / int64(2*max(b.stores, budgetSizingStores)))
	size = min(max(size, minBudgetMemTableSize), DefaultMemTableSize)
	return b.cache, uint64(size)
}

// joinShared registers a SharedDB that opens and returns its cache and
// its MemTableSize: a quarter of the memtable share (it holds two
// memtables, and leaves the other half to stores of their own), at most
// DefaultMemTableSize.
func (b *MemoryBudget) joinShared() (*pebble.Cache, uint64) {
	c, _ := b.join()
	size := min(max(pow2Below(b.MemTableShare()/4), minBudgetMemTableSize), DefaultMemTableSize)
	return c, uint64(size)
}

// leave unregisters a store that closed (or failed to open). The budget's
// reference to the cache goes with the last store: the stores hold their
// own.
func (b *MemoryBudget) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stores--
	if b.stores == 0 {
		b.cache.Unref()
		b.cache = nil
	}
	b.retarget()
}

// retarget recomputes the per-store target; b.mu is held.
func (b *MemoryBudget) retarget() {
	n := int64(max(b.stores, 1))
	b.target.Store(min(max(pow2Below(b.MemTableShare()/(2*n)), pebbleFirstMemTable), DefaultMemTableSize))
	if !b.warned && n*minStoreMemTables > b.MemTableShare() {
		b.warned = true
		b.logger.Warn("state store memory budget too small for the open stores: their smallest memtables exceed its memtable share",
			"budget_bytes", b.total, "memtable_share_bytes", b.MemTableShare(), "stores", n,
			"needed_bytes", n*minStoreMemTables)
	}
}

// flushAt is the memtable bytes at which a store of MemTableSize size
// flushes by itself, 0 for never (Pebble's own rotation of a full memtable
// keeps it within the target).
func (b *MemoryBudget) flushAt(size uint64) int64 {
	t := b.target.Load()
	if int64(size) <= t {
		return 0
	}
	return t / 2
}

// pow2Below is the largest power of two at most n (1 for n < 1).
func pow2Below(n int64) int64 {
	if n < 1 {
		return 1
	}
	return 1 << (bits.Len64(uint64(n)) - 1)
}

// budgetCount is a store's share of a MemoryBudget: the memtable bytes it
// wrote since it last asked for a flush, estimated from its batches.
type budgetCount struct {
	b     *MemoryBudget
	size  uint64 // the store's MemTableSize
	bytes int64
}

// add counts a committed batch and reports whether the store should flush.
func (c *budgetCount) add(batch *pebble.Batch) bool {
	if c.b == nil {
		return false
	}
	c.bytes += int64(batch.Len()) + memTableEntryOverhead*int64(batch.Count())
	at := c.b.flushAt(c.size)
	return at > 0 && c.bytes >= at
}

// leave unregisters the store from its budget, if it has one.
func (c *budgetCount) leave() {
	if c.b != nil {
		c.b.leave()
		c.b = nil
	}
}
