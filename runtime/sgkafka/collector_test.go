package sgkafka

import (
	"bytes"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestArenaCopies pins what the collector's copies must keep: a nil value
// (a tombstone) stays nil and an empty one stays empty, a copy does not
// alias the caller's buffer (sinks reuse theirs), a copy is not changed by
// the copies after it, and a copy too big for a chunk is its own.
func TestArenaCopies(t *testing.T) {
	var a byteArena
	if k, v, c := a.copies(nil, nil); k != nil || v != nil || c != nil {
		t.Fatalf("nil key and value came back as %q, %q (chunk %v): a tombstone would be lost", k, v, c)
	}
	if k, v, _ := a.copies([]byte{}, []byte{}); k == nil || v == nil || len(k)+len(v) != 0 {
		t.Fatalf("empty key and value came back as %v, %v", k, v)
	}
	buf := []byte("value one")
	_, first, _ := a.copies([]byte("k"), buf)
	buf[0] = 'X' // the sink reuses its encoding buffer
	var later [][]byte
	for i := 0; i < 2*chunkSize/len(buf); i++ { // fills a chunk and starts another
		_, v, _ := a.copies(nil, []byte("value two"))
		later = append(later, v)
	}
	if string(first) != "value one" {
		t.Fatalf("the copy aliases the caller's buffer or was overwritten: %q", first)
	}
	for i, c := range later {
		if string(c) != "value two" {
			t.Fatalf("copy %d is %q", i, c)
		}
	}
	if cap(first) != len(first) {
		t.Fatalf("a copy has room past its end (cap %d, len %d): an append would write into the next one", cap(first), len(first))
	}
	big := bytes.Repeat([]byte("x"), arenaMax+1)
	_, got, c := a.copies(nil, big)
	big[0] = 'y'
	if got[0] != 'x' || len(got) != arenaMax+1 || c != nil {
		t.Fatal("a large value was not copied whole into its own allocation")
	}
}

// TestArenaReusesOnlyReleasedChunks: a chunk is carved again only once
// every record carved from it was released (franz-go called its promise),
// whether a release came before or after the chunk was sealed.
func TestArenaReusesOnlyReleasedChunks(t *testing.T) {
	var a byteArena
	value := bytes.Repeat([]byte("v"), 1000)
	fill := func() (recs []*kgo.Record) { // carves one chunk full, and one more record
		for i := 0; i <= chunkSize/len(value); i++ {
			k, v, c := a.copies(nil, value)
			recs = append(recs, &kgo.Record{Key: k, Value: v, Context: c})
		}
		return recs
	}
	first := fill() // chunk A full, the last record in chunk B
	chunkA, lastA := first[0].Context, first[len(first)-2]
	if lastA.Context != chunkA || first[len(first)-1].Context == chunkA {
		t.Fatal("test setup: the records of the first chunk are not where expected")
	}
	released(first[0]) // before A is sealed
	next := fill()     // fills B, carves from C
	for _, r := range first[1 : len(first)-2] {
		released(r)
	}
	third := fill() // A still has lastA pending: not carved again
	for _, r := range third {
		if r.Context == chunkA {
			t.Fatal("a chunk was carved again while franz-go still held a record in it")
		}
	}
	released(lastA)
	released(first[len(first)-1])
	for _, r := range next {
		released(r)
	}
	if got := fill(); got[len(got)-1].Context != chunkA {
		t.Fatal("a released chunk was not carved again")
	}
	for _, r := range third {
		if !bytes.Equal(r.Value, value) {
			t.Fatal("carving a reused chunk overwrote a record still pending")
		}
	}
}

// TestCollectorReusesFetchedRecord: the first record sent while a fetched
// record is processed is that record, cleared of everything it was
// fetched with; later ones are new records.
func TestCollectorReusesFetchedRecord(t *testing.T) {
	fetched := &kgo.Record{Topic: "in", Partition: 3, Offset: 42, ProducerID: 7, ProducerEpoch: 2, LeaderEpoch: 5,
		Key: []byte("k"), Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "h"}}, Attrs: kgo.RecordAttrs{}}
	w := &worker{cur: fetched, outs: newOutTopics(&Engine{parts: map[string]int{"out": 2}})}
	// A client without a broker: the record is buffered, then fails.
	var err error
	if w.cl, err = kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(time.Second)); err != nil {
		t.Fatal(err)
	}
	defer w.cl.Close()
	w.producedFn = w.produced
	c := (*collector)(w)
	if err := c.Send("out", 1, []byte("key"), []byte("value"), 1000, nil, nil); err != nil {
		t.Fatal(err)
	}
	r := fetched
	if w.cur != nil || r.Topic != "out" || r.Partition != 1 || string(r.Key) != "key" || string(r.Value) != "value" ||
		r.Timestamp.UnixMilli() != 1000 || r.Offset != 0 || r.ProducerID != 0 || r.ProducerEpoch != 0 ||
		r.LeaderEpoch != 0 || r.Headers != nil {
		t.Fatalf("the record sent is not the fetched one overwritten whole: %+v", r)
	}
	if second := w.record(); second == fetched || second == nil {
		t.Fatal("a second record sent for the same input reuses the first")
	}
}

// TestOutTopicPartition: Kafka's default partitioner, by the partition key
// when there is one, else by the key, else round robin; the partition
// count is asked for once.
func TestOutTopicPartition(t *testing.T) {
	e := &Engine{parts: map[string]int{"out": 4}, changelogs: map[string]bool{"app-s-changelog": true}}
	e.cfg.DeadLetterTopic = "dlq"
	o := newOutTopics(e)
	out := o.get("out")
	if o.get("out") != out || out.changelog || out.deadLetter {
		t.Fatalf("topic entry %+v", out)
	}
	if !o.get("app-s-changelog").changelog || !o.get("dlq").deadLetter || o.get("out") != out {
		t.Fatal("changelog or dead-letter topic not recognised, or the entry of a topic changed")
	}
	key, base := []byte("order-17"), []byte("customer-3")
	if p, _ := out.partition(e, key, nil); p != sgpartition.Partition(key, 4) {
		t.Fatalf("keyed record went to %d", p)
	}
	if p, _ := out.partition(e, key, base); p != sgpartition.Partition(base, 4) {
		t.Fatalf("record with a partition key went to %d, not by that key", p)
	}
	delete(e.parts, "out") // a second lookup would now fail
	seen := map[int32]int{}
	for i := 0; i < 8; i++ {
		p, err := out.partition(e, nil, nil)
		if err != nil {
			t.Fatalf("partition count asked again: %v", err)
		}
		seen[p]++
	}
	if len(seen) != 4 || seen[0] != 2 || seen[3] != 2 {
		t.Fatalf("records without a key are not spread round robin: %v", seen)
	}
}
