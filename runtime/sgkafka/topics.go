package sgkafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// windowChangelogExtraRetention is Kafka Streams'
// windowstore.changelog.additional.retention.ms default.
const windowChangelogExtraRetention = 24 * time.Hour

// internalTopic is an internal topic the engine creates or checks.
type internalTopic struct {
	name       string
	partitions int
	configs    map[string]string
	why        string // "repartition topic", "changelog of store \"x\""
	// alsoPolicy is a cleanup policy an existing topic may have instead
	// of configs["cleanup.policy"], or "".
	alsoPolicy string
}

func (e *Engine) clientOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(e.cfg.Brokers...), kgo.WithLogger(kgoLogger{e.log})}
	if e.cfg.Rack != "" {
		opts = append(opts, kgo.Rack(e.cfg.Rack))
	}
	opts = append(opts, e.cfg.ClientOpts...)
	return append(opts, extra...)
}

// setup checks the topology against the cluster and creates internal
// topics: source and sink topics must exist; repartition and changelog
// topics are created, or checked when they exist. It runs again from the
// start when the brokers go away meanwhile (Engine.start).
func (e *Engine) setup(ctx context.Context) error {
	e.sourceSubs = e.sourceSubs[:0]
	for _, s := range e.tp.SubTopologies() {
		if len(s.Topics) > 0 && !e.tp.IsGlobal(s) {
			e.sourceSubs = append(e.sourceSubs, s)
		}
	}
	// A short metadata age: topics created here must be seen at once.
	cl, err := kgo.NewClient(e.clientOpts(kgo.MetadataMinAge(100 * time.Millisecond))...)
	if err != nil {
		return fmt.Errorf("%w: kafka client: %w", ErrConfig, err)
	}
	e.base = cl
	adm := kadm.NewClient(cl)
	opCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	var external []string
	for _, ts := range e.tp.Topics() {
		if ts.Role == engine.TopicExternal || ts.Role == engine.TopicGlobal {
			external = append(external, ts.Name)
		}
	}
	if e.cfg.usesDeadLetter() {
		// Checked with the sources and sinks: a missing dead-letter topic
		// would otherwise surface at the first bad record.
		external = append(external, e.cfg.DeadLetterTopic)
	}
	e.parts = map[string]int{}
	e.changelogs = map[string]bool{}
	if len(external) > 0 {
		md, err := adm.Metadata(opCtx, external...)
		if err != nil {
			return fmt.Errorf("streamgen: reading topic metadata from %s: %w", strings.Join(e.cfg.Brokers, ","), err)
		}
		var missing []string
		for _, name := range external {
			td, ok := md.Topics[name]
			if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
				missing = append(missing, name)
				continue
			}
			if td.Err != nil {
				return fmt.Errorf("streamgen: topic %q: %w", name, td.Err)
			}
			e.parts[name] = len(td.Partitions)
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: topics %s do not exist: create them (the engine creates only internal topics) or run with --embedded", ErrConfig, quoteAll(missing))
		}
	}
	internal, err := e.planInternalTopics()
	if err != nil {
		return err
	}
	e.internal = internal
	for _, s := range e.sourceSubs {
		if err := engine.CheckCopartitioned(s, func(t string) int { return e.parts[t] }); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	e.taskParts = map[int]int{}
	for _, s := range e.sourceSubs {
		e.taskParts[s.ID] = e.parts[s.Topics[0]]
	}
	if err := e.ensureInternalTopics(opCtx, adm, internal); err != nil {
		return err
	}
	if e.cfg.GroupProtocol == ProtocolStreams {
		if err := e.configureStreamsGroup(opCtx, cl); err != nil {
			return err
		}
	}
	return e.loadInstanceID()
}

