package sgstate

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Defaults of PebbleOptions. Pebble's own defaults are tuned for large
// deployments that configure everything; for point reads they are slow
// (8 MB cache, 4 MB memtable, no bloom filter, oldest on-disk format). With
// the values below, point gets measured ~6x faster and 100-key range scans
// ~4x faster on a 2-core machine; batched puts are unaffected.
const (
	// DefaultSharedCacheSize is the block cache shared by every Pebble store
	// of the process that does not bring its own (state stores of all tasks
	// compete for one budget, as RocksDB's shared cache does in Kafka
	// Streams' BoundedMemoryRocksDBConfig).
	DefaultSharedCacheSize = 64 << 20
	// DefaultMemTableSize bounds one memtable. Pebble starts small and grows
	// memtables up to this size, so idle stores do not pay for it.
	DefaultMemTableSize = 64 << 20
	// DefaultBloomBitsPerKey is the bloom filter density (~1% false
	// positives), which makes Gets of absent keys cheap.
	DefaultBloomBitsPerKey = 10
)

// PebbleOptions tunes the Pebble-backed stores. The zero value is ready to
// use; EnsureDefaults fills in the documented defaults. Constructors copy the
// struct, so one value can be shared and tweaked per store.
type PebbleOptions struct {
	// Cache is the block cache. Default: a process-wide cache of
	// DefaultSharedCacheSize shared by all stores that leave this nil.
	Cache *pebble.Cache
	// MemTableSize in bytes. Default DefaultMemTableSize.
	MemTableSize uint64
	// BloomBitsPerKey sets the bloom filter on every level. Default
	// DefaultBloomBitsPerKey; negative disables filters.
	BloomBitsPerKey int
	// Sync makes every Commit durable by itself: it is written to Pebble's
	// write-ahead log and fsynced before Commit returns. Implies WAL.
	Sync bool
	// WAL keeps Pebble's write-ahead log: every Commit reaches the OS before
	// it returns (not fsynced unless Sync), so a killed process reopens at
	// its last commit. Stores without a changelog need it.
	//
	// Default false, for stores with a changelog: commits go to the memtable
	// only, and the store is durable as of its last memtable flush, which
	// carries the checkpoint of the commit it ends with (data and checkpoint
	// are one atomic batch, and Pebble flushes memtables in order). After
	// kill -9 the store reopens at that flush and restoration replays the
	// changelog past its checkpoint, as Kafka Streams runs RocksDB with the
	// WAL disabled. The store flushes when a commit finds nothing new since
	// the one before (the application went idle), when a memtable fills, and
	// on Close. What this buys: Pebble's Open replays a WAL and flushes it
	// before it returns, which was most of a restart after kill -9 (610 of
	// 690 ms with 1 000 000 keys), and commits stop writing a WAL.
	WAL bool
	// Fingerprint is the record-schema fingerprint of this store, recorded
	// on first open; opening a store whose recorded fingerprint differs
	// fails with ErrSchemaMismatch. Empty disables the check (and records
	// nothing).
	Fingerprint string
	// Budget, when set, bounds the block cache and memtables of every
	// store that shares it (see MemoryBudget): it provides the cache and
	// sizes MemTableSize, so Cache and MemTableSize (here and in Pebble)
	// must be left unset. Default nil: the process cache and
	// MemTableSize.
	Budget *MemoryBudget
	// Pebble is passed through for settings not covered here. It is cloned;
	// the fields above and the defaults only fill what it leaves zero
	// (Cache/CacheSize, MemTableSize, FilterPolicy of each level,
	// FormatMajorVersion, Logger).
	Pebble *pebble.Options
}

// EnsureDefaults fills zero fields with the defaults and returns o.
func (o *PebbleOptions) EnsureDefaults() *PebbleOptions {
	if o.MemTableSize == 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = DefaultBloomBitsPerKey
	}
	return o
}

