package typecheck

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTrim checks that a trim removes the entries unused for trimAge and
// keeps the others, that a hit keeps an old entry alive, and that a second
// trim within trimInterval does nothing.
func TestTrim(t *testing.T) {
	c := &cache{dir: t.TempDir()}
	c.put("results", "old", []int{1})
	c.put("results", "used", []int{2})
	c.put("exports", "fresh", []int{3})
	now := time.Now()
	long := now.Add(-trimAge - time.Hour)
	for _, p := range []string{"results/old", "results/used"} {
		if err := os.Chtimes(filepath.Join(c.dir, p), long, long); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(c.dir, trimStamp)) // put trimmed already; start over
	var v []int
	if !c.get("results", "used", &v) || len(v) != 1 || v[0] != 2 {
		t.Fatalf("get used = %v", v)
	}
	c.trim(now)
	exists := func(p string) bool { _, err := os.Stat(filepath.Join(c.dir, p)); return err == nil }
	if exists("results/old") {
		t.Error("an entry unused for longer than trimAge survived the trim")
	}
	if !exists("results/used") || !exists("exports/fresh") {
		t.Error("the trim removed an entry used lately")
	}
	// Within trimInterval of the last trim, nothing is removed.
	c.put("results", "old2", []int{4})
	if err := os.Chtimes(filepath.Join(c.dir, "results/old2"), long, long); err != nil {
		t.Fatal(err)
	}
	c.trim(now.Add(time.Hour))
	if !exists("results/old2") {
		t.Error("a second trim within trimInterval removed an entry")
	}
	c.trim(now.Add(trimInterval + time.Hour))
	if exists("results/old2") {
		t.Error("a trim after trimInterval kept an old entry")
	}
}
