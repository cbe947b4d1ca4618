package sgkafka

import (
	"sync/atomic"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// Bad input: the error policies of the spec (on_error, invalid_timestamp)
// apply to every record a task cannot decode, process or timestamp. This
// file holds what the engine adds to them: counters of the bad records
// skipped and dead-lettered. Config.Validate checks the dead-letter topic
// before anything runs; the run flags that override the spec's policies are
// package sgrun's.

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
	s := tk.t.Stats()
	e.bad.skipped.Add(s.Skipped - tk.counted.Skipped)
	e.bad.deadLettered.Add(s.DeadLettered - tk.counted.DeadLettered)
	tk.counted = s
}

// countGlobal is countCommitted for the global tables' tasks: a bad
// record of a global topic is as much bad input as one of a stream task's.
func (e *Engine) countGlobal(g *globalThread) {
	if len(g.counted) != len(g.tasks) {
		g.counted = make([]engine.TaskStats, len(g.tasks))
	}
	for i, t := range g.tasks {
		s := t.Stats()
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
