// Command storemem measures what a state-store memory budget
// (--store-memory-bytes) does to an instance with many stores: it opens
// -stores Pebble key-value stores in a temporary directory, runs a
// count-like load through the store API (read a key, write it back with a
// 100-byte value; every store commits after every -batch records, as
// tasks do), and prints one line with the peak RSS (VmHWM) and the rate.
// -shared opens them in one sgstate.SharedDB, as the engine opens the
// stores with a changelog.
// One configuration per process, so that the peak RSS is its own; run it
// with different -budget values, interleaved, to compare. go_sys_mib is the
// Go runtime's memory (Pebble's cache and memtables are outside it).
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstate"
)

func main() {
	stores := flag.Int("stores", 144, "stores to open (48 partitions × 3 stateful operators)")
	keys := flag.Int("keys", 20000, "records per store")
	distinct := flag.Int("distinct", 10000, "distinct keys per store")
	batch := flag.Int("batch", 1000, "records per store between commits")
	budget := flag.Int64("budget", 0, "store memory budget in bytes, 0 for none")
	shared := flag.Bool("shared", false, "open the stores in one sgstate.SharedDB, as the engine opens changelogged stores")
	flag.Parse()
	if err := run(*stores, *keys, *distinct, *batch, *budget, *shared); err != nil {
		fmt.Fprintln(os.Stderr, "storemem:", err)
		os.Exit(1)
	}
}

func run(stores, keys, distinct, batch int, budget int64, shared bool) error {
	dir, err := os.MkdirTemp("", "storemem")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := &sgstate.PebbleOptions{}
	if budget > 0 {
		if opts.Budget, err = sgstate.NewMemoryBudget(budget, nil); err != nil {
			return err
		}
	}
	var db *sgstate.SharedDB
	if shared {
		if db, err = sgstate.OpenSharedDB(dir, *opts, nil); err != nil {
			return err
		}
	}
	kvs, err := open(dir, stores, opts, db)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := load(kvs, keys, distinct, batch); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	for _, s := range kvs {
		if err := s.Close(); err != nil {
			return err
		}
	}
	if db != nil {
		if err := db.Close(); err != nil {
			return err
		}
	}
	n := float64(stores * keys)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("budget_mib=%d shared=%t stores=%d records=%d batch=%d seconds=%.1f records_per_s=%.0f vmhwm_mib=%d go_sys_mib=%d\n",
		budget>>20, shared, stores, int(n), batch, secs, n/secs, vmHWM()>>10, ms.Sys>>20)
	return nil
}

func open(dir string, n int, opts *sgstate.PebbleOptions, db *sgstate.SharedDB) ([]sgstate.KeyValueStore, error) {
	kvs := make([]sgstate.KeyValueStore, n)
	for i := range kvs {
		kvs[i] = sgstate.NewPebbleKeyValue("count", opts)
		sdir := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return nil, err
		}
		if err := kvs[i].Init(&sgstate.StoreContext{Dir: sdir, Shared: db}); err != nil {
			return nil, err
		}
	}
	return kvs, nil
}

// load runs the records round-robin over the stores, batch at a time.
func load(kvs []sgstate.KeyValueStore, keys, distinct, batch int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	val := bytes.Repeat([]byte{'v'}, 100)
	key := make([]byte, 16)
	for done := 0; done < keys; done += batch {
		for i, s := range kvs {
			for range min(batch, keys-done) {
				binary.BigEndian.PutUint64(key, uint64(rng.IntN(distinct)))
				if _, _, err := s.Get(key); err != nil {
					return err
				}
				if err := s.Put(key, val); err != nil {
					return err
				}
			}
			cp := map[string]int64{"count-changelog/0": int64(done*len(kvs) + i)}
			if err := s.(sgstate.Transactional).Commit(cp); err != nil {
				return err
			}
		}
	}
	return nil
}

// vmHWM is the process's peak resident set in KiB, from /proc/self/status.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return -1
}
