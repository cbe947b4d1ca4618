package engine

import "testing"

func TestPolicyNamesRoundTrip(t *testing.T) {
	for _, p := range []Policy{PolicyFail, PolicyContinue, PolicyDeadLetter} {
		if got, err := ParsePolicy(p.String()); err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p.String(), got, err)
		}
	}
	for _, p := range []TimestampPolicy{TimestampFail, TimestampSkip, TimestampPartitionTime, TimestampDeadLetter} {
		if got, err := ParseTimestampPolicy(p.String()); err != nil || got != p {
			t.Errorf("ParseTimestampPolicy(%q) = %v, %v", p.String(), got, err)
		}
	}
	if _, err := ParsePolicy("skip"); err == nil {
		t.Error(`ParsePolicy("skip") succeeded`)
	}
}
