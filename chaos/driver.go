package chaos

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// driver produces keyed integers to the input topic at a steady rate, as
// Kafka's EosTestDriver does: string keys 0..keys-1, int32 values
// 0..9999 (4 bytes big-endian, like Java's IntegerSerializer), with the
// idempotent producer and Kafka's default (murmur2) partitioner, so a key's
// records land on the partition every output of that key lands on.
type driver struct {
	brokers []string
	topic   string
	records int
	rate    int // records per second
	keys    int
	rng     *rand.Rand

	sent   atomic.Int64
	acked  atomic.Int64
	errMu  sync.Mutex
	errors []error
}

// run produces until all records are sent and acknowledged, or ctx ends.
// Delivery retries forever: while the broker is down the records wait in
// the producer's buffer (the broker-fault runs depend on it).
func (d *driver) run(ctx context.Context) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(d.brokers...),
		kgo.DefaultProduceTopic(d.topic),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(1<<20),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for i := 0; i < d.records; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		due := int(time.Since(start).Seconds()*float64(d.rate)) + 1
		for ; i < d.records && i < due; i++ {
			v := make([]byte, 4)
			binary.BigEndian.PutUint32(v, uint32(d.rng.IntN(10000)))
			r := &kgo.Record{Key: []byte(strconv.Itoa(d.rng.IntN(d.keys))), Value: v}
			d.sent.Add(1)
			cl.Produce(ctx, r, func(r *kgo.Record, err error) {
				if err != nil {
					d.errMu.Lock()
					d.errors = append(d.errors, err)
					d.errMu.Unlock()
					return
				}
				d.acked.Add(1)
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	d.errMu.Lock()
	defer d.errMu.Unlock()
	if len(d.errors) > 0 {
		return fmt.Errorf("driver: %d records not delivered, first: %w", len(d.errors), d.errors[0])
	}
	return nil
}
