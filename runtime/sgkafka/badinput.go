package sgkafka

import (
	"flag"
	"fmt"
	"sync/atomic"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// Bad input: the error policies of the spec (on_error, invalid_timestamp)
// apply to every record a task cannot decode, process or timestamp. This
// file holds what the engine adds to them: run flags that override the
// spec's policies (an operator facing a poison record restarts with
// --on-deserialization-error dead_letter instead of rebuilding, as a Kafka
// Streams operator changes default.deserialization.exception.handler), a
// check of the dead-letter topic before anything runs, and counters of
// the bad records skipped and dead-lettered.

// policyFlags are the run flags overriding the spec's error policies.
type policyFlags struct {
	deser, proc, invalidTime, deadLetterTopic string
}

// addPolicyFlags registers the policy flags on fs with the spec's settings
// (or the environment's) as defaults.
func addPolicyFlags(fs *flag.FlagSet, app *sgapp.App) *policyFlags {
	p := &policyFlags{}
	fs.StringVar(&p.deser, "on-deserialization-error", env("ON_DESERIALIZATION_ERROR", app.Deserialization.String()),
		"fail, continue or dead_letter: what to do with a record whose key or value does not decode; default from the spec's on_error (env STREAMGEN_ON_DESERIALIZATION_ERROR)")
	fs.StringVar(&p.proc, "on-processing-error", env("ON_PROCESSING_ERROR", app.Processing.String()),
		"fail, continue or dead_letter: what to do with a record whose processing fails or panics; default from the spec's on_error (env STREAMGEN_ON_PROCESSING_ERROR)")
	fs.StringVar(&p.invalidTime, "invalid-timestamp", env("INVALID_TIMESTAMP", app.InvalidTime.String()),
		"fail, skip, partition_time or dead_letter: what to do with a record whose timestamp is negative; default from the spec (env STREAMGEN_INVALID_TIMESTAMP)")
	fs.StringVar(&p.deadLetterTopic, "dead-letter-topic", env("DEAD_LETTER_TOPIC", app.DeadLetterTopic),
		"topic the dead_letter policies write to; default from the spec (env STREAMGEN_DEAD_LETTER_TOPIC)")
	return p
}

// errorPolicies is the resolved form of policyFlags.
type errorPolicies struct {
	deser, proc     sgstream.Policy
	invalidTime     sgstream.TimestampPolicy
	deadLetterTopic string
}

// resolve parses the flags.
func (p *policyFlags) resolve() (errorPolicies, error) {
	var out errorPolicies
	var err error
	if out.deser, err = sgstream.ParsePolicy(p.deser); err != nil {
		return out, fmt.Errorf("streamgen: run: --on-deserialization-error %q: want fail, continue or dead_letter", p.deser)
	}
	if out.proc, err = sgstream.ParsePolicy(p.proc); err != nil {
		return out, fmt.Errorf("streamgen: run: --on-processing-error %q: want fail, continue or dead_letter", p.proc)
	}
	if out.invalidTime, err = sgstream.ParseTimestampPolicy(p.invalidTime); err != nil {
		return out, fmt.Errorf("streamgen: run: --invalid-timestamp %q: want fail, skip, partition_time or dead_letter", p.invalidTime)
	}
	out.deadLetterTopic = p.deadLetterTopic
	if sgstream.UsesDeadLetter(out.deser, out.proc, out.invalidTime) && out.deadLetterTopic == "" {
		return out, fmt.Errorf("streamgen: run: a dead_letter policy needs a dead-letter topic: set --dead-letter-topic or the spec's on_error.dead_letter_topic")
	}
	return out, nil
}

// usesDeadLetter reports whether a policy of cfg writes to the dead-letter
// topic.
func (cfg *Config) usesDeadLetter() bool {
	return sgstream.UsesDeadLetter(cfg.Deserialization, cfg.Processing, cfg.InvalidTime)
}

// checkPolicies rejects a dead_letter policy without a topic: finding out
// at the first bad record, possibly weeks later, would stop the
// application exactly when the policy was meant to keep it going.
func (cfg *Config) checkPolicies() error {
	if cfg.usesDeadLetter() && cfg.DeadLetterTopic == "" {
		return fmt.Errorf("%w: a dead_letter error policy needs a dead-letter topic", ErrConfig)
	}
	return nil
}

// badRecords counts the bad records of committed work: a record skipped or
// dead-lettered in a transaction that aborted is processed again and
// counted once, when its transaction commits.
type badRecords struct {
	skipped      atomic.Int64
	deadLettered atomic.Int64
}

// Skipped is the number of bad records skipped (the continue policy, or a
// negative timestamp under skip or partition_time) in committed work since
// the engine started.
func (e *Engine) Skipped() int64 { return e.bad.skipped.Load() }

// DeadLettered is the number of bad records written to the dead-letter
// topic in committed work since the engine started.
func (e *Engine) DeadLettered() int64 { return e.bad.deadLettered.Load() }

// countCommitted adds what the task skipped and dead-lettered since its
// last commit to the engine's counters; the worker calls it once the
// task's work is committed.
func (e *Engine) countCommitted(tk *task) {
	s := tk.t.Stats
	e.bad.skipped.Add(s.Skipped - tk.counted.Skipped)
	e.bad.deadLettered.Add(s.DeadLettered - tk.counted.DeadLettered)
	tk.counted = s
}

// countGlobal is countCommitted for the global tables' tasks: a bad
// record of a global topic is as much bad input as one of a stream task's.
func (e *Engine) countGlobal(g *globalThread) {
	if len(g.counted) != len(g.tasks) {
		g.counted = make([]sgstream.TaskStats, len(g.tasks))
	}
	for i, t := range g.tasks {
		s := t.Stats
		e.bad.skipped.Add(s.Skipped - g.counted[i].Skipped)
		e.bad.deadLettered.Add(s.DeadLettered - g.counted[i].DeadLettered)
		g.counted[i] = s
	}
}

// logTotals logs the engine's counters when it stops, so an operator (and
// a test reading the log) sees how much bad input a run met.
func (e *Engine) logTotals() {
	e.log.Info("totals", "processed", e.processed.Load(), "skipped", e.Skipped(), "dead_lettered", e.DeadLettered(),
		"commits", e.commits.Load(), "aborts", e.aborts.Load())
}
