package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Guarantee is a processing guarantee (Kafka Streams' processing.guarantee).
type Guarantee int

const (
	// AtLeastOnce commits consumed offsets after the output is produced:
	// a crash may process records again. The zero value, as in Kafka
	// Streams.
	AtLeastOnce Guarantee = iota
	// ExactlyOnceV2 runs each worker's output, changelog writes and
	// consumed offsets in one Kafka transaction.
	ExactlyOnceV2
)

var guaranteeNames = [...]string{AtLeastOnce: "at_least_once", ExactlyOnceV2: "exactly_once_v2"}

// String is the spec's name of the guarantee (app.processing_guarantee).
func (g Guarantee) String() string {
	if name := guaranteeName(g); name != "" {
		return name
	}
	return fmt.Sprintf("Guarantee(%d)", int(g))
}

// ParseGuarantee reads a guarantee by its spec name: at_least_once or
// exactly_once_v2.
func ParseGuarantee(s string) (Guarantee, error) {
	for g, name := range guaranteeNames {
		if s == name {
			return Guarantee(g), nil
		}
	}
	return 0, fmt.Errorf("streamgen: unknown processing guarantee %q: want %s or %s", s, AtLeastOnce, ExactlyOnceV2)
}

// ErrConfig is matched by errors.Is for configuration and topic setup
// errors (missing topics, mismatched internal topics, bad flags).
var ErrConfig = errors.New("streamgen: configuration error")

// Defaults of Config, as Kafka Streams' where it has the setting.
const (
	// DefaultCommitIntervalALOS is commit.interval.ms under at least once.
	DefaultCommitIntervalALOS = 30 * time.Second
	// DefaultCommitIntervalEOS is commit.interval.ms under exactly once.
	DefaultCommitIntervalEOS = 100 * time.Millisecond
	// DefaultSessionTimeout is Kafka's session.timeout.ms.
	DefaultSessionTimeout = defaultSessionTimeout
	// DefaultMaxPollRecords is the least one poll may take (Kafka's
	// max.poll.records is 1000; a stream thread polls more to fill its
	// tasks' queues, and more still when its tasks are fast: see
	// Config.MaxPollRecords).
	DefaultMaxPollRecords = 5000
	// DefaultMaxWarmupReplicas is Kafka Streams' max.warmup.replicas.
	DefaultMaxWarmupReplicas = 2
	// DefaultAcceptableRecoveryLag is Kafka Streams' acceptable.recovery.lag.
	DefaultAcceptableRecoveryLag = 10000
	// DefaultProbingRebalanceInterval is Kafka Streams'
	// probing.rebalance.interval.ms.
	DefaultProbingRebalanceInterval = 10 * time.Minute
	// DefaultEmitInterval is the default of WindowEmitInterval and
	// OuterJoinEmitInterval, Kafka Streams' 1000 ms.
	DefaultEmitInterval = engine.DefaultOuterJoinEmitInterval
	// NoEmitThrottle, as WindowEmitInterval or OuterJoinEmitInterval,
	// turns the throttle off.
	NoEmitThrottle = engine.NoEmitThrottle
)

// Config configures an Engine, in Pebble's style: the zero value of every
// field means its documented default, EnsureDefaults fills them in, and
// Validate reports every problem at once. New does both.
type Config struct {
	// Brokers are the seed brokers. Required.
	Brokers []string
	// OnStart functions run once, in order, after the topics are checked
	// and global tables are caught up, before any task processes a record
	// (the spec's app.on_start, Faust's @app.task). An error stops the run.
	// Default: none.
	OnStart []func(ctx context.Context) error
	// ApplicationID is the consumer group and the prefix of internal
	// topics. Default: the topology's app id (and it must equal it).
	ApplicationID string
	// StateDir holds the tasks' Pebble stores. Default:
	// DefaultStateDir(ApplicationID), os.TempDir()/streamgen/<app id>.
	StateDir string
	// Guarantee is the processing guarantee. Default: AtLeastOnce (the
	// zero value).
	Guarantee Guarantee
	// CommitInterval is how often tasks commit. Zero or negative: the
	// default, DefaultCommitIntervalALOS (30 s) at least once and
	// DefaultCommitIntervalEOS (100 ms) exactly once.
	CommitInterval time.Duration
	// CacheMaxBytes is the record cache of the instance, split evenly over
	// its tasks (Kafka Streams' statestore.cache.max.bytes). Default 0:
	// no cache, every update is forwarded (the run command sets 10 MiB,
	// Kafka Streams' default).
	CacheMaxBytes int64
	// StoreMemoryBytes bounds the block cache and memtables of all the
	// instance's Pebble stores together (sgstate.MemoryBudget: the cache
	// gets the budget less the memtables, which get at most half). At
	// least sgstate.MinStoreMemoryBytes. Default 0: no bound, one 64 MiB
	// block cache, 8 MiB memtables in the DB the changelogged stores share
	// (sgstate.SharedDB) and up to 64 MiB of memtables per other store.
	// It does not bound the Go heap, the record cache (CacheMaxBytes) or
	// the Kafka clients' buffers.
	StoreMemoryBytes int64
	// Workers is the number of stream threads (group members). Zero or
	// negative: 1.
	Workers int
	// GroupInstanceID makes the workers static group members (Kafka's
	// group.instance.id): a member restarted under the same id within the
	// session timeout gets its partitions back without a rebalance, and a
	// static member does not leave the group when it stops. With several
	// workers, worker i uses <id>-<i>. Default empty: dynamic members.
	GroupInstanceID string
	// GroupProtocol is how the instances share the tasks: ProtocolClassic
	// (the default: a consumer group whose leader runs streamgen's
	// assignor) or ProtocolStreams (a KIP-1071 streams group on Kafka 4.2
	// or later: the broker assigns the tasks, standbys and warm-ups, and
	// takes the number of standbys, session timeout and recovery lag from
	// the group's configuration, which the engine sets from StandbyReplicas
	// and AcceptableRecoveryLag).
	GroupProtocol string
	// SessionTimeout is how long the group waits for a silent member
	// before it rebalances its partitions away. Zero or negative:
	// DefaultSessionTimeout (45 s, Kafka's).
	SessionTimeout time.Duration
	// StandbyReplicas is the number of standby replicas of each task
	// (Kafka Streams' num.standby.replicas, default 0): copies of its
	// stores on other instances, kept up to date from the changelogs, so
	// a task that moves restores only the tail its standby had not read.
	// The group leader's setting places them.
	StandbyReplicas int
	// MaxWarmupReplicas bounds the warm-up replicas the group leader places
	// at once (Kafka Streams' max.warmup.replicas): when the instance a
	// task should move to for balance holds no caught-up copy of its
	// state, the task stays where it is caught up and a warm-up replica (a
	// standby for the move) fills the new instance's copy first; a probing
	// rebalance moves it once caught up. Zero: DefaultMaxWarmupReplicas;
	// negative: none, tasks move at once and restore there.
	MaxWarmupReplicas int
	// AcceptableRecoveryLag is how many changelog records behind its end
	// a copy of a task's state may be and still count as caught up (Kafka
	// Streams' acceptable.recovery.lag). Zero or negative:
	// DefaultAcceptableRecoveryLag.
	AcceptableRecoveryLag int64
	// ProbingRebalanceInterval is how long after an assignment with
	// warm-up replicas the leader triggers the rebalance that moves the
	// caught-up ones (Kafka Streams' probing.rebalance.interval.ms). Zero
	// or negative: DefaultProbingRebalanceInterval.
	ProbingRebalanceInterval time.Duration
	// Rack names where this instance runs (a zone, a rack); standbys are
	// placed on other racks than their task's and each other's where the
	// group has them (Kafka Streams' rack-aware standby assignment). The
	// consumers also fetch from a replica in this rack (client.rack).
	Rack string
	// QueryAddr is the address (host:port) of this instance's interactive
	// query endpoint, advertised to the other instances in the group
	// metadata so they can forward queries for keys held here (Kafka
	// Streams' application.server; ListenQueries binds one). Default
	// empty: none.
	QueryAddr string
	// Logger receives the engine's logs. Default: discard.
	Logger *slog.Logger
	// ClientOpts are extra franz-go options for every client (TLS, SASL).
	// Default: none.
	ClientOpts []kgo.Opt
	// Pebble tunes the persistent stores. Default nil: sgstate's defaults.
	Pebble *sgstate.PebbleOptions
	// Metrics, when set, receives the engine's metrics and those of its
	// Kafka clients (metrics.go); NewMetricsRegistry makes one. Default
	// nil: no metrics.
	Metrics prometheus.Registerer

	// Deserialization is what happens to a record whose key or value does
	// not decode (the spec's on_error.deserialization). Default:
	// PolicyFail, the zero value.
	Deserialization sgstream.Policy
	// Processing is what happens to a record whose processing fails or
	// panics (the spec's on_error.processing). Default: PolicyFail.
	Processing sgstream.Policy
	// DeadLetterTopic is where the dead_letter policies write. Default
	// empty; required when a policy is dead_letter.
	DeadLetterTopic string
	// InvalidTime is what happens to a record whose extracted timestamp is
	// negative (the spec's invalid_timestamp). Default: TimestampFail.
	InvalidTime sgstream.TimestampPolicy

	// WindowEmitInterval and OuterJoinEmitInterval are the wall-clock
	// throttles of emit-on-close windowed aggregations and of the
	// unmatched records of left and outer stream-stream joins, Kafka
	// Streams' internal __emit.interval.ms.kstreams.windowed.aggregation__
	// and __emit.interval.ms.kstreams.outer.join.spurious.results.fix__.
	// Default 0: Kafka's 1 s. NoEmitThrottle: none, a scan after every
	// record, as TopologyTestDriver runs them, so that what is emitted does
	// not depend on how fast records arrive.
	WindowEmitInterval, OuterJoinEmitInterval time.Duration

	// IdleExit stops the engine (cleanly) once it is running and no record
	// arrived for this long. Default 0: run until the context ends.
	IdleExit time.Duration
	// ReplicationFactor of created internal topics. Default 0 means -1:
	// the broker's default.replication.factor.
	ReplicationFactor int16
	// MaxPollRecords bounds one poll while the worker's tasks process
	// fewer records than that in 100 ms (or in the commit interval, if
	// shorter); faster tasks poll what they process in that time, so that
	// they take franz-go's fetches whole and the next fetch travels while
	// they process (worker.pollSize). Zero or negative:
	// DefaultMaxPollRecords (5000).
	MaxPollRecords int

	// hooks are fault-injection points for tests.
	hooks hooks
}

// EnsureDefaults replaces every unset field of cfg by its default; appID is
// the topology's application id, the default ApplicationID. It does not
// check anything (Validate does).
func (cfg *Config) EnsureDefaults(appID string) {
	if cfg.ApplicationID == "" {
		cfg.ApplicationID = appID
	}
	if cfg.CommitInterval <= 0 {
		cfg.CommitInterval = DefaultCommitIntervalALOS
		if cfg.Guarantee == ExactlyOnceV2 {
			cfg.CommitInterval = DefaultCommitIntervalEOS
		}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.GroupProtocol == "" {
		cfg.GroupProtocol = ProtocolClassic
	}
	if cfg.StateDir == "" && cfg.ApplicationID != "" {
		cfg.StateDir = DefaultStateDir(cfg.ApplicationID)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReplicationFactor == 0 {
		cfg.ReplicationFactor = -1
	}
	if cfg.MaxPollRecords <= 0 {
		cfg.MaxPollRecords = DefaultMaxPollRecords
	}
	if cfg.MaxWarmupReplicas == 0 {
		cfg.MaxWarmupReplicas = DefaultMaxWarmupReplicas
	}
	if cfg.AcceptableRecoveryLag <= 0 {
		cfg.AcceptableRecoveryLag = DefaultAcceptableRecoveryLag
	}
	if cfg.ProbingRebalanceInterval <= 0 {
		cfg.ProbingRebalanceInterval = DefaultProbingRebalanceInterval
	}
	for _, d := range []*time.Duration{&cfg.WindowEmitInterval, &cfg.OuterJoinEmitInterval} {
		if *d == 0 {
			*d = DefaultEmitInterval
		}
	}
}

// Validate reports every problem of cfg at once (errors.Join), each
// matching ErrConfig. Fields left at their zero value are valid where the
// zero value means a default.
func (cfg *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if len(cfg.Brokers) == 0 {
		bad("no brokers (set --brokers or STREAMGEN_BROKERS)")
	}
	if guaranteeName(cfg.Guarantee) == "" {
		bad("guarantee %d: want %s or %s", int(cfg.Guarantee), AtLeastOnce, ExactlyOnceV2)
	}
	if cfg.StandbyReplicas < 0 {
		bad("standby replicas %d: want 0 or more (--standby-replicas)", cfg.StandbyReplicas)
	}
	switch cfg.GroupProtocol {
	case "", ProtocolClassic:
	case ProtocolStreams:
		if cfg.StandbyReplicas > 2 {
			// group.streams.max.standby.replicas: the broker refuses more.
			bad("standby replicas %d: a streams group allows at most 2 (--standby-replicas)", cfg.StandbyReplicas)
		}
	default:
		bad("group protocol %q: want %s or %s (--group-protocol)", cfg.GroupProtocol, ProtocolClassic, ProtocolStreams)
	}
	for _, p := range []struct {
		field string
		ok    bool
	}{
		{"Deserialization", validPolicy(cfg.Deserialization)},
		{"Processing", validPolicy(cfg.Processing)},
		{"InvalidTime", cfg.InvalidTime >= sgstream.TimestampFail && cfg.InvalidTime <= sgstream.TimestampDeadLetter},
	} {
		if !p.ok {
			bad("%s: unknown policy", p.field)
		}
	}
	if cfg.usesDeadLetter() && cfg.DeadLetterTopic == "" {
		// Finding out at the first bad record, possibly weeks later, would
		// stop the application exactly when the policy was meant to keep
		// it going.
		bad("a dead_letter error policy needs a dead-letter topic")
	}
	if cfg.StoreMemoryBytes != 0 {
		if err := sgstate.CheckMemoryBudget(cfg.StoreMemoryBytes); err != nil {
			bad("%v (--store-memory-bytes, 0 for no budget)", err)
		}
		if p := cfg.Pebble; p != nil && p.Budget != nil {
			bad("both StoreMemoryBytes and Pebble.Budget are set: use one")
		}
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--window-emit-interval", cfg.WindowEmitInterval}, {"--outer-join-emit-interval", cfg.OuterJoinEmitInterval}} {
		if d.v < 0 && d.v != NoEmitThrottle {
			bad("emit interval %v: want NoEmitThrottle or 0 or more (%s)", d.v, d.flag)
		}
	}
	if cfg.ReplicationFactor < -1 {
		bad("replication factor %d: want -1 (the broker's default) or at least 1", cfg.ReplicationFactor)
	}
	return errors.Join(errs...)
}

// guaranteeName is g's name, or "" for a value outside the enumeration.
func guaranteeName(g Guarantee) string {
	if g >= 0 && int(g) < len(guaranteeNames) {
		return guaranteeNames[g]
	}
	return ""
}

func validPolicy(p sgstream.Policy) bool {
	return p >= sgstream.PolicyFail && p <= sgstream.PolicyDeadLetter
}

// usesDeadLetter reports whether a policy of cfg writes to the dead-letter
// topic.
func (cfg *Config) usesDeadLetter() bool {
	return engine.UsesDeadLetter(cfg.Deserialization, cfg.Processing, cfg.InvalidTime)
}

// applyStoreMemory gives every Pebble store of the engine one memory budget
// of StoreMemoryBytes, in a copy of cfg.Pebble (the caller's is not
// changed).
func (cfg *Config) applyStoreMemory() error {
	if cfg.StoreMemoryBytes == 0 {
		return nil
	}
	b, err := sgstate.NewMemoryBudget(cfg.StoreMemoryBytes, cfg.Logger)
	if err != nil {
		return fmt.Errorf("%w: %w (--store-memory-bytes)", ErrConfig, err)
	}
	var p sgstate.PebbleOptions
	if cfg.Pebble != nil {
		p = *cfg.Pebble
	}
	p.Budget = b
	cfg.Pebble = &p
	return nil
}
