package sgstate_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamgen/streamgen/runtime/sgstate"
)

// A Pebble key-value store on disk, used the way the engine uses it: writes
// are staged until the Kafka transaction commits, then committed together
// with the changelog offset they correspond to. An aborted transaction
// leaves no trace, and a reopened store knows where to resume restoring.
func Example() {
	dir, err := os.MkdirTemp("", "sgstate-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := &sgstate.StoreContext{Dir: filepath.Join(dir, "counts")}

	kv := sgstate.NewPebbleKeyValue("counts", nil)
	if err := kv.Init(ctx); err != nil {
		fmt.Println(err)
		return
	}
	tx := kv.(sgstate.Transactional)
	_ = kv.Put([]byte("alice"), []byte("1"))
	// The Kafka transaction committed: the write becomes durable together
	// with the next changelog offset to restore from.
	_ = tx.Commit(map[string]int64{"app-counts-changelog/0": 1})

	_ = kv.Put([]byte("bob"), []byte("1"))
	_ = tx.Abort() // the Kafka transaction aborted: bob's write is dropped
	_ = kv.Close()

	// A restart: the store reopens with its committed state and checkpoint.
	kv = sgstate.NewPebbleKeyValue("counts", nil)
	if err := kv.Init(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer kv.Close()
	for _, k := range []string{"alice", "bob"} {
		v, ok, _ := kv.Get([]byte(k))
		fmt.Printf("%s: %q found=%v\n", k, v, ok)
	}
	cp, _ := kv.(sgstate.Transactional).Checkpoint()
	fmt.Println("restore from:", cp)
	// Output:
	// alice: "1" found=true
	// bob: "" found=false
	// restore from: map[app-counts-changelog/0:1]
}
