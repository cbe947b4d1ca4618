package sgstream

import "fmt"

// The names of the policies are the spec's (on_error and
// invalid_timestamp), so a `run` flag that overrides a spec setting takes
// the same words.

var policyNames = [...]string{PolicyFail: "fail", PolicyContinue: "continue", PolicyDeadLetter: "dead_letter"}

var timestampPolicyNames = [...]string{TimestampFail: "fail", TimestampSkip: "skip",
	TimestampPartitionTime: "partition_time", TimestampDeadLetter: "dead_letter"}

// String is the spec's name of the policy.
func (p Policy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy reads a policy by its spec name: fail, continue or
// dead_letter.
func ParsePolicy(s string) (Policy, error) {
	for p, name := range policyNames {
		if s == name {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("streamgen: unknown error policy %q: want fail, continue or dead_letter", s)
}

// String is the spec's name of the policy.
func (p TimestampPolicy) String() string {
	if p >= 0 && int(p) < len(timestampPolicyNames) {
		return timestampPolicyNames[p]
	}
	return fmt.Sprintf("TimestampPolicy(%d)", int(p))
}

// ParseTimestampPolicy reads an invalid-timestamp policy by its spec name:
// fail, skip, partition_time or dead_letter.
func ParseTimestampPolicy(s string) (TimestampPolicy, error) {
	for p, name := range timestampPolicyNames {
		if s == name {
			return TimestampPolicy(p), nil
		}
	}
	return 0, fmt.Errorf("streamgen: unknown invalid-timestamp policy %q: want fail, skip, partition_time or dead_letter", s)
}

// UsesDeadLetter reports whether any of the policies writes to the
// dead-letter topic.
func UsesDeadLetter(deserialization, processing Policy, invalidTime TimestampPolicy) bool {
	return deserialization == PolicyDeadLetter || processing == PolicyDeadLetter || invalidTime == TimestampDeadLetter
}
