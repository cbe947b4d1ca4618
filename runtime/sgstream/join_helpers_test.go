package sgstream

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// Helpers of the join tests. Values are *jv, a nullable string like a
// generated record type, so a missing join side reaches the joiner as nil
// and prints as "null", which makes the expected outputs read exactly like
// Kafka Streams' tests (MockValueJoiner.TOSTRING_JOINER: "left+right").

type jv struct{ s string }

func (v *jv) IsNil() bool { return v == nil }

func (v *jv) String() string {
	if v == nil {
		return "null"
	}
	return v.s
}

type jvSerde struct{}

func (jvSerde) Append(dst []byte, v *jv) ([]byte, error) {
	if v == nil {
		return dst, fmt.Errorf("nil value")
	}
	return append(dst, v.s...), nil
}

func (jvSerde) Decode(b []byte) (*jv, error) { return &jv{string(b)}, nil }

var _ serdes.Serde[*jv] = jvSerde{}

// joinStr is TOSTRING_JOINER.
var joinStr = ValueJoiner(func(_ string, l, r *jv) *jv { return &jv{l.String() + "+" + r.String()} })

func jvSrc(topic string) SourceConfig[string, *jv] {
	return SourceConfig[string, *jv]{Topic: topic, Key: serdes.String, Value: jvSerde{}}
}

func jvSink() SinkConfig[string, *jv] {
	return SinkConfig[string, *jv]{Key: serdes.String, Value: jvSerde{}}
}

var jvJoinSerdes = StreamJoinSerdes[string, *jv, *jv]{Key: serdes.String, Left: jvSerde{}, Right: jvSerde{}}

// jdrv is a testDriver over a topology built in a join test.
type jdrv struct {
	t *testing.T
	*testDriver
}

func newJDrv(t *testing.T, build func(b *Builder), opts ...DriverOpt) *jdrv {
	t.Helper()
	return &jdrv{t, buildDriver(t, "app", build, opts...)}
}

// jNull marks a null key or value in pipe; it is the tables' nullStr.
const jNull = nullStr

func jBytes(s string) []byte { return strBytes(s) }

func (d *jdrv) pipe(topic, key, value string, ts int64) {
	d.t.Helper()
	pipeStrings(d.t, d.testDriver, topic, key, value, ts)
}

// out returns and clears topic's output as "key:value@ts" ("null" for null).
func (d *jdrv) out(topic string) []string {
	return formatOutput(d.Output(topic), ":", nil)
}

// expectOut checks and clears the output of topic "out".
func (d *jdrv) expectOut(want ...string) {
	d.t.Helper()
	got := d.out("out")
	if !slices.Equal(got, want) {
		d.t.Fatalf("output:\n got  %q\n want %q", got, want)
	}
}

func (d *jdrv) dropped() int64 {
	var n int64
	for _, tk := range d.Tasks() {
		n += tk.Stats().Dropped
	}
	return n
}

// joinTestWindowStores makes the join's window stores test fakes with
// Kafka's in-memory window store semantics (retainDuplicates), until the
// built-in window stores land.
func joinTestWindowStores() WindowStoreOpt {
	return windowStoreOpt(func(s *StoreSpec) {
		if s.Kind != WindowStore {
			return
		}
		name, retention := s.Name, s.Retention.Milliseconds()
		s.Custom = func() sgstate.Store { return newDupWindowStore(name, retention) }
	})
}

// dupWindowStore is InMemoryWindowStore with retainDuplicates: observed
// stream time is the largest start ever put, a put at or below observed -
// retention is dropped, fetches see only starts >= observed - retention +
// 1, ascending by start, duplicates in insertion order.
type dupWindowStore struct {
	name      string
	retention int64
	observed  int64
	seq       int
	entries   map[string][]dupEntry
}

type dupEntry struct {
	start int64
	seq   int
	value []byte
}

func newDupWindowStore(name string, retention int64) *dupWindowStore {
	return &dupWindowStore{name: name, retention: retention, observed: math.MinInt64, entries: map[string][]dupEntry{}}
}

func (s *dupWindowStore) Name() string                     { return s.name }
func (s *dupWindowStore) Init(*sgstate.StoreContext) error { return nil }
func (s *dupWindowStore) Flush() error                     { return nil }
func (s *dupWindowStore) Close() error                     { return nil }
func (s *dupWindowStore) ObservedStreamTime() int64        { return s.observed }

func (s *dupWindowStore) minLive() int64 {
	if s.observed == math.MinInt64 {
		return math.MinInt64
	}
	return s.observed - s.retention + 1
}

func (s *dupWindowStore) Put(key []byte, start int64, value []byte) error {
	s.observed = max(s.observed, start)
	if start < s.minLive() || value == nil {
		return nil
	}
	s.seq++
	s.entries[string(key)] = append(s.entries[string(key)], dupEntry{start, s.seq, append([]byte(nil), value...)})
	return nil
}

func (s *dupWindowStore) sorted(key string, from, to int64) []dupEntry {
	var out []dupEntry
	from = max(from, s.minLive())
	for _, e := range s.entries[key] {
		if e.start >= from && e.start <= to {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].start != out[j].start {
			return out[i].start < out[j].start
		}
		return out[i].seq < out[j].seq
	})
	return out
}

func (s *dupWindowStore) Fetch(key []byte, from, to int64, fn func(int64, []byte) error) error {
	for _, e := range s.sorted(string(key), from, to) {
		if err := fn(e.start, e.value); err != nil {
			return err
		}
	}
	return nil
}

func (s *dupWindowStore) BackwardFetch(key []byte, from, to int64, fn func(int64, []byte) error) error {
	es := s.sorted(string(key), from, to)
	for i := len(es) - 1; i >= 0; i-- {
		if err := fn(es[i].start, es[i].value); err != nil {
			return err
		}
	}
	return nil
}

func (s *dupWindowStore) FetchAll(from, to int64, fn func([]byte, int64, []byte) error) error {
	keys := make([]string, 0, len(s.entries))
	for k := range s.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type kv struct {
		key string
		e   dupEntry
	}
	var all []kv
	for _, k := range keys {
		for _, e := range s.sorted(k, from, to) {
			all = append(all, kv{k, e})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].e.start < all[j].e.start })
	for _, x := range all {
		if err := fn([]byte(x.key), x.e.start, x.e.value); err != nil {
			return err
		}
	}
	return nil
}

var _ sgstate.WindowStore = (*dupWindowStore)(nil)
