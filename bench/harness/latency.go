package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// latency measures end-to-end latency of streamprocesswithsink (and of the
// limit's copy): the application starts with its group's offsets already at
// the end of the input, records are produced at a steady rate with the
// current time as their timestamp, which both systems carry to the sink,
// and a read-committed consumer of the sink takes its receive time minus
// that timestamp. Under exactly_once_v2 this includes waiting for the
// transaction to commit, which is what a reader sees.
func (r *runner) latency(ctx context.Context, sys, g string, res *result) {
	cfg := r.cfg
	appID := fmt.Sprintf("bench-%s-latency-%s-%s", sys, shortG(g), r.stamp)
	label := fmt.Sprintf("latency %s %s", sys, g)
	defer r.cleanup(ctx, appID)
	fail := func(err error) {
		r.logf("%s: %v", label, err)
		res.Error = joinErr(res.Error, "latency: "+err.Error())
	}
	// Start at the end of the input: commit the group's offsets there.
	ends, err := r.adm.ListEndOffsets(ctx, src1)
	if err != nil {
		fail(err)
		return
	}
	offs := make(kadm.Offsets)
	ends.Each(func(o kadm.ListedOffset) {
		offs.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset, LeaderEpoch: -1})
	})
	if _, err := r.adm.CommitOffsets(ctx, appID, offs); err != nil {
		fail(err)
		return
	}
	// The sink consumer starts at the current end too.
	sinkEnds, err := r.adm.ListEndOffsets(ctx, sink)
	if err != nil {
		fail(err)
		return
	}
	start := make(map[string]map[int32]kgo.Offset)
	start[sink] = map[int32]kgo.Offset{}
	sinkEnds.Each(func(o kadm.ListedOffset) { start[sink][o.Partition] = kgo.NewOffset().At(o.Offset) })
	cons, err := kgo.NewClient(kgo.SeedBrokers(cfg.brokers...), kgo.ConsumePartitions(start),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		fail(err)
		return
	}
	defer cons.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(cfg.brokers...), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		fail(err)
		return
	}
	defer prod.Close()

	var argv []string
	switch sys {
	case sysLimit:
		self, _ := os.Executable()
		mode := "copy"
		if g == eos {
			mode = "txcopy"
		}
		argv = []string{self, "limit", "-mode", mode, "-brokers", strings.Join(cfg.brokers, ","), "-group", appID,
			"-commit-interval", cfg.eosCommit.String(), "-from-committed"}
	default:
		argv = r.argv("streamprocesswithsink", sys, g, appID, cfg.stateDir(appID), "")
	}
	c, err := startChild(label, argv, []string{"STREAMGEN_BENCH_EXPECT=1000000000"}, "", filepath.Join(r.logDir, appID+".log"))
	if err != nil {
		fail(err)
		return
	}
	defer c.stop(time.Minute)

	// Warm-up records until the application has processed one.
	value := make([]byte, cfg.valueSize)
	firstSeen := make(chan error, 1)
	go func() {
		_, err := c.waitFirst(cfg.timeout)
		firstSeen <- err
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
warm:
	for i := 0; ; i++ {
		select {
		case err := <-firstSeen:
			if err != nil {
				fail(err)
				return
			}
			break warm
		case <-tick.C:
			prod.Produce(ctx, &kgo.Record{Topic: src1, Key: []byte(fmt.Sprintf("w%d", i)), Value: value}, nil)
		}
	}
	time.Sleep(time.Second) // the warm-up records drain

	// Measured records, tagged by a key prefix, at a steady rate.
	const rate, seconds = 2000, 10
	n := rate * seconds
	var mu sync.Mutex
	var lat []float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(seconds*time.Second + 2*time.Minute)
		for time.Now().Before(deadline) {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			fs := cons.PollFetches(pctx)
			cancel()
			now := time.Now()
			fs.EachRecord(func(rec *kgo.Record) {
				if len(rec.Key) > 0 && rec.Key[0] == 'm' {
					mu.Lock()
					lat = append(lat, ms(now.Sub(rec.Timestamp)))
					mu.Unlock()
				}
			})
			mu.Lock()
			got := len(lat)
			mu.Unlock()
			if got >= n {
				return
			}
		}
	}()
	began := time.Now()
	for i := 0; i < n; i++ {
		due := began.Add(time.Duration(i) * time.Second / rate)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		prod.Produce(ctx, &kgo.Record{Topic: src1, Key: []byte(fmt.Sprintf("m%d", i)), Value: value, Timestamp: time.Now()}, nil)
	}
	prod.Flush(ctx)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(lat) < n {
		fail(fmt.Errorf("%d of %d records reached %s", len(lat), n, sink))
		return
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	res.LatencyP50MS, res.LatencyP99MS = &p50, &p99
	r.logf("%s: p50 %.1f ms, p99 %.1f ms at %d records/s", label, p50, p99, rate)
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
