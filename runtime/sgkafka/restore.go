package sgkafka

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// restoreTimeout bounds the restoration of one batch of tasks.
const restoreTimeout = 30 * time.Minute

// restoring is one store being restored.
type restoring struct {
	tk       *task
	store    string
	topic    string
	key      string
	st       sgstate.Store
	from, to int64
	pos      int64
	n        int64
	done     bool
	// own: the store keeps streamgen's own layout, so every record must
	// carry the layout marker.
	own bool
}

type restorer interface {
	sgstate.Restorer
	sgstate.Transactional
}

// restore brings the logged stores of newly opened tasks up to the end of
// their changelogs (read committed) before they process records. A store
// resumes from its local checkpoint; only the changelog tail past it is
// replayed. A store whose checkpoint lies outside the changelog (the log
// was truncated past it, or the topic was recreated) is wiped and rebuilt.
func (w *worker) restore(tasks []*task) error {
	if len(tasks) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	topicSet := map[string]bool{}
	for _, tk := range tasks {
		for _, topic := range tk.changelogs {
			topicSet[topic] = true
		}
	}
	if len(topicSet) == 0 {
		return nil
	}
	var topics []string
	for t := range topicSet {
		topics = append(topics, t)
	}
	adm := kadm.NewClient(w.e.base)
	// Restore up to the high watermark, read committed: up to the last
	// stable offset would stop short of records committed after a
	// transaction a crashed owner left open (it holds the LSO back until
	// it is aborted), and the state would miss them.
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("streamgen: restore: listing changelog end offsets: %w", err)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("streamgen: restore: listing changelog start offsets: %w", err)
	}
	offsetOf := func(l kadm.ListedOffsets, topic string, p int32) (int64, error) {
		o, ok := l.Lookup(topic, p)
		if !ok {
			return 0, fmt.Errorf("streamgen: restore: changelog %q partition %d not found", topic, p)
		}
		if o.Err != nil {
			return 0, fmt.Errorf("streamgen: restore: changelog %q partition %d: %w", topic, p, o.Err)
		}
		return o.Offset, nil
	}

	var work []*restoring
	for i, tk := range tasks {
		cps, err := tk.checkpoints()
		if err != nil {
			return err
		}
		var wipe []string
		for name, topic := range tk.changelogs {
			start, err := offsetOf(starts, topic, tk.id.Partition)
			if err != nil {
				return err
			}
			end, err := offsetOf(ends, topic, tk.id.Partition)
			if err != nil {
				return err
			}
			if cp := cps[name]; cp >= 0 && (cp < start || cp > end) {
				w.log.Warn("local state is outside the changelog; rebuilding it", "task", tk.id.String(), "store", name,
					"checkpoint", cp, "changelog_start", start, "changelog_end", end)
				wipe = append(wipe, name)
			}
		}
		if len(wipe) > 0 {
			if err := tk.t.Close(); err != nil {
				return err
			}
			for _, name := range wipe {
				if err := os.RemoveAll(engine.StoreDir(w.e.cfg.StateDir, tk.id, name)); err != nil {
					return fmt.Errorf("streamgen: wiping store %q of task %s: %w", name, tk.id, err)
				}
			}
			ntk, err := w.openTask(tk.id, tk.resume)
			if err != nil {
				return err
			}
			tasks[i], tk = ntk, ntk
			if cps, err = tk.checkpoints(); err != nil {
				return err
			}
		}
		stores := tk.t.Stores()
		for name, topic := range tk.changelogs {
			start, _ := offsetOf(starts, topic, tk.id.Partition)
			end, _ := offsetOf(ends, topic, tk.id.Partition)
			key := checkpointKey(topic, tk.id.Partition)
			from := cps[name]
			if from < 0 {
				from = start
			}
			tk.end[key] = max(from, 0)
			if from >= end {
				continue
			}
			st, ok := stores[name].(restorer)
			if !ok {
				w.log.Warn("store cannot be restored (no Restorer); it starts from its local state", "task", tk.id.String(), "store", name)
				continue
			}
			work = append(work, &restoring{tk: tk, store: name, topic: topic, key: key, st: st.(sgstate.Store), from: from, to: end, pos: from, own: w.e.ownLayout(name)})
		}
	}
	if len(work) == 0 {
		return nil
	}
	return w.consumeChangelogs(ctx, work)
}

// batch appends to dst the changelog records of recs that r restores, and
// returns the offset to go on from. A record an own-layout store cannot
// read stops it before anything of the batch is applied.
func (r *restoring) batch(dst []sgstate.ChangelogRecord, recs []*kgo.Record) ([]sgstate.ChangelogRecord, int64, error) {
	pos := r.pos
	for _, rec := range recs {
		if rec.Offset >= r.to {
			// Everything visible below r.to came before this; the rest
			// below it was aborted (its markers may lie beyond r.to).
			return dst, r.to, nil
		}
		pos = rec.Offset + 1
		if rec.Attrs.IsControl() {
			continue
		}
		cr, err := changelogRecord(r.store, r.tk.id, r.own, rec)
		if err != nil {
			return dst, pos, err
		}
		dst = append(dst, cr)
	}
	return dst, pos, nil
}

