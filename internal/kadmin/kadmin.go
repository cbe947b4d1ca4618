// Package kadmin holds the topic chores that the chaos harness, the
// benchmark harness and the end-to-end tests share: creating a topic that
// may still be on its way out, waiting until every partition is led, and
// removing an application's internal topics. The runtime keeps its own
// (runtime/sgkafka) and does not import this.
package kadmin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Create creates topic with partitions partitions and replication factor 1,
// retrying every 200 ms while the broker still holds a deleted topic of the
// same name; it gives up when ctx ends.
func Create(ctx context.Context, adm *kadm.Client, topic string, partitions int32) error {
	for {
		resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err == nil {
			return nil
		}
		// A topic deleted a moment ago may still be on its way out.
		if !errors.Is(err, kerr.TopicAlreadyExists) || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// NotLed says why md does not yet show every topic of want with exactly
// its number of partitions, each with a leader and without an error; nil
// when it does. CreateTopics answers when the controller has recorded a
// topic, slightly before the broker serves it: waiting for leaders keeps
// that race out of the first produce.
func NotLed(md kadm.Metadata, want map[string]int32) error {
	for _, topic := range slices.Sorted(maps.Keys(want)) {
		td, ok := md.Topics[topic]
		if !ok {
			return fmt.Errorf("topic %q: not in metadata yet", topic)
		}
		if td.Err != nil {
			return fmt.Errorf("topic %q: %w", topic, td.Err)
		}
		if n := int32(len(td.Partitions)); n != want[topic] {
			return fmt.Errorf("topic %q: %d of %d partitions in metadata", topic, n, want[topic])
		}
		for _, p := range td.Partitions {
			if p.Err != nil {
				return fmt.Errorf("topic %q: partition %d: %w", topic, p.Partition, p.Err)
			}
			if p.Leader < 0 {
				return fmt.Errorf("topic %q: partition %d has no leader", topic, p.Partition)
			}
		}
	}
	return nil
}

// WaitLed asks for the metadata of want's topics every poll until NotLed
// is nil. When ctx ends first it returns ctx's error joined with the last
// reason.
func WaitLed(ctx context.Context, adm *kadm.Client, want map[string]int32, poll time.Duration) error {
	names := slices.Sorted(maps.Keys(want))
	var last error
	for {
		md, err := adm.Metadata(ctx, names...)
		if err == nil {
			if err = NotLed(md, want); err == nil {
				return nil
			}
		}
		// A request cut short by ctx says less than the reason before it.
		if last == nil || ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(poll):
		}
	}
}

// DeleteAppTopics deletes the topics named appID-…: an application's
// changelog and repartition topics. It is best effort: runs clean up after
// themselves so that many of them do not pile up partitions on the broker,
// and a leftover does no harm.
func DeleteAppTopics(ctx context.Context, adm *kadm.Client, appID string) {
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return
	}
	var mine []string
	for _, t := range all.Names() {
		if strings.HasPrefix(t, appID+"-") {
			mine = append(mine, t)
		}
	}
	if len(mine) > 0 {
		adm.DeleteTopics(ctx, mine...)
	}
}
