package engine

import (
	"fmt"
	"strconv"
)

// Header is a Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// RawRecord is a record as it comes from or goes to Kafka.
type RawRecord struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte // nil = null key
	Value     []byte // nil = null value (tombstone)
	Timestamp int64
	Headers   []Header
	// Stable says Key and Value are never written or reused by whoever
	// made the record, so a decoder may keep them (the Kafka engine's come
	// from franz-go's fetches, whose buffers franz-go reuses only after
	// Record.Recycle, which the engine never calls).
	Stable bool
}

// TaskID names a task: a sub-topology and a partition.
type TaskID struct {
	Sub       int
	Partition int32
}

func (id TaskID) String() string { return strconv.Itoa(id.Sub) + "_" + strconv.Itoa(int(id.Partition)) }

// GlobalPartition is the partition of a global task's TaskID. A global
// sub-topology (one that materializes a GlobalKTable) runs as a single task
// that reads every partition of its topic, so its stores are full replicas,
// as Kafka Streams' GlobalStreamThread keeps them.
const GlobalPartition int32 = -1

// IsGlobal reports whether id is a global task.
func (id TaskID) IsGlobal() bool { return id.Partition == GlobalPartition }

// TaskStats are a task's counters.
type TaskStats struct {
	Processed    int64 // records that entered a source node
	Skipped      int64 // bad records skipped: continue policy, or invalid timestamp skipped
	DeadLettered int64 // bad records written to the dead-letter topic
	Dropped      int64 // records dropped by operators (late, null key …)
	Late         int64 // of Dropped: records for a window that had closed
	// Of Skipped and DeadLettered, by cause (the rest failed in
	// processing): key or value bytes that did not decode, and negative
	// extracted timestamps.
	BadDeserialization int64
	BadTimestamp       int64
}

// Policy is an error-handling policy.
type Policy int

const (
	PolicyFail Policy = iota
	PolicyContinue
	PolicyDeadLetter
)

// TimestampPolicy handles negative extracted timestamps.
type TimestampPolicy int

const (
	TimestampFail TimestampPolicy = iota
	TimestampSkip
	TimestampPartitionTime
	// TimestampDeadLetter writes the record to the dead-letter topic, as
	// the dead-letter policy does for records that fail to decode or
	// process: a negative timestamp is bad input like those.
	TimestampDeadLetter
)

// The names of the policies are the spec's (on_error and
// invalid_timestamp), so a `run` flag that overrides a spec setting takes
// the same words.

var policyNames = [...]string{PolicyFail: "fail", PolicyContinue: "continue", PolicyDeadLetter: "dead_letter"}

var timestampPolicyNames = [...]string{TimestampFail: "fail", TimestampSkip: "skip",
	TimestampPartitionTime: "partition_time", TimestampDeadLetter: "dead_letter"}

// String is the spec's name of the policy.
func (p Policy) String() string { return specName(policyNames[:], int(p), "Policy") }

// ParsePolicy reads a policy by its spec name: fail, continue or
// dead_letter.
func ParsePolicy(s string) (Policy, error) {
	return parseSpecName[Policy](policyNames[:], s, "error policy", "fail, continue or dead_letter")
}

// String is the spec's name of the policy.
func (p TimestampPolicy) String() string {
	return specName(timestampPolicyNames[:], int(p), "TimestampPolicy")
}

// ParseTimestampPolicy reads an invalid-timestamp policy by its spec name:
// fail, skip, partition_time or dead_letter.
func ParseTimestampPolicy(s string) (TimestampPolicy, error) {
	return parseSpecName[TimestampPolicy](timestampPolicyNames[:], s, "invalid-timestamp policy", "fail, skip, partition_time or dead_letter")
}

// specName is names[v], or typ(v) for a value without a name.
func specName(names []string, v int, typ string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// parseSpecName is the index of s in names, as a T.
func parseSpecName[T ~int](names []string, s, what, want string) (T, error) {
	for p, name := range names {
		if s == name {
			return T(p), nil
		}
	}
	return 0, fmt.Errorf("streamgen: unknown %s %q: want %s", what, s, want)
}

// UsesDeadLetter reports whether any of the policies writes to the
// dead-letter topic.
func UsesDeadLetter(deserialization, processing Policy, invalidTime TimestampPolicy) bool {
	return deserialization == PolicyDeadLetter || processing == PolicyDeadLetter || invalidTime == TimestampDeadLetter
}