// Validate reports every problem at once.
func (o *PebbleOptions) Validate() error {
	var errs []error
	if o.MemTableSize != 0 && o.MemTableSize < 1<<20 {
		errs = append(errs, fmt.Errorf("streamgen: pebble options: memtable size %d is below 1 MiB", o.MemTableSize))
	}
	if o.Budget != nil {
		if o.Cache != nil || o.MemTableSize != 0 {
			errs = append(errs, errors.New("streamgen: pebble options: a memory budget sets the cache and memtable size: leave Cache and MemTableSize unset"))
		}
		if p := o.Pebble; p != nil && (p.Cache != nil || p.CacheSize != 0 || p.MemTableSize != 0) {
			errs = append(errs, errors.New("streamgen: pebble options: a memory budget sets the cache and memtable size: leave Pebble.Cache, Pebble.CacheSize and Pebble.MemTableSize unset"))
		}
	}
	if o.BloomBitsPerKey > 64 {
		errs = append(errs, fmt.Errorf("streamgen: pebble options: bloom bits per key %d, want at most 64", o.BloomBitsPerKey))
	}
	return errors.Join(errs...)
}

var sharedCache struct {
	once sync.Once
	c    *pebble.Cache
}

// processCache returns the process-wide block cache. Its reference is never
// released: it lives as long as the process.
func processCache() *pebble.Cache {
	sharedCache.once.Do(func() { sharedCache.c = pebble.NewCache(DefaultSharedCacheSize) })
	return sharedCache.c
}

// wal reports whether the store writes Pebble's write-ahead log.
func (o PebbleOptions) wal() bool { return o.WAL || o.Sync }

// pebbleOptions builds the *pebble.Options for one store.
func (o PebbleOptions) pebbleOptions(logger *slog.Logger) *pebble.Options {
	o.EnsureDefaults()
	var po *pebble.Options
	if o.Pebble != nil {
		po = o.Pebble.Clone()
	} else {
		po = &pebble.Options{}
	}
	if po.Cache == nil && po.CacheSize == 0 {
		if o.Cache != nil {
			po.Cache = o.Cache
		} else {
			po.Cache = processCache()
		}
	}
	if po.MemTableSize == 0 {
		po.MemTableSize = o.MemTableSize
	}
	if po.FormatMajorVersion == 0 {
		po.FormatMajorVersion = pebble.FormatNewest
	}
	if o.BloomBitsPerKey > 0 {
		hasFilter := false
		for i := range po.Levels {
			hasFilter = hasFilter || po.Levels[i].FilterPolicy != nil
		}
		if !hasFilter {
			for i := range po.Levels {
				po.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
			}
		}
	}
	po.DisableWAL = !o.wal()
	if o.WAL && !o.Sync {
		fs := po.FS
		if fs == nil {
			fs = vfs.Default
		}
		po.FS = walWriteThroughFS{fs}
	}
	if po.Logger == nil && po.LoggerAndTracer == nil {
		if logger == nil {
			logger = slog.New(slog.DiscardHandler)
		}
		po.Logger = pebbleLogger{logger}
	}
	return po
}

// pebbleLogger keeps Pebble quiet: its informational chatter goes to Debug;
// errors stay visible; Fatalf logs then panics (Pebble calls it on corruption
// and expects it not to return).
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble")
	panic("streamgen: pebble: " + msg)
}

// walWriteThroughFS gives Pebble WAL files whose fsync does nothing (stores
// with WAL but not Sync). Such stores commit with pebble.Sync, the only way to make Pebble write a batch to the
// WAL file before the commit returns: with pebble.NoSync it stays in an
// in-process buffer until 32 KiB of WAL accumulate, and SIGKILL loses every
// commit since (measured: a store killed after seconds of commits reopened
// with no checkpoint at all). The write reaches the OS; only the fsync,
// which guards against OS crashes, is skipped. Other files (MANIFEST, SSTs)
// are synced as usual.
type walWriteThroughFS struct{ vfs.FS }

// walCategory is the DiskWriteCategory Pebble creates WAL files with.
const walCategory vfs.DiskWriteCategory = "pebble-wal"

func (fs walWriteThroughFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return wrapWAL(f, err, c)
}

func (fs walWriteThroughFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return wrapWAL(f, err, c)
}

func (fs walWriteThroughFS) Unwrap() vfs.FS { return fs.FS }

func wrapWAL(f vfs.File, err error, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err != nil || c != walCategory {
		return f, err
	}
	return writeThroughFile{f}, nil
}

type writeThroughFile struct{ vfs.File }

func (writeThroughFile) Sync() error                { return nil }
func (writeThroughFile) SyncData() error            { return nil }
func (writeThroughFile) SyncTo(int64) (bool, error) { return false, nil }
