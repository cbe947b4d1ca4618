package sgstream

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgstate"
)

// testDriver is the in-process engine under runtime/sgtest's Driver, which
// is what tests use. It runs a topology the way Kafka Streams'
// TopologyTestDriver does: every piped record is processed to completion
// (records written to internal topics are piped back in before the call
// returns), stream-time punctuations fire after each record, and the task
// commits after every record it processes, piped or piped back. By default
// there is no record cache and no emit throttle; DriverConfig sets them as
// a TopologyTestDriver test sets statestore.cache.max.bytes and the emit
// interval configs.
//
// Unlike TopologyTestDriver it runs several partitions: give a topic more
// than one partition and records are spread by Kafka's default partitioner
// (murmur2 of the key bytes), one task per sub-topology and partition.
type testDriver struct {
	tp      *topology
	cfg     engine.DriverConfig
	tasks   map[engine.TaskID]*task
	order   []engine.TaskID
	outputs []RawRecord // in the order they were written
	offsets map[string][]int64
	wall    int64

	// Records waiting to be processed, as in TopologyTestDriver's task:
	// one FIFO queue per topic partition, and the non-empty queues in a
	// heap ordered by the timestamp of their head record, exactly as
	// Kafka's PartitionGroup keeps them in a java.util.PriorityQueue
	// (so ties break the same way). Records for global topics are
	// processed first, as TopologyTestDriver processes them as soon as
	// they are written.
	queues  map[partitionKey]*partitionQueue
	heap    []*partitionQueue
	globals []RawRecord

	// caches are the record caches by partition (CacheMaxBytes > 0): the
	// tasks of one partition share one budget, as TopologyTestDriver's one
	// task shares its ThreadCache among the stores of every sub-topology.
	caches map[int32]*sgstate.Cache
}

type partitionKey struct {
	topic     string
	partition int32
}

type partitionQueue struct {
	recs []RawRecord
}

func (q *partitionQueue) head() int64 { return q.recs[0].Timestamp }

