package serde

import (
	"flag"
	"fmt"
	"syscall"
	"testing"
	"time"
)

var cpuTable = flag.Bool("cputable", false, "print process CPU time per operation of every benchmark (robust on a loaded machine)")

// processCPU is the CPU time of this process (all threads, so GC work is
// counted), which other processes' load does not inflate the way it does
// wall-clock ns/op.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCPUTable prints the README table: for each benchmark the minimum over
// interleaved rounds of process CPU time per operation. Run with
// go test ./bench/serde -run TestCPUTable -cputable -v.
func TestCPUTable(t *testing.T) {
	if !*cpuTable {
		t.Skip("run with -cputable")
	}
	printCPUTable(codecs(), "msgpackv5", "msgpack/v5", "tinylibmsgp", "tinylib/msgp")
}

// TestJSONCPUTable prints the README's JSON table the same way: go test
// ./bench/serde -run TestJSONCPUTable -cputable -v.
func TestJSONCPUTable(t *testing.T) {
	if !*cpuTable {
		t.Skip("run with -cputable")
	}
	printCPUTable(jsonCodecs(), "encodingjson", "encoding/json", "goccy", "goccy/go-json")
}

// printCPUTable measures every variant in every mode and prints the table
// with the speed-up against two of them, peer1 and peer2 (variant names,
// with the column labels label1 and label2).
func printCPUTable(variants []codec, peer1, label1, peer2, label2 string) {
	modes := []struct {
		name           string
		encode, decode bool
	}{{"RoundTrip", true, true}, {"Encode", true, false}, {"Decode", false, true}}
	const rounds, n = 7, 200000
	best := map[string]time.Duration{}
	allocs := map[string]int64{}
	for r := 0; r < rounds; r++ {
		for _, m := range modes {
			for _, v := range variants {
				key := m.name + "/" + v.name
				var cpu time.Duration
				res := testing.Benchmark(func(b *testing.B) {
					b.N = n
					start := processCPU()
					v.bench(b, m.encode, m.decode)
					cpu = processCPU() - start
				})
				per := cpu / time.Duration(res.N)
				if d, ok := best[key]; !ok || per < d {
					best[key] = per
				}
				allocs[key] = res.AllocsPerOp()
			}
		}
	}
	fmt.Printf("| benchmark | CPU ns/op | allocs/op | vs %s | vs %s |\n", label1, label2)
	fmt.Println("|---|---|---|---|---|")
	for _, m := range modes {
		for _, v := range variants {
			key := m.name + "/" + v.name
			fmt.Printf("| %s | %d | %d | %.1f× | %.2f× |\n", key, best[key].Nanoseconds(), allocs[key],
				float64(best[m.name+"/"+peer1])/float64(best[key]), float64(best[m.name+"/"+peer2])/float64(best[key]))
		}
	}
}
