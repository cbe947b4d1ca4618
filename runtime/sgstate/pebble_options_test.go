package sgstate

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func TestPebbleOptionsDefaultsAndValidate(t *testing.T) {
	o := (&PebbleOptions{}).EnsureDefaults()
	if o.MemTableSize != DefaultMemTableSize || o.BloomBitsPerKey != DefaultBloomBitsPerKey {
		t.Fatalf("defaults = %+v", o)
	}
	err := (&PebbleOptions{MemTableSize: 10, BloomBitsPerKey: 100}).Validate()
	if err == nil || !strings.Contains(err.Error(), "memtable size 10") || !strings.Contains(err.Error(), "bloom bits per key 100") {
		t.Fatalf("validate should report both problems: %v", err)
	}
	po := PebbleOptions{}.pebbleOptions(nil)
	if po.Cache != processCache() || po.FormatMajorVersion != pebble.FormatNewest || po.Levels[0].FilterPolicy == nil || po.Logger == nil {
		t.Fatalf("pebble options not filled: cache=%v format=%v", po.Cache, po.FormatMajorVersion)
	}
	// Pass-through settings win over ours; ours fill the rest.
	own := &pebble.Options{MemTableSize: 8 << 20, CacheSize: 1 << 20}
	po = PebbleOptions{Pebble: own}.pebbleOptions(nil)
	if po.MemTableSize != 8<<20 || po.Cache != nil || po.CacheSize != 1<<20 || po == own {
		t.Fatalf("pass-through: memtable=%d cache=%v size=%d", po.MemTableSize, po.Cache, po.CacheSize)
	}
}

func TestPebbleStoreWithPassThroughOptions(t *testing.T) {
	s := NewPebbleKeyValue("kv", &PebbleOptions{Sync: true, BloomBitsPerKey: -1, Pebble: &pebble.Options{MemTableSize: 2 << 20}})
	initStore(t, s, filepath.Join(t.TempDir(), "kv"), nil)
	defer s.Close()
	mustNoErr(t, s.Put([]byte("a"), []byte("b")))
	mustNoErr(t, s.(Transactional).Commit(map[string]int64{"t/0": 1}))
	if v, _, _ := s.Get([]byte("a")); string(v) != "b" {
		t.Fatalf("get = %q", v)
	}
}

func TestStoreOptionErrors(t *testing.T) {
	w := NewMemoryWindow("w", WindowOptions{})
	if err := w.Init(nil); err == nil || !strings.Contains(err.Error(), `window store "w": retention 0 ms, want > 0`) {
		t.Fatalf("err = %v", err)
	}
	if got := NewMemoryWindow("w", WindowOptions{Retention: 1}).ObservedStreamTime(); got != math.MinInt64 {
		t.Fatalf("observed before open = %d", got)
	}
	p := NewPebbleKeyValue("p", nil)
	if err := p.Init(&StoreContext{}); err == nil || !strings.Contains(err.Error(), "needs StoreContext.Dir") {
		t.Fatalf("err = %v", err)
	}
	if err := p.Flush(); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("flush before init = %v", err)
	}
}
