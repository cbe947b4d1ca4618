package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// The rolling-operations schedule (issue #16): what operators do to a
// running application, one phase after the other while the driver keeps
// its pace — a rolling restart of every instance as Kubernetes does it
// (SIGTERM, wait until the instance is RUNNING again, next); scaling out
// from 3 to 5 instances; scaling in to 2; and a kill -9 of the instance
// that holds the most tasks. The EOS verifier checks the whole run after.
// Each phase is measured: the longest pause in any output partition, the
// restorations its task moves caused (and how many restored a changelog
// from its start), and how long until every task runs again.

// minGap is the shortest pause between two arrivals in an output
// partition that outputWatch records.
const minGap = 100 * time.Millisecond

// outputGap is a pause in one output partition: records arrived at at
// after none for d.
type outputGap struct {
	at time.Time
	d  time.Duration
}

// arrived records records of partition tp arriving at now (w.mu held).
func (w *outputWatch) arrived(tp string, now time.Time) {
	if last, ok := w.last[tp]; ok && now.Sub(last) > minGap {
		w.gaps = append(w.gaps, outputGap{at: now, d: now.Sub(last)})
	}
	w.last[tp] = now
}

// longestGap is the longest pause of any output partition between from
// and to: the pauses that ended in it, and those still open at to.
func (w *outputWatch) longestGap(from, to time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var longest time.Duration
	for _, g := range w.gaps {
		if g.at.After(from) && !g.at.After(to) {
			longest = max(longest, min(g.d, g.at.Sub(from)))
		}
	}
	for _, last := range w.last {
		if last.Before(from) {
			last = from
		}
		if last.Before(to) {
			longest = max(longest, to.Sub(last))
		}
	}
	return longest
}

// Phase is the measurement of one phase of the rolling schedule.
type Phase struct {
	Name string
	// Gap is the longest pause of any output partition during the phase.
	Gap time.Duration
	// Restores are the task store restorations the phase caused, Scratch
	// those that restored a changelog from its start; Restored is the
	// records they restored, MostRestored the largest of one.
	Restores, Scratch      int
	Restored, MostRestored int64
	// Settled is how long after the phase began every task ran again.
	Settled time.Duration
}

func (p Phase) String() string {
	return fmt.Sprintf("rolling: %s: longest output gap %s, %d store restorations (%d from scratch) of %d records (most %d), every task running after %s",
		p.Name, p.Gap.Round(time.Millisecond), p.Restores, p.Scratch, p.Restored, p.MostRestored, p.Settled.Round(time.Millisecond))
}

// driveRolling writes the input while the phases play; they begin once a
// fifth of the input is in, so the stores hold state, and the driver must
// still be writing when they end for the gaps to mean something.
func (r *chaosRun) driveRolling(ctx context.Context, seed uint64, watch *outputWatch) error {
	drv := &driver{brokers: r.cfg.Brokers, topic: inputTopic, records: r.cfg.Records, rate: r.cfg.Rate, keys: r.cfg.Keys,
		rng: rand.New(rand.NewPCG(seed, 0xda7a))}
	drvDone := make(chan error, 1)
	go func() { drvDone <- drv.run(ctx) }()
	waitFor(ctx, 10*time.Minute, func() error {
		if drv.acked.Load() < int64(r.cfg.Records/5) {
			return errNotYet
		}
		return nil
	})
	tasks, err := r.settledTasks(ctx)
	if err != nil {
		return err
	}
	for _, ph := range []struct {
		name string
		do   func() error
	}{
		{"rolling restart", r.rollingRestart},
		{"scale 3 to 5", func() error { return r.scaleTo(5) }},
		{"scale 5 to 2", func() error { return r.scaleTo(2) }},
		{"kill -9 of the busiest", r.killBusiest},
	} {
		p, err := r.measure(ctx, ph.name, tasks, watch, ph.do)
		if err != nil {
			return fmt.Errorf("phase %s: %w", ph.name, err)
		}
		r.res.Phases = append(r.res.Phases, p)
		fmt.Fprintln(r.cfg.Out, p)
	}
	if sent := drv.sent.Load(); sent >= int64(r.cfg.Records) {
		fmt.Fprintf(r.cfg.Out, "rolling: warning: the driver finished before the last phase ended; gaps are not measured under load (raise -records)\n")
	}
	return <-drvDone
}

