package sgstate

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// budgetLoad is a write-heavy load on many stores: rounds of 200 puts of
// 100-byte values into every store, one commit each, as tasks of one
// instance commit.
type budgetLoad struct {
	stores, rounds int
}

// run opens the stores under opts in dir, writes the load, and returns
// the largest sum of the stores' memtable bytes, as Pebble's Metrics count
// them (memtables queued plus zombie ones: flushed and kept for reuse or
// still read), seen after a round of commits.
func (l budgetLoad) run(t *testing.T, opts *PebbleOptions) (peak uint64) {
	t.Helper()
	dir := t.TempDir()
	kvs := make([]KeyValueStore, l.stores)
	for i := range kvs {
		kvs[i] = NewPebbleKeyValue("kv", opts)
		initStore(t, kvs[i], filepath.Join(dir, fmt.Sprint(i)), nil)
	}
	defer func() {
		for _, s := range kvs {
			mustNoErr(t, s.Close())
		}
	}()
	val := bytes.Repeat([]byte{'v'}, 100)
	for r := range l.rounds {
		for i, s := range kvs {
			for k := range 200 {
				mustNoErr(t, s.Put(fmt.Appendf(nil, "key-%06d-%03d", r, k), val))
			}
			mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": int64(r*1000 + i)}))
		}
		peak = max(peak, memTableBytes(kvs))
	}
	return peak
}

// memTableBytes sums what Pebble reports its stores' memtables allocate.
func memTableBytes(kvs []KeyValueStore) uint64 {
	var n uint64
	for _, s := range kvs {
		m := s.(*kvStore).eng.(*pebbleEngine).db.Metrics()
		n += m.MemTable.Size + m.MemTable.ZombieSize
	}
	return n
}

// TestMemoryBudgetBoundsMemTables runs 48 stores under a 64 MiB budget and
// checks that their memtables stay within its 32 MiB memtable share plus
// one memtable of the per-store target per store (a flush in flight); the
// same load without a budget exceeds that bound, so the check can fail.
func TestMemoryBudgetBoundsMemTables(t *testing.T) {
	load := budgetLoad{stores: 48, rounds: 60}
	b, err := NewMemoryBudget(64<<20, nil)
	mustNoErr(t, err)
	budgeted := load.run(t, &PebbleOptions{Budget: b})
	target := uint64(pow2Below(b.MemTableShare() / int64(2*load.stores)))
	bound := uint64(b.MemTableShare()) + uint64(load.stores)*target
	free := load.run(t, nil)
	t.Logf("peak memtable bytes: %d MiB with the budget (bound %d MiB), %d MiB without", budgeted>>20, bound>>20, free>>20)
	if budgeted > bound {
		t.Errorf("with a 64 MiB budget the memtables reached %d bytes, above the bound %d", budgeted, bound)
	}
	if free <= bound {
		t.Errorf("without a budget the memtables reached only %d bytes, within the bound %d: the load does not test the budget", free, bound)
	}
	if b.stores != 0 || b.cache != nil {
		t.Errorf("after every store closed the budget still counts %d stores (cache %v)", b.stores, b.cache)
	}
}

func TestMemoryBudgetSizing(t *testing.T) {
	b, err := NewMemoryBudget(256<<20, nil) // memtable share 128 MiB
	mustNoErr(t, err)
	var sizes []uint64
	for range 144 {
		c, size := b.join()
		if c == nil {
			t.Fatal("join returned no cache")
		}
		sizes = append(sizes, size)
	}
	// Sized for at least budgetSizingStores stores, then for those open.
	if sizes[0] != 4<<20 || sizes[31] != 2<<20 || sizes[143] != 1<<20 {
		t.Errorf("memtable sizes of stores 1, 32, 144 = %d, %d, %d; want 4 MiB, 2 MiB, 1 MiB", sizes[0], sizes[31], sizes[143])
	}
	// 128 MiB / (2 × 144) is 455 KiB: a target of 256 KiB, flushed at half.
	if got := b.flushAt(1 << 20); got != 128<<10 {
		t.Errorf("flushAt(1 MiB) with 144 stores = %d, want %d", got, 128<<10)
	}
	if got := b.flushAt(256 << 10); got != 0 {
		t.Errorf("flushAt(256 KiB) = %d, want 0: Pebble's own rotation keeps it within the target", got)
	}
	for range 144 {
		b.leave()
	}
	if b.cache != nil {
		t.Error("the budget kept its cache after the last store left")
	}
}

func TestMemoryBudgetWarnsWhenTooSmallForTheStores(t *testing.T) {
	var log bytes.Buffer
	b, err := NewMemoryBudget(MinStoreMemoryBytes, slog.New(slog.NewTextHandler(&log, nil)))
	mustNoErr(t, err)
	for range 32 { // 32 × 512 KiB fill the 16 MiB share exactly
		b.join()
	}
	if log.Len() != 0 {
		t.Fatalf("warned with 32 stores: %s", log.String())
	}
	b.join()
	if !strings.Contains(log.String(), "memory budget too small") || !strings.Contains(log.String(), "stores=33") {
		t.Fatalf("no warning with 33 stores: %q", log.String())
	}
	for range 33 {
		b.leave()
	}
}

func TestMemoryBudgetErrors(t *testing.T) {
	if _, err := NewMemoryBudget(MinStoreMemoryBytes-1, nil); err == nil || !strings.Contains(err.Error(), "below the minimum of 33554432 (32 MiB)") {
		t.Fatalf("err = %v", err)
	}
	b, err := NewMemoryBudget(MinStoreMemoryBytes, nil)
	mustNoErr(t, err)
	err = (&PebbleOptions{Budget: b, MemTableSize: 8 << 20}).Validate()
	if err == nil || !strings.Contains(err.Error(), "leave Cache and MemTableSize unset") {
		t.Fatalf("budget with a memtable size: %v", err)
	}
	s := NewPebbleKeyValue("kv", &PebbleOptions{Budget: b, Cache: processCache()})
	if err := s.Init(&StoreContext{Dir: t.TempDir()}); err == nil {
		s.Close()
		t.Fatal("a store opened with both a budget and a cache")
	}
	if b.stores != 0 {
		t.Fatalf("a store that failed to open still counts: %d", b.stores)
	}
}

// TestNoBudgetKeepsTheDefaults checks that a store without a budget gets
// the process cache and DefaultMemTableSize, and flushes by itself only
// as before (never for a budget).
func TestNoBudgetKeepsTheDefaults(t *testing.T) {
	po := PebbleOptions{}.pebbleOptions(nil)
	if po.Cache != processCache() || po.MemTableSize != DefaultMemTableSize {
		t.Fatalf("without a budget: cache %p (process %p), memtable size %d", po.Cache, processCache(), po.MemTableSize)
	}
	s, _ := openStore(t, NewPebbleKeyValue("kv", nil))
	if e := s.(*kvStore).eng.(*pebbleEngine); e.mem.b != nil || e.mem.add(e.db.NewBatch()) {
		t.Fatal("a store without a budget counts for one")
	}
}
