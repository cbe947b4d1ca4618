package sgapp

import (
	"fmt"
	"strings"

	"github.com/streamgen/streamgen/runtime/sgtest"
)

// summary says which records did not make it through and why, from the
// driver's task counters and the count of input lines replay skipped as
// malformed, or "" when every record did. Bad input is what the error
// policies skipped or dead-lettered; dropped records are those operators
// discarded, as Kafka Streams' dropped-records metric counts them.
func summary(s sgtest.Stats, malformed int64) string {
	var parts []string
	if malformed > 0 {
		parts = append(parts, records(malformed, "malformed input line")+" skipped")
	}
	if bad := s.Skipped + s.DeadLettered; bad > 0 {
		causes := counts(
			count{s.BadDeserialization, "deserialization error"},
			count{s.BadTimestamp, "invalid timestamp"},
			count{bad - s.BadDeserialization - s.BadTimestamp, "processing error"})
		fates := counts(count{s.Skipped, "skipped"}, count{s.DeadLettered, "dead-lettered"})
		parts = append(parts, fmt.Sprintf("%s (%s; %s)", records(bad, "bad record"), causes, fates))
	}
	if s.Dropped > 0 {
		reasons := counts(
			count{s.Late, "late for a closed window"},
			count{s.Dropped - s.Late, "by an operator (null key or value, or a record it cannot use)"})
		parts = append(parts, fmt.Sprintf("%s dropped (%s)", records(s.Dropped, "record"), reasons))
	}
	return strings.Join(parts, "; ")
}

// records is "1 record" or "n records" (noun "record", "bad record" or
// "malformed input line").
func records(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// count is a number of records and what happened to them.
type count struct {
	n     int64
	label string
}

// counts renders the non-zero counts as "n label, ...".
func counts(cs ...count) string {
	var out []string
	for _, c := range cs {
		if c.n > 0 {
			out = append(out, fmt.Sprintf("%d %s", c.n, c.label))
		}
	}
	return strings.Join(out, ", ")
}
