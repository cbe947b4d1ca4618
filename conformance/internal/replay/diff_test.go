package replay

import (
	"strings"
	"testing"
)

func rec(topic, key string, value string, ts int64) Record {
	return Record{Topic: topic, Key: []byte(`"` + key + `"`), Value: []byte(value), Timestamp: ts}
}

func TestDiffSequence(t *testing.T) {
	want := []Record{rec("a", "k", "1", 1), rec("b", "k", "2", 1), rec("a", "k", "3", 2)}
	// Cross-topic interleaving does not matter, order within a topic does.
	same := []Record{rec("b", "k", "2", 1), rec("a", "k", "1", 1), rec("a", "k", "3", 2)}
	if d := Diff(want, same, false); d != "" {
		t.Errorf("interleaving across topics reported: %s", d)
	}
	swapped := []Record{rec("a", "k", "3", 2), rec("b", "k", "2", 1), rec("a", "k", "1", 1)}
	if d := Diff(want, swapped, false); !strings.Contains(d, "output #1 differs") {
		t.Errorf("swapped order within a topic: got %q", d)
	}
	if d := Diff(want, swapped, true); d != "" {
		t.Errorf("multiset mode reported a reordering: %s", d)
	}
	if d := Diff(want, want[:2], false); !strings.Contains(d, "missing") {
		t.Errorf("missing record: got %q", d)
	}
	if d := Diff(want[:2], want, false); !strings.Contains(d, "extra output #2") {
		t.Errorf("extra record: got %q", d)
	}
	wrongTS := []Record{rec("a", "k", "1", 1), rec("b", "k", "2", 1), rec("a", "k", "3", 3)}
	if d := Diff(want, wrongTS, false); !strings.Contains(d, `"timestamp":3`) {
		t.Errorf("timestamp difference: got %q", d)
	}
}

func TestDiffMultiset(t *testing.T) {
	want := []Record{rec("a", "k", "1", 1), rec("a", "k", "1", 1), rec("a", "k", "2", 1)}
	got := []Record{rec("a", "k", "2", 1), rec("a", "k", "1", 1)}
	d := Diff(want, got, true)
	if !strings.Contains(d, "1 missing, 0 extra") {
		t.Errorf("duplicate counted wrongly: %q", d)
	}
	if d := Diff(nil, nil, true); d != "" {
		t.Errorf("empty outputs differ: %q", d)
	}
}
