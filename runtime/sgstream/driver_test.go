package sgstream

import "testing"

// TopologyTestDriver does not process the records a record writes to
// topics the topology reads in the order they were written: each topic
// partition is a FIFO queue, and the next record comes from the queue whose
// head has the smallest timestamp, picked by the java.util.PriorityQueue of
// Kafka's PartitionGroup (ties included).
func TestDriverProcessesQueuedRecordsLikePartitionGroup(t *testing.T) {
	d := newJDrv(t, func(b *Builder) {
		task := b.task
		send := func(topic, key, value string, ts int64) error {
			return task.Send(topic, -1, []byte(key), []byte(value), ts, nil, nil)
		}
		Source(b, "in", jvSrc("in")).to(nodeFunc[string, *jv](func(r Record[string, *jv]) error {
			if r.Value.s == "ts" {
				// Queue a gets heads 110 then 120, queue b 100: b first,
				// although it was written last.
				for _, w := range []struct {
					topic, value string
					ts           int64
				}{{"a", "a1", r.Timestamp + 10}, {"a", "a2", r.Timestamp + 20}, {"b", "b1", r.Timestamp}} {
					if err := send(w.topic, r.Key, w.value, w.ts); err != nil {
						return err
					}
				}
				return nil
			}
			// Equal heads: the heap yields a, c, b (siftDown moves the
			// last queue, c, to the root after a is polled).
			for _, topic := range []string{"a", "b", "c"} {
				if err := send(topic, r.Key, topic+"1", r.Timestamp); err != nil {
					return err
				}
			}
			return nil
		}))
		for _, topic := range []string{"a", "b", "c"} {
			To(Source(b, "src-"+topic, jvSrc(topic)), "sink-"+topic, "out", jvSink())
		}
	})
	d.pipe("in", "k", "ts", 100)
	d.expectOut("k:b1@100", "k:a1@110", "k:a2@120")
	d.pipe("in", "k", "tie", 200)
	d.expectOut("k:a1@200", "k:c1@200", "k:b1@200")
}
