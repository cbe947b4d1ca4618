package serde

import (
	"reflect"
	"testing"

	v1 "github.com/streamgen/streamgen/bench/serde/evolution/v1"
	v2 "github.com/streamgen/streamgen/bench/serde/evolution/v2"
)

// An older reader skips fields it does not know, including nested
// collections of records.
func TestEvolutionOldReaderNewData(t *testing.T) {
	email := "ada@example.com"
	newer := &v2.Profile{
		ID: "p1", FullName: "Ada", Age: 36, Email: &email, Score: 7, Tier: v2.TierPlatinum,
		Address: v2.Address{City: "London"},
		History: []map[string][]v2.Address{{"home": {{City: "A"}, {City: "B"}}}, nil},
	}
	var older v1.Profile
	rest, err := older.UnmarshalMsg(newer.AppendMsg(nil))
	if err != nil || len(rest) != 0 {
		t.Fatalf("v1 reading v2: %v (%d bytes left)", err, len(rest))
	}
	if want := (v1.Profile{ID: "p1", Name: "Ada", Age: 36}); older != want {
		t.Errorf("v1 reading v2 = %+v, want %+v", older, want)
	}
}

// A newer reader gets the declared defaults for fields the data lacks.
func TestEvolutionNewReaderOldData(t *testing.T) {
	older := &v1.Profile{ID: "p1", Name: "Ada", Age: 36}
	var newer v2.Profile
	if _, err := newer.UnmarshalMsg(older.AppendMsg(nil)); err != nil {
		t.Fatal(err)
	}
	want := v2.Profile{ID: "p1", FullName: "Ada", Age: 36, Score: 100, Tier: v2.TierGold}
	if !reflect.DeepEqual(newer, want) {
		t.Errorf("v2 reading v1 = %+v, want %+v", newer, want)
	}
}
