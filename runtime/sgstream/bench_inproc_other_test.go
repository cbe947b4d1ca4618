//go:build !unix

package sgstream_test

import "time"

// cpuTime is unknown here; the benchmarks then report records/s only.
func cpuTime() time.Duration { return 0 }
