package sgkafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// waitForBrokers returns once a seed broker answers a metadata request.
// While none does — the cluster is down or still starting — it waits, as
// Kafka Streams does, logging every 10 s, until ctx ends. Errors that
// waiting does not cure (authentication, TLS, authorization) end it at
// once with a clear message.
func (e *Engine) waitForBrokers(ctx context.Context) error {
	cl, err := kgo.NewClient(e.clientOpts(kgo.RetryTimeout(5*time.Second), kgo.DialTimeout(5*time.Second))...)
	if err != nil {
		return fmt.Errorf("%w: kafka client: %w", ErrConfig, err)
	}
	defer cl.Close()
	began := time.Now()
	lastLog := time.Time{}
	firstReadEOFs := 0
	for {
		reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := kmsg.NewPtrMetadataRequest().RequestWith(reqCtx, cl)
		cancel()
		if err == nil {
			if !lastLog.IsZero() {
				e.log.Info("brokers reachable", "brokers", strings.Join(e.cfg.Brokers, ","), "waited", time.Since(began).Round(time.Millisecond).String())
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A broker that closes the connection before answering is either
		// one asking for SASL (it always will) or one going down or
		// still coming up (it soon stops): a few in a row are waited for.
		var eof *kgo.ErrFirstReadEOF
		if errors.As(err, &eof) {
			firstReadEOFs++
		} else {
			firstReadEOFs = 0
		}
		briefEOF := firstReadEOFs > 0 && firstReadEOFs <= 3
		if !briefEOF && !retriableUnreachable(err) {
			return fmt.Errorf("streamgen: connecting to %s: %w", strings.Join(e.cfg.Brokers, ","), err)
		}
		if time.Since(lastLog) >= 10*time.Second {
			e.log.Warn("waiting for brokers", "brokers", strings.Join(e.cfg.Brokers, ","), "waited", time.Since(began).Round(time.Second).String(), "error", err.Error())
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// maxStartAttempts bounds how often start goes back to waiting for the
// brokers after losing them mid-setup, so that an error misread as a
// lost broker still ends the run.
const maxStartAttempts = 20

// start brings the engine from CREATED to REBALANCING: it waits for the
// brokers, checks and creates topics (setup) and catches global tables up
// before any worker joins the group, so no task processes a record
// against a partial global table. A broker that dies or restarts in the
// middle — a rolling restart, a crash — sends it back to waiting for the
// brokers instead of ending the application; errors that waiting does
// not cure (configuration, authentication, missing topics) end it.
func (e *Engine) start(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		// waitForBrokers decides itself what is worth waiting for (a
		// connection closed before any answer, for one, only a few times
		// in a row: it may be a missing SASL configuration).
		if err := e.waitForBrokers(ctx); err != nil {
			return err
		}
		err := e.setup(ctx)
		if err == nil {
			e.setState(Rebalancing)
			if e.hasGlobal() {
				e.global, err = e.openGlobal(ctx)
			}
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !lostBroker(err) || attempt >= maxStartAttempts {
			return err
		}
		e.log.Warn("lost the brokers while starting; waiting for them again", "attempt", attempt, "error", err.Error())
		if e.base != nil {
			e.base.Close()
			e.base = nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// lostBroker tells a failure caused by a broker going away (refused or
// closed connections, timeouts, retriable broker errors) from one that
// retrying cannot cure. A connection the broker closes before its first
// answer is one: waitForBrokers already had an answer with the same
// credentials, so it is not the missing-SASL case franz-go suspects.
func lostBroker(err error) bool {
	if errors.Is(err, ErrConfig) || isFatalKafka(err) {
		return false
	}
	var eof *kgo.ErrFirstReadEOF
	var ke *kerr.Error
	var ne net.Error
	switch {
	case errors.As(err, &eof), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne):
		return true
	case errors.As(err, &ke):
		return ke.Retriable
	}
	return kgo.IsRetryableBrokerErr(err)
}

// retriableUnreachable tells an unreachable or restarting cluster (worth
// waiting for) from a misconfiguration (not).
func retriableUnreachable(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	msg := err.Error()
	for _, fatal := range []string{"SASL", "sasl", "tls:", "x509", "certificate", "authentication", "authorization"} {
		if strings.Contains(msg, fatal) {
			return false
		}
	}
	return true
}

// isFatalKafka reports errors after which a worker must stop: the
// principal lacks a permission, or another instance took over this
// instance's transactional id (a zombie must not go on). Everything else
// a produce, flush or transaction end returns — a broker that died or
// restarted, a coordinator that moved, a transaction the coordinator
// aborted after its timeout while the broker was away — is survived by
// aborting and going back to the last committed state.
func isFatalKafka(err error) bool {
	return errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed) ||
		errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.TransactionalIDNotFound) ||
		errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, context.Canceled)
}

// errTransient marks a worker failure that comes from Kafka (a broker
// down or restarted, a transaction the coordinator aborted meanwhile, a
// restoration cut off) rather than from the topology: the worker is
// restarted instead of stopping the application.
var errTransient = errors.New("transient kafka failure")

type transientError struct{ err error }

func (t transientError) Error() string { return t.err.Error() }
func (t transientError) Unwrap() []error {
	return []error{t.err, errTransient}
}

// transient marks err as survivable unless it is fatal (permissions, a
// fenced producer, a changelog in a layout the store cannot read).
func transient(err error) error {
	if err == nil || isFatalKafka(err) || errors.Is(err, ErrChangelogLayout) {
		return err
	}
	return transientError{err}
}

// maxWorkerRestarts bounds restarts in a row without a successful commit
// in between, so that a failure that repeats deterministically still
// stops the application.
const maxWorkerRestarts = 20

// runWorker runs worker w and, when it fails on a transient Kafka error,
// replaces it with a fresh one (new client, new producer session: what
// Kafka Streams does when a stream thread's producer must be reset). Its
// tasks were closed without committing, so the new worker restores them
// from their last committed state and reprocesses from the committed
// offsets: exactly once still holds. With static membership the new
// member takes the old one's place in the group.
func (e *Engine) runWorker(ctx context.Context, w *worker, idx int) error {
	restarts := 0
	for {
		commitsBefore := e.commits.Load()
		err := w.run(ctx)
		if err != nil && ctx.Err() != nil && errors.Is(err, errTransient) {
			// Stopping while Kafka is unreachable: the last commit could
			// not be made. Nothing is lost — the open transaction is
			// aborted by its coordinator, the uncommitted store writes were
			// dropped, and the next start reprocesses from the last commit
			// — so this is a clean stop, told in the log.
			e.log.Warn("stopped without the final commit; the next start resumes from the last commit", "worker", idx, "error", err.Error())
			return nil
		}
		if err == nil || ctx.Err() != nil || !errors.Is(err, errTransient) {
			return err
		}
		if e.commits.Load() > commitsBefore {
			restarts = 0
		}
		restarts++
		if restarts > maxWorkerRestarts {
			return fmt.Errorf("streamgen: worker %d failed %d times in a row, giving up: %w", idx, restarts-1, err)
		}
		e.log.Warn("worker failed on a kafka error; restarting it from the last commit", "worker", idx, "restart", restarts, "error", err.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(min(restarts, 5)) * time.Second):
		}
		nw, nerr := newWorker(e, idx)
		if nerr != nil {
			return nerr
		}
		e.mu.Lock()
		for i, old := range e.workers {
			if old == w {
				e.workers[i] = nw
			}
		}
		e.mu.Unlock()
		w = nw
	}
}

// fenceZombie initializes the worker's transactional producer at once,
// as Kafka Streams does when a stream thread starts: the coordinator then
// aborts whatever transaction a crashed predecessor with the same
// transactional id left open. Done lazily (at the first transaction), the
// open transaction would hold back the last stable offset of every
// partition it touched until its timeout, and stall restorations reading
// those changelogs read committed.
func (w *worker) fenceZombie() {
	if !w.eos {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := w.cl.ProducerID(ctx); err != nil {
		w.log.Warn("initializing the transactional producer", "error", err.Error())
	}
}
