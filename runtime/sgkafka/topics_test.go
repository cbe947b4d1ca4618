package sgkafka

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
	"github.com/twmb/franz-go/pkg/kadm"
)

// changelogTopology has a versioned table (history 1h) and an inner
// stream-stream join (window 2m, grace 1m) whose stores have Kafka
// Streams' names for StreamJoined.withStoreName("vc").
func changelogTopology(t *testing.T) *sgstream.Topology {
	tp, err := sgstream.NewTopology("app", func(b *sgstream.Builder) {
		str := sgstream.SourceConfig[string, string]{Key: serdes.String, Value: serdes.String}
		sink := sgstream.SinkConfig[string, string]{Key: serdes.String, Value: serdes.String}
		cfg := str
		cfg.Topic = "infos"
		infos := sgstream.VersionedTableSource(b, "infos", cfg, "infos-store", time.Hour)
		sgstream.To(sgstream.ToStream(infos, "infos-stream"), "infos-out", "out", sink)
		cfg.Topic = "views"
		views := sgstream.Source(b, "views", cfg)
		cfg.Topic = "clicks"
		clicks := sgstream.Source(b, "clicks", cfg)
		sd := sgstream.StreamJoinSerdes[string, string, string]{Key: serdes.String, Left: serdes.String, Right: serdes.String, StoreName: "vc"}
		j := sgstream.JoinStreams(views, clicks, "j", sgstream.InnerJoin, sgstream.JoinWindows{Before: time.Minute, After: time.Minute, Grace: time.Minute},
			sgstream.ValueJoiner(func(_, v, c string) string { return v + c }), sd)
		sgstream.To(j, "j-out", "out", sink)
	})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestChangelogTopicConfigs: changelogs are created with Kafka Streams'
// configs, so that a takeover finds the topics it needs: a versioned
// store's compacted with min.compaction.lag.ms (its latest versions must
// never be deleted by age), a stream-stream join store's deleted by age
// only (StreamJoinedStoreFactory), where an existing compact,delete one is
// accepted; a versioned changelog that deletes by age is refused.
func TestChangelogTopicConfigs(t *testing.T) {
	const day = 24 * time.Hour
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	setup := func(t *testing.T) ([]string, *kadm.Client) {
		brokers := newFake(t)
		for _, topic := range []string{"infos", "views", "clicks", "out"} {
			createTopic(t, brokers, topic, 1)
		}
		return brokers, kadm.NewClient(newClient(t, brokers))
	}
	precreate := func(t *testing.T, adm *kadm.Client, topic, policy string) {
		t.Helper()
		resp, err := adm.CreateTopic(context.Background(), 1, -1, map[string]*string{"cleanup.policy": &policy}, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("created and accepted", func(t *testing.T) {
		brokers, adm := setup(t)
		precreate(t, adm, "app-vc-other-join-store-changelog", "compact,delete")
		r := startEngine(t, changelogTopology(t), Config{Brokers: brokers, StateDir: t.TempDir(), IdleExit: 300 * time.Millisecond})
		if err := r.wait(t, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		want := map[string]map[string]string{
			"app-infos-store-changelog":         {"cleanup.policy": "compact", "min.compaction.lag.ms": ms(time.Hour + day)},
			"app-vc-this-join-store-changelog":  {"cleanup.policy": "delete", "retention.ms": ms(3*time.Minute + day)},
			"app-vc-other-join-store-changelog": {"cleanup.policy": "compact,delete"},
		}
		rcs, err := adm.DescribeTopicConfigs(context.Background(), "app-infos-store-changelog", "app-vc-this-join-store-changelog", "app-vc-other-join-store-changelog")
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range rcs {
			for k, v := range want[rc.Name] {
				got := ""
				for _, c := range rc.Configs {
					if c.Key == k && c.Value != nil {
						got = *c.Value
					}
				}
				if got != v {
					t.Errorf("%s: %s = %q, want %q", rc.Name, k, got, v)
				}
			}
		}
	})
	t.Run("versioned changelog deleting by age refused", func(t *testing.T) {
		brokers, adm := setup(t)
		precreate(t, adm, "app-infos-store-changelog", "compact,delete")
		r := startEngine(t, changelogTopology(t), Config{Brokers: brokers, StateDir: t.TempDir(), IdleExit: 300 * time.Millisecond})
		if err := r.wait(t, 60*time.Second); !errors.Is(err, ErrConfig) {
			t.Fatalf("engine ended with %v, want an ErrConfig about the versioned changelog's policy", err)
		}
	})
}
