package sgpartition_test

import (
	"math/rand/v2"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/twmb/franz-go/pkg/kgo"
)

// franz-go's StickyKeyPartitioner(nil) documents that it partitions keyed records exactly
// as Kafka's Java producer does. It is an independent implementation, so agreeing with it
// on many random keys backs the fixed Java vectors with breadth. (An external test package
// keeps franz-go out of sgpartition's own imports.)

// For keyed records the partitioner is a pure function, so one instance serves all calls.
var franz = kgo.StickyKeyPartitioner(nil).ForTopic("t")

func franzPartition(key []byte, n int) int {
	return franz.Partition(&kgo.Record{Key: key}, n)
}

func TestPartitionMatchesFranzGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := []int32{1, 2, 3, 6, 7, 16, 24, 97, 1000, 1 << 20, 2147483647}
	for i := range 20000 {
		key := make([]byte, rng.IntN(64))
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		n := counts[i%len(counts)]
		got := sgpartition.Partition(key, n)
		if want := franzPartition(key, int(n)); int(got) != want {
			t.Fatalf("Partition(%x, %d) = %d, franz-go says %d", key, n, got, want)
		}
	}
}

func FuzzPartitionMatchesFranzGo(f *testing.F) {
	f.Add([]byte(""), int32(3))
	f.Add([]byte("kafka"), int32(12))
	f.Add([]byte{0xff, 0xfe, 0xfd}, int32(100))
	f.Fuzz(func(t *testing.T, key []byte, n int32) {
		if n <= 0 {
			t.Skip()
		}
		if got, want := sgpartition.Partition(key, n), franzPartition(key, int(n)); int(got) != want {
			t.Fatalf("Partition(%x, %d) = %d, franz-go says %d", key, n, got, want)
		}
	})
}
