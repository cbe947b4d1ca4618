package sgpartition_test

import (
	"fmt"

	"github.com/streamgen/streamgen/runtime/sgpartition"
)

// The partition of a record key is the one Kafka's Java producer (and
// franz-go's Kafka-compatible partitioner) picks: murmur2 of the
// serialized key, made positive, modulo the partition count. Stores and
// interactive queries rely on it to find the task that owns a key.
func ExamplePartition() {
	for _, key := range []string{"alice", "bob", "carol"} {
		fmt.Printf("%s -> partition %d of 4\n", key, sgpartition.Partition([]byte(key), 4))
	}
	// Output:
	// alice -> partition 1 of 4
	// bob -> partition 2 of 4
	// carol -> partition 2 of 4
}
