package sgkafka

import (
	"errors"
	"fmt"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrChangelogLayout is wrapped by the error that stops a restoration at a
// changelog record an own-layout store cannot read: one without streamgen's
// layout marker (see engine.LayoutHeader), which Kafka Streams or a
// streamgen release before the marker wrote. It is not retried: the same
// record would stop every attempt, and only a reset or a migration helps.
var ErrChangelogLayout = errors.New("streamgen: changelog record not in the store's layout")

// ownLayout reports whether store's changelog is in streamgen's own layout
// and must carry the layout marker.
func (e *Engine) ownLayout(store string) bool {
	spec := e.tp.Store(store)
	return spec != nil && spec.OwnLayout
}

// checkLayout returns nil when rec, a record of store's changelog, carries
// the layout marker, and otherwise the error that says where the record
// is, who may have written it and what to do.
func checkLayout(store string, task engine.TaskID, rec *kgo.Record) error {
	for _, h := range rec.Headers {
		if h.Key != engine.LayoutHeader {
			continue
		}
		if string(h.Value) == engine.LayoutVersion {
			return nil
		}
		return fmt.Errorf("%w: store %q of task %s: changelog %q partition %d offset %d has layout version %q, this release reads %q; run the release that wrote it, or reset the application",
			ErrChangelogLayout, store, task, rec.Topic, rec.Partition, rec.Offset, h.Value, engine.LayoutVersion)
	}
	return fmt.Errorf("%w: store %q of task %s keeps streamgen's own changelog layout, but changelog %q partition %d offset %d has no %s header: "+
		"Kafka Streams (a takeover of state streamgen cannot read) or a streamgen release before the layout marker wrote it. "+
		"Nothing was processed. Reset the application (docs/operations.md, \"Resetting an application\"), or reset this store's state "+
		"as docs/migrating-from-kafka-streams.md says",
		ErrChangelogLayout, store, task, rec.Topic, rec.Partition, rec.Offset, engine.LayoutHeader)
}

// changelogRecord is rec as a store applies it, once the layout check an
// own-layout store needs has passed: restoration and standbys share it.
func changelogRecord(store string, task engine.TaskID, own bool, rec *kgo.Record) (sgstate.ChangelogRecord, error) {
	if own {
		if err := checkLayout(store, task, rec); err != nil {
			return sgstate.ChangelogRecord{}, err
		}
	}
	return sgstate.ChangelogRecord{Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp.UnixMilli()}, nil
}
