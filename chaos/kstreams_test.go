package chaos

import (
	"strings"
	"testing"
	"time"
)

// TestPhaseTable checks that phases are matched by position and that the
// ratio is streamgen's gap over Kafka Streams'.
func TestPhaseTable(t *testing.T) {
	ours := []Phase{{Name: "rolling restart", Gap: 2 * time.Second, Restored: 0, Settled: time.Second},
		{Name: "scale 3 to 5", Gap: 3 * time.Second}}
	theirs := []Phase{{Name: "rolling restart", Gap: 8 * time.Second, Restored: 120, Scratch: 2, Settled: 40 * time.Second}}
	var b strings.Builder
	PhaseTable(&b, ours, theirs)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one phase (the one both ran), got:\n%s", b.String())
	}
	for _, want := range []string{"rolling restart", "2s / 8s", "0.25×", "0 / 120", "0 / 2", "1s / 40s"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("phase line lacks %q: %s", want, lines[1])
		}
	}
}