// planInternalTopics computes partition counts and configs of repartition,
// internal and changelog topics. A repartition topic without a fixed count
// gets the largest count of the source topics of the sub-topology that
// writes it (its upstream), as Kafka Streams does; an internal topic read
// together with other topics takes their count.
func (e *Engine) planInternalTopics() ([]internalTopic, error) {
	writers := map[string][]int{} // topic → sub-topologies writing it
	for _, n := range e.tp.Nodes() {
		for _, t := range n.Writes {
			writers[t] = append(writers[t], n.Sub)
		}
	}
	subs := e.tp.SubTopologies()
	var pending []*engine.TopicSpec
	for _, ts := range e.tp.Topics() {
		if ts.Role == engine.TopicRepartition || ts.Role == engine.TopicInternal {
			if ts.Partitions > 0 {
				e.parts[ts.Name] = ts.Partitions
			} else {
				pending = append(pending, ts)
			}
		}
	}
	for len(pending) > 0 {
		progress := false
		rest := pending[:0]
		for _, ts := range pending {
			n := 0
			// Co-partitioned with a known topic read by the same task.
			if s := e.tp.SubTopologyOf(ts.Name); s != nil {
				for _, t := range s.Topics {
					if c, ok := e.parts[t]; ok && t != ts.Name && n < c {
						n = c
					}
				}
			}
			if n == 0 {
				known := true
				for _, sub := range writers[ts.Name] {
					for _, t := range subs[sub].Topics {
						c, ok := e.parts[t]
						if !ok {
							known = false
						} else if c > n {
							n = c
						}
					}
				}
				if !known {
					n = 0
				}
			}
			if n > 0 {
				e.parts[ts.Name] = n
				progress = true
			} else {
				rest = append(rest, ts)
			}
		}
		pending = rest
		if !progress && len(pending) > 0 {
			var names []string
			for _, ts := range pending {
				names = append(names, ts.Name)
			}
			return nil, fmt.Errorf("%w: cannot derive the partition count of internal topics %s: give the repartition a partition count in the spec", ErrConfig, quoteAll(names))
		}
	}
	var out []internalTopic
	for _, ts := range e.tp.Topics() {
		if ts.Role != engine.TopicRepartition && ts.Role != engine.TopicInternal {
			continue
		}
		out = append(out, internalTopic{name: ts.Name, partitions: e.parts[ts.Name], why: "repartition topic",
			configs: map[string]string{"cleanup.policy": "delete", "retention.ms": "-1", "segment.bytes": "52428800"}})
	}
	for _, s := range subs {
		if len(s.Topics) == 0 {
			continue
		}
		n := 0
		for _, t := range s.Topics {
			if e.parts[t] > n {
				n = e.parts[t]
			}
		}
		for _, name := range s.Stores {
			spec := e.tp.Store(name)
			if spec == nil || !spec.Logged {
				continue
			}
			it := internalTopic{name: changelogTopic(e.cfg.ApplicationID, name), partitions: n, why: fmt.Sprintf("changelog of store %q", name)}
			changelogConfigs(&it, spec)
			e.parts[it.name] = n
			e.changelogs[it.name] = true
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func changelogTopic(appID, store string) string { return toponame.Changelog(appID, store) }

// changelogConfigs sets the configs of store spec's changelog it as Kafka
// Streams creates them (InternalTopologyBuilder#createChangelogTopicConfig):
//   - key-value stores: compacted;
//   - versioned stores (VersionedChangelogTopicConfig): compacted and never
//     deleted by age, since a key's latest version never expires, with
//     min.compaction.lag.ms the history retention plus a day;
//   - stream-stream join stores (StreamJoinedStoreFactory): deleted, not
//     compacted, since they retain duplicates, with the window stores'
//     retention. An existing compact,delete changelog is accepted too: it is
//     what streamgen created for them before, and what Kafka Streams
//     creates for join stores given as store suppliers;
//   - window and session stores (WindowedChangelogTopicConfig): compacted and
//     deleted after the store's retention plus a day.
func changelogConfigs(it *internalTopic, spec *engine.StoreSpec) {
	retention := strconv.FormatInt((spec.Retention + windowChangelogExtraRetention).Milliseconds(), 10)
	switch {
	case spec.Kind == sgstream.KeyValueStore:
		it.configs = map[string]string{"cleanup.policy": "compact"}
	case spec.Kind == engine.VersionedStore:
		it.configs = map[string]string{"cleanup.policy": "compact", "min.compaction.lag.ms": retention}
	case spec.RetainDuplicates:
		it.configs = map[string]string{"cleanup.policy": "delete", "retention.ms": retention}
		it.alsoPolicy = "compact,delete"
	default:
		it.configs = map[string]string{"cleanup.policy": "compact,delete", "retention.ms": retention}
	}
}

// ensureInternalTopics creates the missing internal topics and checks the
// existing ones: a partition count or cleanup policy that differs from
// what the topology needs would break co-partitioning or lose state.
func (e *Engine) ensureInternalTopics(ctx context.Context, adm *kadm.Client, topics []internalTopic) error {
	if len(topics) == 0 {
		return nil
	}
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.name
	}
	md, err := adm.Metadata(ctx, names...)
	if err != nil {
		return fmt.Errorf("streamgen: reading internal topic metadata: %w", err)
	}
	var existing []string
	for _, t := range topics {
		td, ok := md.Topics[t.name]
		if ok && td.Err == nil {
			existing = append(existing, t.name)
			continue
		}
		cfg := map[string]*string{}
		for k, v := range t.configs {
			cfg[k] = kadm.StringPtr(v)
		}
		resp, err := adm.CreateTopic(ctx, int32(t.partitions), e.cfg.ReplicationFactor, cfg, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("streamgen: creating %s %q: %w", t.why, t.name, err)
		}
		if err == nil {
			e.log.Info("created internal topic", "topic", t.name, "partitions", t.partitions, "cleanup.policy", t.configs["cleanup.policy"])
		} else {
			existing = append(existing, t.name)
		}
	}
	if err := waitTopics(ctx, adm, names); err != nil {
		return err
	}
	if len(existing) == 0 {
		return nil
	}
	md, err = adm.Metadata(ctx, existing...)
	if err != nil {
		return fmt.Errorf("streamgen: reading internal topic metadata: %w", err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, existing...)
	if err != nil {
		return fmt.Errorf("streamgen: reading internal topic configs: %w", err)
	}
	policy := map[string]string{}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil {
				policy[rc.Name] = *c.Value
			}
		}
	}
	var problems []string
	for _, t := range topics {
		td, ok := md.Topics[t.name]
		if !ok {
			continue
		}
		if got := len(td.Partitions); got != t.partitions {
			problems = append(problems, fmt.Sprintf("%s %q has %d partitions, the topology needs %d: delete it (kafka-topics.sh --delete --topic %s) so it is recreated, or change the source topics back to %d partitions", t.why, t.name, got, t.partitions, t.name, got))
		}
		if got, ok := policy[t.name]; ok && !samePolicy(got, t.configs["cleanup.policy"]) && (t.alsoPolicy == "" || !samePolicy(got, t.alsoPolicy)) {
			problems = append(problems, fmt.Sprintf("%s %q has cleanup.policy=%s, the topology needs %s: change it with kafka-configs.sh --alter --entity-type topics --entity-name %s --add-config cleanup.policy=[%s]", t.why, t.name, got, t.configs["cleanup.policy"], t.name, t.configs["cleanup.policy"]))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: internal topics do not match the topology:\n  %s", ErrConfig, strings.Join(problems, "\n  "))
	}
	return nil
}

func samePolicy(a, b string) bool {
	split := func(s string) string {
		parts := strings.Split(strings.ReplaceAll(s, " ", ""), ",")
		sort.Strings(parts)
		return strings.Join(parts, ",")
	}
	return split(a) == split(b)
}

// waitTopics waits until every partition of topics has a leader, so the
// first produce does not race the topic creation.
func waitTopics(ctx context.Context, adm *kadm.Client, topics []string) error {
	for {
		md, err := adm.Metadata(ctx, topics...)
		ready := err == nil
		if ready {
			for _, t := range topics {
				td, ok := md.Topics[t]
				if !ok || td.Err != nil || len(td.Partitions) == 0 {
					ready = false
					break
				}
				for _, p := range td.Partitions {
					if p.Err != nil || p.Leader < 0 {
						ready = false
					}
				}
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("streamgen: waiting for topics %s to be ready: %w", quoteAll(topics), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// partitions returns the partition count of topic, looking it up when the
// topology did not declare it (a dead-letter topic).
func (e *Engine) partitions(ctx context.Context, topic string) (int, error) {
	e.partsMu.Lock()
	n, ok := e.parts[topic]
	e.partsMu.Unlock()
	if ok {
		return n, nil
	}
	md, err := kadm.NewClient(e.base).Metadata(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("streamgen: metadata of topic %q: %w", topic, err)
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		return 0, fmt.Errorf("streamgen: topic %q does not exist: create it", topic)
	}
	e.partsMu.Lock()
	e.parts[topic] = len(td.Partitions)
	e.partsMu.Unlock()
	return len(td.Partitions), nil
}

// loadInstanceID reads (or creates) the id of this state directory. It
// makes the transactional ids stable across restarts of one instance, so a
// restarted instance fences and aborts its predecessor's open transaction
// at once instead of waiting for the transaction timeout.
func (e *Engine) loadInstanceID() error {
	path := filepath.Join(e.cfg.StateDir, "instance-id")
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		e.instanceID = strings.TrimSpace(string(b))
		return nil
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return fmt.Errorf("streamgen: instance id: %w", err)
	}
	e.instanceID = hex.EncodeToString(r[:])
	if err := os.WriteFile(path, []byte(e.instanceID+"\n"), 0o644); err != nil {
		return fmt.Errorf("streamgen: state dir %q: %w", e.cfg.StateDir, err)
	}
	return nil
}

func (e *Engine) lockStateDir() error {
	if err := os.MkdirAll(e.cfg.StateDir, 0o755); err != nil {
		return fmt.Errorf("%w: state dir %q: %w", ErrConfig, e.cfg.StateDir, err)
	}
	unlock, err := lockDir(e.cfg.StateDir)
	if err != nil {
		return fmt.Errorf("%w: state dir %q is in use by another instance (%v): give each instance its own --state-dir", ErrConfig, e.cfg.StateDir, err)
	}
	e.unlock = unlock
	return nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
