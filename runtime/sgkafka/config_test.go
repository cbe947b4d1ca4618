package sgkafka

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

func TestNewRejectsDeadLetterWithoutTopic(t *testing.T) {
	tp, err := sgstream.NewTopology("demo", countBuild("in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(tp, Config{Brokers: []string{"127.0.0.1:1"}, InvalidTime: sgstream.TimestampDeadLetter})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "dead-letter topic") {
		t.Fatalf("New = %v, want ErrConfig about the dead-letter topic", err)
	}
}

// TestValidateReportsEveryProblem checks that Validate names all the
// problems of a configuration in one error, each matching ErrConfig.
func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := Config{Guarantee: Guarantee(7), Processing: sgstream.PolicyDeadLetter,
		InvalidTime: sgstream.TimestampPolicy(9), ReplicationFactor: -3, OuterJoinEmitInterval: -time.Second}
	err := cfg.Validate()
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("Validate = %v, want ErrConfig", err)
	}
	for _, want := range []string{"no brokers", "guarantee 7", "InvalidTime: unknown policy",
		"needs a dead-letter topic", "replication factor -3", "emit interval -1s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error lacks %q:\n%v", want, err)
		}
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 6 {
		t.Errorf("Validate joined %d errors, want 6:\n%v", n, err)
	}
	ok := Config{Brokers: []string{"127.0.0.1:1"}, WindowEmitInterval: NoEmitThrottle}
	if err := ok.Validate(); err != nil {
		t.Errorf("zero Config with brokers: Validate = %v, want nil", err)
	}
}

// TestEnsureDefaults checks the documented defaults of the fields whose
// zero value means one.
func TestEnsureDefaults(t *testing.T) {
	var cfg Config
	cfg.EnsureDefaults("app")
	if cfg.ApplicationID != "app" || cfg.CommitInterval != DefaultCommitIntervalALOS || cfg.Workers != 1 ||
		cfg.SessionTimeout != DefaultSessionTimeout || cfg.StateDir != DefaultStateDir("app") || cfg.Logger == nil ||
		cfg.ReplicationFactor != -1 || cfg.MaxPollRecords != DefaultMaxPollRecords ||
		cfg.WindowEmitInterval != time.Second || cfg.OuterJoinEmitInterval != time.Second {
		t.Fatalf("defaults = %+v", cfg)
	}
	eos := Config{Guarantee: ExactlyOnceV2, CommitInterval: -1}
	eos.EnsureDefaults("app")
	if eos.CommitInterval != DefaultCommitIntervalEOS {
		t.Errorf("exactly-once commit interval = %v, want %v", eos.CommitInterval, DefaultCommitIntervalEOS)
	}
	set := Config{ApplicationID: "other", Workers: 3, StateDir: "state"}
	set.EnsureDefaults("app")
	if set.ApplicationID != "other" || set.Workers != 3 || set.StateDir != "state" {
		t.Errorf("EnsureDefaults replaced set fields: %+v", set)
	}
}

func TestParseGuarantee(t *testing.T) {
	for _, g := range []Guarantee{AtLeastOnce, ExactlyOnceV2} {
		if got, err := ParseGuarantee(g.String()); err != nil || got != g {
			t.Errorf("ParseGuarantee(%q) = %v, %v", g.String(), got, err)
		}
	}
	if _, err := ParseGuarantee("exactly_once"); err == nil {
		t.Error("ParseGuarantee accepted exactly_once (the removed v1 guarantee)")
	}
}

// TestStoreMemoryBytes checks that New gives the stores one budget, in a
// copy of the caller's Pebble options, and rejects a budget too small.
func TestStoreMemoryBytes(t *testing.T) {
	tp, err := sgstream.NewTopology("demo", countBuild("in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	own := &sgstate.PebbleOptions{BloomBitsPerKey: 5}
	e, err := New(tp, Config{Brokers: []string{"127.0.0.1:1"}, StoreMemoryBytes: 256 << 20, Pebble: own})
	if err != nil {
		t.Fatal(err)
	}
	p := e.Config().Pebble
	if p == own || p.Budget == nil || p.Budget.Bytes() != 256<<20 || p.BloomBitsPerKey != 5 || own.Budget != nil {
		t.Fatalf("pebble options = %+v (caller's %+v)", p, own)
	}
	_, err = New(tp, Config{Brokers: []string{"127.0.0.1:1"}, StoreMemoryBytes: 1 << 20})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "below the minimum of 33554432 (32 MiB) (--store-memory-bytes") {
		t.Fatalf("New with a 1 MiB budget = %v", err)
	}
}
