package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/streamgen/streamgen/bench/internal/probe"
	"github.com/twmb/franz-go/pkg/kgo"
)

// limitMain is `harness limit`: the raw franz-go client doing the least a
// stream processor must do, as a child process measured like the
// applications (SimpleBenchmark's consume and consumeproduce):
//
//	consume  read every record of the input topic
//	copy     read and write every record to the sink (acks=all, idempotent)
//	txcopy   the same in Kafka transactions with the consumed offsets,
//	         committed every commit interval (what exactly_once_v2 costs)
//
// It counts records with the probe and runs until SIGTERM.
func limitMain(args []string) int {
	fs := flag.NewFlagSet("limit", flag.ContinueOnError)
	mode := fs.String("mode", "consume", "consume, copy or txcopy")
	brokers := fs.String("brokers", "", "seed brokers")
	topic := fs.String("topic", src1, "input topic")
	out := fs.String("sink", sink, "output topic")
	group := fs.String("group", "", "consumer group and transactional id (txcopy)")
	fromCommitted := fs.Bool("from-committed", false, "copy: start from the group's committed offsets (the latency runs)")
	readCommitted := fs.Bool("read-committed", false, "read committed (consume)")
	commitInterval := fs.Duration("commit-interval", 100*time.Millisecond, "transaction length (txcopy)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	seeds := kgo.SeedBrokers(strings.Split(*brokers, ",")...)
	var err error
	switch *mode {
	case "consume", "copy":
		g := ""
		if *fromCommitted {
			g = *group
		}
		err = runCopy(ctx, seeds, *topic, *out, g, *mode == "copy", *readCommitted)
	case "txcopy":
		err = runTxCopy(ctx, seeds, *topic, *out, *group, *commitInterval)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		return 1
	}
	return 0
}

func runCopy(ctx context.Context, seeds kgo.Opt, topic, out, group string, produce, readCommitted bool) error {
	opts := []kgo.Opt{seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if group != "" {
		opts = append(opts, kgo.ConsumerGroup(group))
	}
	if readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			if fe := fs.Errors(); len(fe) > 0 && fe[0].Err != context.Canceled {
				return fe[0].Err
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			if produce {
				// Not ctx: records still buffered at SIGTERM must be flushed, not failed.
				cl.Produce(context.Background(), &kgo.Record{Topic: out, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}, nil)
			}
			probe.Hit()
		})
	}
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cl.Flush(fctx)
}

func runTxCopy(ctx context.Context, seeds kgo.Opt, topic, out, group string, interval time.Duration) error {
	sess, err := kgo.NewGroupTransactSession(seeds,
		kgo.TransactionalID(group), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets())
	if err != nil {
		return err
	}
	defer sess.Close()
	began := false
	last := time.Now()
	for ctx.Err() == nil {
		// Wake up at least every interval, so the last transaction commits
		// when no more records come.
		pctx, cancel := context.WithTimeout(ctx, interval)
		fs := sess.PollFetches(pctx)
		cancel()
		if fs.IsClientClosed() {
			return nil
		}
		if !began && fs.NumRecords() > 0 {
			if err := sess.Begin(); err != nil {
				return err
			}
			began = true
		}
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(context.Background(), &kgo.Record{Topic: out, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}, nil)
			probe.Hit()
		})
		if began && time.Since(last) >= interval {
			committed, err := sess.End(context.Background(), kgo.TryCommit)
			if err != nil {
				return err
			}
			if !committed {
				fmt.Fprintln(os.Stderr, "limit: a transaction was aborted")
			}
			began = false
			last = time.Now()
		}
	}
	if began {
		ectx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := sess.End(ectx, kgo.TryCommit); err != nil {
			return err
		}
	}
	return nil
}
