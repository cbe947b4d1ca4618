package serde

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var benchTable = flag.String("benchtable", "", "print the README table from this file of `go test -bench` output")

// families are the benchmarks of each format, by name prefix, with the
// variants to compare streamgen against.
var families = []struct {
	title, prefix string
	peers         []string
}{
	{"msgpack", "", []string{"msgpackv5", "tinylibmsgp"}},
	{"JSON", "JSON", []string{"encodingjson", "goccy"}},
	{"Avro", "Avro", []string{"hamba"}},
	{"Protobuf", "Proto", []string{"protobufgo"}},
}

// benchRow is the median of every unit of one benchmark over its -count
// repetitions.
type benchRow map[string]float64

// TestBenchTable prints the README's table from one `go test -bench` run
// saved to a file (go test ./bench/serde -run TestBenchTable -benchtable
// FILE -v): per benchmark the medians of its repetitions, and the speed-up
// of each variant over the peers in CPU time per operation.
func TestBenchTable(t *testing.T) {
	if *benchTable == "" {
		t.Skip("run with -benchtable FILE")
	}
	rows, err := readBench(*benchTable)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("| benchmark | ns/op | cpu-ns/op | B/op | allocs/op | speed-up (CPU) |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, f := range families {
		for _, mode := range []string{"RoundTrip", "Encode", "Decode"} {
			base := f.prefix + mode + "/"
			for _, v := range append([]string{"streamgen"}, f.peers...) {
				r, ok := rows[base+v]
				if !ok {
					continue
				}
				var vs []string
				for _, p := range f.peers {
					if p != v && rows[base+p] != nil {
						vs = append(vs, fmt.Sprintf("%.2f× vs %s", rows[base+p]["cpu-ns/op"]/r["cpu-ns/op"], p))
					}
				}
				fmt.Printf("| %s%s | %.0f | %.0f | %.0f | %.0f | %s |\n", base, v, r["ns/op"], r["cpu-ns/op"],
					r["B/op"], r["allocs/op"], strings.Join(vs, ", "))
			}
		}
	}
}

// readBench reads go test -bench output: lines of a name, an iteration
// count and value-unit pairs; the -N GOMAXPROCS suffix is dropped.
func readBench(path string) (map[string]benchRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	samples := map[string]map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if samples[name] == nil {
			samples[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			if v, err := strconv.ParseFloat(fields[i], 64); err == nil {
				samples[name][fields[i+1]] = append(samples[name][fields[i+1]], v)
			}
		}
	}
	rows := map[string]benchRow{}
	for name, units := range samples {
		rows[name] = benchRow{}
		for unit, vs := range units {
			slices.Sort(vs)
			rows[name][unit] = vs[len(vs)/2]
		}
	}
	return rows, sc.Err()
}
