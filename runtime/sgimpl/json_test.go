package sgimpl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// TestJSONCollections checks the JSON collection appenders against
// encoding/json (maps in sorted key order), and that they allocate nothing.
func TestJSONCollections(t *testing.T) {
	m := map[string]int64{"b": 2, "a": 1, "é\n": 3, "<": 4}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	if got := AppendJSONMap(nil, m, serdes.AppendJSONInt64); string(got) != strings.TrimSpace(want.String()) {
		t.Errorf("AppendJSONMap = %s, want %s", got, want.String())
	}
	if got := AppendJSONList(nil, []string{"x", "y"}, serdes.AppendJSONString); string(got) != `["x","y"]` {
		t.Errorf("AppendJSONList = %s", got)
	}
	if got := AppendJSONList(nil, []string(nil), serdes.AppendJSONString); string(got) != `[]` {
		t.Errorf("AppendJSONList(nil) = %s", got)
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { _ = AppendJSONMap(buf[:0], m, serdes.AppendJSONInt64) }); n != 0 {
		t.Errorf("AppendJSONMap: %v allocs, want 0", n)
	}
}