// NewDriver implements engine.Topology.
func (tp *topology) NewDriver(cfg engine.DriverConfig) (engine.Driver, error) {
	d, err := newTestDriver(tp, cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// newTestDriver creates a driver for tp.
func newTestDriver(tp *topology, cfg engine.DriverConfig) (*testDriver, error) {
	if cfg.DefaultPartitions <= 0 {
		cfg.DefaultPartitions = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &testDriver{tp: tp, cfg: cfg, tasks: map[engine.TaskID]*task{},
		offsets: map[string][]int64{}, wall: cfg.WallClockStart}
	if err := d.checkCopartitioning(); err != nil {
		return nil, err
	}
	return d, nil
}

// Partitions is the partition count of topic in this driver.
func (d *testDriver) Partitions(topic string) int {
	if n, ok := d.cfg.Partitions[topic]; ok {
		return n
	}
	return d.tp.PartitionsOf(topic, func(t string) int {
		if n, ok := d.cfg.Partitions[t]; ok {
			return n
		}
		return d.cfg.DefaultPartitions
	})
}

func (d *testDriver) checkCopartitioning() error {
	for _, s := range d.tp.SubTopologies() {
		if err := engine.CheckCopartitioned(s, d.Partitions); err != nil {
			return err
		}
	}
	return nil
}

// Pipe processes one input record, and everything it causes, to completion.
// A negative Partition lets the driver choose one with Kafka's default
// partitioner. The offset is assigned by the driver.
func (d *testDriver) Pipe(rec RawRecord) error {
	if d.tp.SubTopologyOf(rec.Topic) == nil {
		return fmt.Errorf("streamgen: test driver: no source reads topic %q", rec.Topic)
	}
	if err := d.enqueue(copyRaw(rec)); err != nil {
		return err
	}
	return d.drain()
}

// enqueue assigns a record its partition and offset and queues it.
func (d *testDriver) enqueue(r RawRecord) error {
	if err := d.place(&r); err != nil {
		return err
	}
	if d.tp.IsGlobal(d.tp.SubTopologyOf(r.Topic)) {
		d.globals = append(d.globals, r)
		return nil
	}
	if d.queues == nil {
		d.queues = map[partitionKey]*partitionQueue{}
	}
	k := partitionKey{r.Topic, r.Partition}
	q := d.queues[k]
	if q == nil {
		q = &partitionQueue{}
		d.queues[k] = q
	}
	q.recs = append(q.recs, r)
	if len(q.recs) == 1 {
		d.offer(q)
	}
	return nil
}

// next removes the record to process next: a global one, else the head
// of the queue with the smallest head timestamp (PartitionGroup#nextRecord).
func (d *testDriver) next() (RawRecord, bool) {
	if len(d.globals) > 0 {
		r := d.globals[0]
		d.globals = d.globals[1:]
		return r, true
	}
	if len(d.heap) == 0 {
		return RawRecord{}, false
	}
	q := d.poll()
	r := q.recs[0]
	q.recs = q.recs[1:]
	if len(q.recs) > 0 {
		d.offer(q)
	}
	return r, true
}

// drain processes queued records until none is left, committing the task
// after each one as TopologyTestDriver's completeAllProcessableWork does
// (for piped records and those piped back from internal topics alike). The
// commit flushes the record cache; what the flush forwards to an internal
// topic is queued, and processed by this loop.
func (d *testDriver) drain() error {
	for {
		r, ok := d.next()
		if !ok {
			return nil
		}
		s := d.tp.SubTopologyOf(r.Topic)
		id := engine.TaskID{Sub: s.ID, Partition: r.Partition}
		if d.tp.IsGlobal(s) {
			id.Partition = engine.GlobalPartition
		}
		t, err := d.taskFor(id)
		if err == nil {
			err = t.Process(&r)
		}
		if err == nil {
			err = t.Commit(nil)
		}
		if err != nil {
			d.clearQueues()
			return err
		}
	}
}

func (d *testDriver) clearQueues() {
	d.queues, d.heap, d.globals = nil, nil, nil
}

// offer and poll are java.util.PriorityQueue's siftUp and siftDown with
// the head timestamp as the comparator, so that queues whose heads have
// equal timestamps come out in the order Kafka Streams picks them.
func (d *testDriver) offer(q *partitionQueue) {
	k := len(d.heap)
	d.heap = append(d.heap, q)
	for k > 0 {
		parent := (k - 1) / 2
		e := d.heap[parent]
		if q.head() >= e.head() {
			break
		}
		d.heap[k] = e
		k = parent
	}
	d.heap[k] = q
}

func (d *testDriver) poll() *partitionQueue {
	top := d.heap[0]
	n := len(d.heap) - 1
	x := d.heap[n]
	d.heap[n] = nil
	d.heap = d.heap[:n]
	if n > 0 {
		k := 0
		for half := n / 2; k < half; {
			child := 2*k + 1
			c := d.heap[child]
			if right := child + 1; right < n && c.head() > d.heap[right].head() {
				child = right
				c = d.heap[child]
			}
			if x.head() <= c.head() {
				break
			}
			d.heap[k] = c
			k = child
		}
		d.heap[k] = x
	}
	return top
}

// place assigns a record its partition (Kafka's default partitioner when
// it has none) and the next offset of that partition.
func (d *testDriver) place(r *RawRecord) error {
	n := d.Partitions(r.Topic)
	if r.Partition < 0 || int(r.Partition) >= n {
		if r.Partition >= int32(n) {
			return fmt.Errorf("streamgen: test driver: topic %q has %d partitions, record asks for partition %d", r.Topic, n, r.Partition)
		}
		r.Partition = choosePartition(r.Key, n)
	}
	offs := d.offsets[r.Topic]
	for len(offs) < n {
		offs = append(offs, 0)
	}
	r.Offset = offs[r.Partition]
	offs[r.Partition]++
	d.offsets[r.Topic] = offs
	return nil
}

// choosePartition is Kafka's default partitioner for keyed records; records
// without a key go to partition 0 (the driver has no batches to stick to).
func choosePartition(key []byte, n int) int32 {
	if key == nil || n <= 1 {
		return 0
	}
	return sgpartition.Partition(key, int32(n))
}

// AdvanceWallClock moves wall-clock time forward and fires the wall-clock
// punctuations that became due, in task id order (sub-topology, then
// partition, as Kafka Streams orders a thread's tasks and as
// TopologyTestDriver's single task runs its sub-topologies' processors). As
// in TopologyTestDriver's advanceWallClockTime, every task commits after its
// punctuations (flushing its record cache), then what they queued is
// processed.
//
// Tasks are created lazily, on their first record, but TopologyTestDriver
// initializes its task when it is constructed, so a wall-clock schedule
// counts from the initial wall clock even for a task that has seen no
// record yet. Every stream task therefore exists before the clock first
// moves: created here while the clock still reads its start, a task
// schedules as it would have at construction.
func (d *testDriver) AdvanceWallClock(by time.Duration) error {
	if err := d.createStreamTasks(); err != nil {
		return err
	}
	d.wall += by.Milliseconds()
	ids := slices.Clone(d.order)
	slices.SortFunc(ids, func(a, b engine.TaskID) int {
		return cmp.Or(cmp.Compare(a.Sub, b.Sub), cmp.Compare(a.Partition, b.Partition))
	})
	for _, id := range ids {
		t := d.tasks[id]
		if err := t.PunctuateWallClock(); err != nil {
			return err
		}
		if err := t.Commit(nil); err != nil {
			return err
		}
	}
	return d.drain()
}

// createStreamTasks creates the task of every partition of every
// sub-topology that is not global (global tasks never punctuate).
func (d *testDriver) createStreamTasks() error {
	for _, s := range d.tp.SubTopologies() {
		if d.tp.IsGlobal(s) {
			continue
		}
		for p := range d.storePartitions(s) {
			if _, err := d.taskFor(engine.TaskID{Sub: s.ID, Partition: int32(p)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Output returns and removes the records written to topic so far, in the
// order they were written.
func (d *testDriver) Output(topic string) []RawRecord {
	var out []RawRecord
	keep := d.outputs[:0]
	for _, r := range d.outputs {
		if r.Topic == topic {
			out = append(out, r)
		} else {
			keep = append(keep, r)
		}
	}
	d.outputs = keep
	return out
}

// OutputAll returns and removes every record written so far, to any topic,
// in the order they were written.
func (d *testDriver) OutputAll() []RawRecord {
	out := d.outputs
	d.outputs = nil
	return out
}

// OutputTopics lists the topics with unread output, sorted.
func (d *testDriver) OutputTopics() []string {
	seen := map[string]bool{}
	var ts []string
	for _, r := range d.outputs {
		if !seen[r.Topic] {
			seen[r.Topic] = true
			ts = append(ts, r.Topic)
		}
	}
	sort.Strings(ts)
	return ts
}

// Store returns a store of the task that owns partition of its
// sub-topology, or an error if that task has not run yet.
func (d *testDriver) Store(name string, partition int32) (sgstate.Store, error) {
	for _, id := range d.order {
		if id.Partition != partition {
			continue
		}
		if s, ok := d.tasks[id].Stores()[name]; ok {
			return s, nil
		}
	}
	return nil, fmt.Errorf("streamgen: test driver: no task on partition %d has store %q yet", partition, name)
}

// Tasks returns the driver's tasks in creation order.
func (d *testDriver) Tasks() []engine.Task {
	out := make([]engine.Task, len(d.order))
	for i, id := range d.order {
		out[i] = d.tasks[id]
	}
	return out
}

// Close closes every task's stores.
func (d *testDriver) Close() error {
	var first error
	for _, id := range d.order {
		if err := d.tasks[id].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

type driverCollector testDriver

// Send records output and re-pipes records for topics the topology reads
// (repartition topics, or output topics that are also sources), as
// TopologyTestDriver does.
func (c *driverCollector) Send(topic string, partition int32, key, value []byte, ts int64, headers []Header, partitionKey []byte) error {
	d := (*testDriver)(c)
	r := copyRaw(RawRecord{Topic: topic, Partition: partition, Key: key, Value: value, Timestamp: ts, Headers: headers})
	if partition < 0 {
		if partitionKey == nil {
			partitionKey = key
		}
		r.Partition = choosePartition(partitionKey, d.Partitions(topic))
	}
	d.outputs = append(d.outputs, r)
	if d.tp.SubTopologyOf(topic) != nil {
		return d.enqueue(r)
	}
	return nil
}

func copyRaw(r RawRecord) RawRecord {
	if r.Key != nil {
		r.Key = append([]byte{}, r.Key...)
	}
	if r.Value != nil {
		r.Value = append([]byte{}, r.Value...)
	}
	if r.Headers != nil {
		r.Headers = append([]Header(nil), r.Headers...)
	}
	return r
}

// KeyPartition is the partition Kafka's default partitioner picks for key
// on topic: runtime/sgtest pipes typed records through it.
func (d *testDriver) KeyPartition(topic string, key []byte) int32 {
	return choosePartition(key, d.Partitions(topic))
}

// TaskStore is the store called store of the task on partition, creating
// the task (with empty stores) when no record reached it yet: Kafka Streams
// assigns every task before the first record, so a test may read a store of
// a partition that saw nothing. A global store lives in the global task
// whatever the partition.
func (d *testDriver) TaskStore(store string, partition int32) (sgstate.Store, error) {
	s, err := d.storeSub(store)
	if err != nil {
		return nil, err
	}
	id := engine.TaskID{Sub: s.ID, Partition: partition}
	if d.tp.IsGlobal(s) {
		id.Partition = engine.GlobalPartition
	} else if n := d.storePartitions(s); partition < 0 || int(partition) >= n {
		return nil, fmt.Errorf("streamgen: test driver: store %q has partitions 0 to %d, not %d", store, n-1, partition)
	}
	t, err := d.taskFor(id)
	if err != nil {
		return nil, err
	}
	return t.Store(store)
}

// StorePartition is the partition whose task holds the serialized key in
// store: Kafka's default partitioner over the partitions of the
// sub-topology that uses the store, or engine.GlobalPartition for a global store.
func (d *testDriver) StorePartition(store string, key []byte) (int32, error) {
	s, err := d.storeSub(store)
	if err != nil {
		return 0, err
	}
	if d.tp.IsGlobal(s) {
		return engine.GlobalPartition, nil
	}
	return choosePartition(key, d.storePartitions(s)), nil
}

// storeSub is the sub-topology that uses store.
func (d *testDriver) storeSub(store string) (*engine.SubTopology, error) {
	for _, s := range d.tp.SubTopologies() {
		for _, name := range s.Stores {
			if name == store {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("streamgen: test driver: no node of the topology uses store %q", store)
}

// storePartitions is the partition count of a sub-topology: that of its
// source topics, which engine.CheckCopartitioned keeps equal.
func (d *testDriver) storePartitions(s *engine.SubTopology) int {
	if len(s.Topics) == 0 {
		return d.cfg.DefaultPartitions
	}
	return d.Partitions(s.Topics[0])
}
