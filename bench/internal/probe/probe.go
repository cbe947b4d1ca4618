// Package probe is how a benchmark application tells the harness what it
// did, the way Kafka Streams' SimpleBenchmark counts down a latch: the
// scenario's peek or foreach calls Hit for every input record, and probe
// prints to stdout
//
//	BENCH first <unix µs>         at the first record
//	BENCH progress <n> <unix µs>  every tenth of the expected count
//	BENCH done <n> <unix µs>      when the expected count is reached
//
// The expected count comes from STREAMGEN_BENCH_EXPECT. The Kafka Streams
// and Faust programs print the same lines, so the harness measures every
// system the same way.
package probe

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

var (
	n      atomic.Int64
	expect = func() int64 {
		v, _ := strconv.ParseInt(os.Getenv("STREAMGEN_BENCH_EXPECT"), 10, 64)
		return v
	}()
	step = max(expect/10, 1)
)

// Hit counts one processed record.
func Hit() {
	c := n.Add(1)
	switch {
	case c == 1:
		fmt.Printf("BENCH first %d\n", time.Now().UnixMicro())
		if c == expect {
			fmt.Printf("BENCH done %d %d\n", c, time.Now().UnixMicro())
		}
	case c == expect:
		fmt.Printf("BENCH done %d %d\n", c, time.Now().UnixMicro())
	case c%step == 0 && c < expect:
		fmt.Printf("BENCH progress %d %d\n", c, time.Now().UnixMicro())
	}
}