func (w *worker) consumeChangelogs(ctx context.Context, work []*restoring) error {
	parts := map[string]map[int32]kgo.Offset{}
	byTP := map[string]*restoring{}
	var total int64
	for _, r := range work {
		if parts[r.topic] == nil {
			parts[r.topic] = map[int32]kgo.Offset{}
		}
		parts[r.topic][r.tk.id.Partition] = kgo.NewOffset().At(r.from)
		byTP[r.key] = r
		total += r.to - r.from
		w.log.Info("restoring store", "task", r.tk.id.String(), "store", r.store, "changelog", r.topic,
			"from_offset", r.from, "to_offset", r.to)
	}
	cl, err := kgo.NewClient(w.e.clientOpts(
		kgo.ConsumePartitions(parts),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(200*time.Millisecond),
	)...)
	if err != nil {
		return fmt.Errorf("streamgen: restore client: %w", err)
	}
	defer cl.Close()
	started := time.Now()
	lastLog := started
	remaining := len(work)
	w.e.met.restoreProgress(work)
	var batch []sgstate.ChangelogRecord
	var applied int64
	for remaining > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("streamgen: restore: %w", err)
		}
		var ferr error
		fetches.EachError(func(topic string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("streamgen: restore: reading changelog %q partition %d: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		var perr error
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if perr != nil || len(fp.Records) == 0 {
				return
			}
			r := byTP[checkpointKey(fp.Topic, fp.Partition)]
			if r == nil || r.done {
				return
			}
			var pos int64
			if batch, pos, perr = r.batch(batch[:0], fp.Records); perr != nil {
				return
			}
			if err := applyChangelog(r.st.(restorer), batch, r.key, pos); err != nil {
				perr = fmt.Errorf("streamgen: restoring store %q of task %s: %w", r.store, r.tk.id, err)
				return
			}
			r.n += int64(len(batch))
			applied += int64(len(batch))
			r.pos = pos
			r.tk.end[r.key] = pos
			if pos >= r.to {
				r.done = true
				remaining--
				w.log.Info("store restored", "task", r.tk.id.String(), "store", r.store, "changelog", r.topic,
					"records", r.n, "took", time.Since(started).Round(time.Millisecond).String())
			}
		})
		if perr != nil {
			return perr
		}
		w.e.met.restoreProgress(work)
		if time.Since(lastLog) >= 2*time.Second {
			lastLog = time.Now()
			var done int64
			for _, r := range work {
				done += r.pos - r.from
			}
			el := time.Since(started).Seconds()
			rate := float64(applied) / el
			left := "unknown"
			if done > 0 {
				left = time.Duration(float64(total-done) / (float64(done) / el) * float64(time.Second)).Round(time.Second).String()
			}
			w.log.Info("restoring", "records", applied, "records_per_sec", int64(rate), "offsets_done", done, "offsets_total", total, "estimated_left", left)
		}
	}
	el := time.Since(started)
	w.e.restoreNanos.Add(int64(el))
	for _, r := range work {
		w.e.addRestored(r.tk.id, r.n)
	}
	w.log.Info("restored", "records", applied, "stores", len(work), "took", el.Round(time.Millisecond).String(),
		"records_per_sec", int64(float64(applied)/max(el.Seconds(), 1e-9)))
	return nil
}

// maybePurge deletes consumed records of repartition topics (Kafka
// Streams' repartition.purge.interval.ms, 30 s): they are never read again.
func (w *worker) maybePurge(ctx context.Context) {
	if time.Since(w.lastPurge) < 30*time.Second {
		return
	}
	w.lastPurge = time.Now()
	offs := kadm.Offsets{}
	for topic, ps := range w.cl.CommittedOffsets() {
		ts := w.e.tp.Topic(topic)
		if ts == nil || ts.Role != engine.TopicRepartition {
			continue
		}
		for p, eo := range ps {
			if eo.Offset > 0 {
				offs.Add(kadm.Offset{Topic: topic, Partition: p, At: eo.Offset, LeaderEpoch: -1})
			}
		}
	}
	if len(offs) == 0 {
		return
	}
	if _, err := kadm.NewClient(w.e.base).DeleteRecords(ctx, offs); err != nil {
		w.log.Debug("purging repartition topics", "error", err.Error())
	}
}

func (e *Engine) isChangelog(topic string) bool { return e.changelogs[topic] }
