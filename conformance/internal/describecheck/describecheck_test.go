package describecheck

import (
	"os"
	"strings"
	"testing"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFKInner: Kafka Streams' describe of the fk-inner twin (printed by
// `conformance/java/run.sh describe fk-inner`) equals the generated
// binary's, names aside; every mutation of ours is caught.
func TestFKInner(t *testing.T) {
	java, ours := read(t, "fk-inner.java.txt"), read(t, "fk-inner.streamgen.txt")
	if err := Compare(java, ours); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ old, new string }{
		{"(stores: [products-store])\n      --> fk-subscription-response-sink", "(stores: [])\n      --> fk-subscription-response-sink"},
		{"Sub-topology: 1", "Sub-topology: 1 for global store (will not generate tasks)"},
		{"(topic: out)", "(topic: other)"},
		{"      --> fk-result\n", "      --> none\n"},
	} {
		bad := strings.Replace(ours, m.old, m.new, 1)
		if bad == ours {
			t.Fatalf("mutation %q does not apply", m.old)
		}
		if err := Compare(java, bad); err == nil {
			t.Errorf("mutation %q -> %q not caught", m.old, m.new)
		}
	}
}

// TestFixedNameAmongGenerated: a node the Java twin names (the group_by's
// key selector "by-parity") is matched by its name even when a generated
// Java node with the same kind and parents (KSTREAM-MAP-…) comes first and
// our "by-parity" sorts before our node for it.
func TestFixedNameAmongGenerated(t *testing.T) {
	java, ours := read(t, "null-stream-topic.java.txt"), read(t, "null-stream-topic.streamgen.txt")
	if err := Compare(java, ours); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(ours, "--> by-parity-repartition-filter\n", "--> mapped.filter2\n", 1)
	if bad == ours {
		t.Fatal("mutation does not apply")
	}
	if err := Compare(java, bad); err == nil {
		t.Error("a key selector feeding the wrong node is not caught")
	}
}
