package sgstate

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"
)

// tsValue is a value in Kafka Streams' ValueAndTimestamp layout.
func tsValue(ts int64, raw string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(ts)), raw...)
}

// TestTimestampedChangelogLayout checks that a store of timestamped values
// logs what Kafka Streams' ChangeLoggingTimestampedKeyValueBytesStore and
// ChangeLoggingTimestampedWindowBytesStore log (the raw value, its timestamp
// as the record's) and restores a changelog of that layout, as one a Java
// application wrote, to the same stored bytes: the ground a takeover from
// Kafka Streams stands on.
func TestTimestampedChangelogLayout(t *testing.T) {
	eachVariant(t, func(t *testing.T, v variant) {
		stores := map[string]func() Store{
			"kv":     func() Store { return v.kv("counts") },
			"window": func() Store { return v.window("windowed", WindowOptions{Retention: 1000, WindowSize: 100}) },
		}
		for kind, mk := range stores {
			t.Run(kind, func(t *testing.T) {
				log := &recLog{}
				s := mk()
				mustNoErr(t, s.Init(&StoreContext{Dir: filepath.Join(t.TempDir(), "a"), Changelog: log,
					TimestampedValues: true, RecordTimestamp: func() int64 { return 999 }}))
				defer s.Close()
				put(t, s, "k", tsValue(42, "v1"))
				put(t, s, "k", nil)
				put(t, s, "j", tsValue(77, "v2"))
				if len(log.recs) != 3 {
					t.Fatalf("%d changelog records, want 3", len(log.recs))
				}
				want := []ChangelogRecord{{Value: []byte("v1"), Timestamp: 42}, {Value: nil, Timestamp: 999}, {Value: []byte("v2"), Timestamp: 77}}
				for i, w := range want {
					if g := log.recs[i]; !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) || g.Timestamp != w.Timestamp {
						t.Errorf("changelog record %d: value %q at %d, want %q at %d", i, g.Value, g.Timestamp, w.Value, w.Timestamp)
					}
				}
				r := mk()
				mustNoErr(t, r.Init(&StoreContext{Dir: filepath.Join(t.TempDir(), "b"), TimestampedValues: true}))
				defer r.Close()
				mustNoErr(t, r.(Restorer).RestoreBatch(log.recs))
				if g := get(t, r, "j"); !bytes.Equal(g, tsValue(77, "v2")) {
					t.Errorf("restored j = %x, want %x", g, tsValue(77, "v2"))
				}
				if g := get(t, r, "k"); g != nil {
					t.Errorf("restored k = %x, want deleted", g)
				}
			})
		}
	})
}

// put writes key at window start 0 (window stores) or plainly.
func put(t *testing.T, s Store, key string, value []byte) {
	t.Helper()
	switch st := s.(type) {
	case KeyValueStore:
		mustNoErr(t, st.Put([]byte(key), value))
	case WindowStore:
		mustNoErr(t, st.Put([]byte(key), 0, value))
	default:
		t.Fatalf("store %T", s)
	}
}

func get(t *testing.T, s Store, key string) []byte {
	t.Helper()
	switch st := s.(type) {
	case KeyValueStore:
		v, _, err := st.Get([]byte(key))
		mustNoErr(t, err)
		return v
	case WindowStore:
		var v []byte
		mustNoErr(t, st.Fetch([]byte(key), 0, 0, func(_ int64, value []byte) error {
			v = cloneBytes(value)
			return nil
		}))
		return v
	}
	t.Fatalf("store %T", s)
	return nil
}
