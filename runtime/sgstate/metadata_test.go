package sgstate

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestMetadataStagedCommittedPersisted runs the MetadataStore contract on
// every store kind and engine: staged writes are visible at once, Abort
// drops them, Commit keeps them, Pebble keeps committed ones across a
// reopen, and user keys never clash with the store's internal metadata.
func TestMetadataStagedCommittedPersisted(t *testing.T) {
	kinds := []struct {
		name string
		mk   func(v variant) Store
	}{
		{"kv", func(v variant) Store { return v.kv("s") }},
		{"window", func(v variant) Store { return v.window("s", WindowOptions{Retention: 100}) }},
		{"session", func(v variant) Store { return v.session("s", SessionOptions{Retention: 100}) }},
	}
	for _, v := range variants() {
		for _, k := range kinds {
			t.Run(v.name+"/"+k.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "s")
				s := k.mk(v)
				initStore(t, s, dir, nil)
				m := s.(StateStore)

				wantMeta(t, m, "emit", "", false)
				mustNoErr(t, m.SetMetadata("emit", []byte("1")))
				// An internal key name used as a user key is a different key.
				mustNoErr(t, m.SetMetadata("observed", []byte("mine")))
				mustNoErr(t, m.SetMetadata("empty", []byte{}))
				wantMeta(t, m, "emit", "1", true)
				wantMeta(t, m, "empty", "", true)
				mustNoErr(t, m.Abort())
				wantMeta(t, m, "emit", "", false)
				wantMeta(t, m, "empty", "", false)

				mustNoErr(t, m.SetMetadata("emit", []byte("2")))
				mustNoErr(t, m.SetMetadata("observed", []byte("mine")))
				mustNoErr(t, m.SetMetadata("gone", []byte("x")))
				mustNoErr(t, m.Commit(nil))
				mustNoErr(t, m.SetMetadata("emit", []byte("3")))
				mustNoErr(t, m.SetMetadata("gone", nil))
				wantMeta(t, m, "gone", "", false)
				mustNoErr(t, m.Abort())
				wantMeta(t, m, "emit", "2", true)
				wantMeta(t, m, "gone", "x", true)
				mustNoErr(t, m.SetMetadata("gone", nil))
				mustNoErr(t, m.Commit(nil))
				wantMeta(t, m, "gone", "", false)

				// A staged metadata write counts as a staged write.
				mustNoErr(t, m.SetMetadata("emit", []byte("4")))
				if err := m.RestoreBatch(nil); !errors.Is(err, ErrStagedWrites) {
					t.Fatalf("RestoreBatch with staged metadata: err = %v, want ErrStagedWrites", err)
				}
				// Close drops staged metadata.
				mustNoErr(t, s.Close())
				if _, _, err := m.Metadata("emit"); !errors.Is(err, ErrNotOpen) {
					t.Fatalf("Metadata after Close: err = %v, want ErrNotOpen", err)
				}
				if !v.persistent {
					return
				}
				s2 := k.mk(v)
				initStore(t, s2, dir, nil)
				defer s2.Close()
				m2 := s2.(StateStore)
				wantMeta(t, m2, "emit", "2", true)
				wantMeta(t, m2, "observed", "mine", true)
				wantMeta(t, m2, "gone", "", false)
			})
		}
	}
}

func wantMeta(t *testing.T, m MetadataStore, key, want string, wantOK bool) {
	t.Helper()
	got, ok, err := m.Metadata(key)
	if err != nil {
		t.Fatal(err)
	}
	if ok != wantOK || string(got) != want {
		t.Fatalf("Metadata(%q) = %q, %t; want %q, %t", key, got, ok, want, wantOK)
	}
	if ok && got == nil {
		t.Fatalf("Metadata(%q) returned nil for a set key", key)
	}
}