// measure runs one phase and waits until every task runs again.
func (r *chaosRun) measure(ctx context.Context, name string, tasks int, watch *outputWatch, do func() error) (Phase, error) {
	began := time.Now()
	if err := do(); err != nil {
		return Phase{}, err
	}
	if err := r.waitAllTasks(ctx, tasks); err != nil {
		return Phase{}, err
	}
	p := Phase{Name: name, Settled: time.Since(began)}
	// The output pauses until the first transaction after the move
	// commits: give it a commit interval and a poll to show.
	sleep(ctx, r.cfg.CommitInterval+time.Second)
	p.Gap = watch.longestGap(began, time.Now())
	for _, in := range append(slices.Clone(r.insts), r.retired...) {
		for _, l := range in.logged("restoring store") {
			if !l.at().Before(began) && l.num("from_offset") == 0 && l.num("to_offset") > 0 {
				p.Scratch++
			}
		}
		for _, l := range in.logged("store restored") {
			if !l.at().Before(began) {
				p.Restores++
				p.Restored += l.num("records")
				p.MostRestored = max(p.MostRestored, l.num("records"))
			}
		}
	}
	return p, nil
}

// runningTasks is the number of active tasks the live instances say they
// run (each one's last rebalance line), -1 while one is not RUNNING.
func (r *chaosRun) runningTasks() int {
	n := 0
	for _, in := range r.insts {
		rb := in.logged("rebalance")
		if !in.alive() || !in.isRunning() || len(rb) == 0 {
			return -1
		}
		n += rb[len(rb)-1].tasks()
	}
	return n
}

// settledTasks waits until the live instances run the same number of
// tasks for two seconds, the topology's task count.
func (r *chaosRun) settledTasks(ctx context.Context) (int, error) {
	last, since := -1, time.Now()
	err := waitFor(ctx, 3*time.Minute, func() error {
		n := r.runningTasks()
		if n != last || n <= 0 {
			last, since = n, time.Now()
			return errNotYet
		}
		if time.Since(since) < 2*time.Second {
			return errNotYet
		}
		return nil
	})
	return last, err
}

// waitAllTasks waits until the live instances run tasks tasks.
func (r *chaosRun) waitAllTasks(ctx context.Context, tasks int) error {
	return waitFor(ctx, 5*time.Minute, func() error {
		for _, in := range r.insts {
			if err := in.exitedBadly(); err != nil {
				return err
			}
		}
		if n := r.runningTasks(); n != tasks {
			return fmt.Errorf("%w: %d of %d tasks running", errNotYet, n, tasks)
		}
		return nil
	})
}

// rollingRestart restarts each instance in turn, waiting for it to be
// RUNNING again before the next, as a Kubernetes rolling update does with
// a readiness probe.
func (r *chaosRun) rollingRestart() error {
	for _, in := range r.insts {
		if err := in.stop(2 * time.Minute); err != nil {
			return err
		}
		if err := in.start(); err != nil {
			return err
		}
		r.res.CleanRestarts++
		if err := waitFor(context.Background(), 3*time.Minute, func() error { return runningOrFailed(in) }); err != nil {
			return fmt.Errorf("%s not RUNNING after its restart: %w", in.name, err)
		}
	}
	return nil
}

// scaleTo starts new instances or stops the newest ones (SIGTERM, for
// good) until n run.
func (r *chaosRun) scaleTo(n int) error {
	for len(r.insts) < n {
		in := r.newInstance(len(r.insts) + len(r.retired))
		if err := in.start(); err != nil {
			return err
		}
		r.insts = append(r.insts, in)
	}
	for len(r.insts) > n {
		in := r.insts[len(r.insts)-1]
		if err := in.stop(2 * time.Minute); err != nil {
			return err
		}
		r.insts = r.insts[:len(r.insts)-1]
		r.retired = append(r.retired, in)
	}
	return nil
}

// killBusiest kills -9 the instance running the most tasks and starts it
// again once the session timeout has moved its tasks to the others.
func (r *chaosRun) killBusiest() error {
	var busiest *instance
	most := -1
	for _, in := range r.insts {
		if rb := in.logged("rebalance"); len(rb) > 0 && rb[len(rb)-1].tasks() > most {
			busiest, most = in, rb[len(rb)-1].tasks()
		}
	}
	if busiest == nil {
		return fmt.Errorf("no instance runs a task")
	}
	busiest.kill9()
	r.res.Kills++
	sleep(context.Background(), r.cfg.SessionTimeout+2*time.Second)
	return busiest.start()
}
