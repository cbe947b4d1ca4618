package sgstream

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// Foreign-key join tests (KIP-213), following Kafka Streams' documented
// behaviour and KTableKTableForeignKeyJoinIntegrationTest's scenarios.
// Left ("orders") values are "<customer>|<payload>"; the foreign key is the
// customer.

func orderFK(v *jv) string { return strings.SplitN(v.s, "|", 2)[0] }

func fkJoin(t *testing.T, kind JoinKind, store string, opts ...DriverOpt) *jdrv {
	return newJDrv(t, func(b *Builder) {
		l := TableSource(b, "orders", jvSrc("orders"), "orders-store")
		r := TableSource(b, "customers", jvSrc("customers"), "customers-store")
		j := JoinForeignKey(l, r, "fk", kind, orderFK, joinStr, store, ForeignKeySerdes[string, *jv, string, *jv]{Result: jvSerde{}})
		To(ToStream(j, "fk-stream"), "sink", "out", jvSink())
	}, opts...)
}

func TestJoinForeignKeyTopologyNames(t *testing.T) {
	tp, err := newTopology("app", func(b *Builder) {
		l := TableSource(b, "orders", jvSrc("orders"), "orders-store")
		r := TableSource(b, "customers", jvSrc("customers"), "customers-store")
		j := JoinForeignKey(l, r, "fk", InnerJoin, orderFK, joinStr, "", ForeignKeySerdes[string, *jv, string, *jv]{})
		To(ToStream(j, "fk-stream"), "sink", "out", jvSink())
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app-fk-subscription-registration-topic", "app-fk-subscription-response-topic"} {
		if ts := tp.Topic(name); ts == nil || ts.Role != engine.TopicInternal {
			t.Fatalf("topic %s: %+v", name, ts)
		}
	}
	if s := tp.Store("fk-subscriptions"); s == nil || s.Kind != KeyValueStore {
		t.Fatalf("subscription store: %+v", s)
	}
	// The topics split the join like repartition topics: the left table
	// with the response topic, the right table with the registration topic
	// and the subscription store.
	subs := tp.SubTopologies()
	if len(subs) != 2 {
		t.Fatalf("want 2 sub-topologies, got %d", len(subs))
	}
	if want := []string{"app-fk-subscription-response-topic", "orders"}; !slices.Equal(subs[0].Topics, want) {
		t.Fatalf("left sub-topology reads %q, want %q", subs[0].Topics, want)
	}
	if want := []string{"app-fk-subscription-registration-topic", "customers"}; !slices.Equal(subs[1].Topics, want) {
		t.Fatalf("right sub-topology reads %q, want %q", subs[1].Topics, want)
	}
	if !slices.Contains(subs[1].Stores, "fk-subscriptions") {
		t.Fatalf("right sub-topology stores %q", subs[1].Stores)
	}
}

func TestJoinForeignKeyInner(t *testing.T) {
	for _, store := range []string{"", "fk-store"} {
		t.Run("store="+store, func(t *testing.T) {
			d := fkJoin(t, InnerJoin, store)
			d.pipe("customers", "c1", "Alice", 1)
			d.expectOut()
			d.pipe("orders", "o1", "c1|x", 5)
			d.expectOut("o1:c1|x+Alice@5")
			d.pipe("orders", "o2", "c2|y", 6) // no customer yet: nothing
			d.expectOut()
			d.pipe("customers", "c2", "Bob", 7) // right updates fan out
			d.expectOut("o2:c2|y+Bob@7")
			d.pipe("customers", "c1", "Alicia", 8)
			d.expectOut("o1:c1|x+Alicia@8")

			// Changing the foreign key re-subscribes: o1 now follows c2 and
			// no longer c1.
			d.pipe("orders", "o1", "c2|z", 9)
			d.expectOut("o1:c2|z+Bob@9")
			d.pipe("customers", "c1", "Alice3", 10)
			d.expectOut()

			// Deleting a right row: tombstones for every subscriber, in
			// primary-key order, with the right record's timestamp.
			d.pipe("customers", "c2", jNull, 11)
			d.expectOut("o1:null@11", "o2:null@11")

			// Deleting a left row that no longer joins still emits a
			// tombstone (Kafka cannot know whether a result was emitted);
			// deleting a row that never existed emits nothing.
			d.pipe("orders", "o1", jNull, 12)
			d.expectOut("o1:null@12")
			d.pipe("orders", "o9", jNull, 13)
			d.expectOut()

			// An update that keeps a foreign key without a right row
			// emits nothing (Kafka 4.1 sends it as
			// PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE: the last result, if
			// any, was already retracted when the right row went).
			d.pipe("orders", "o3", "c3|w", 14)
			d.expectOut()
			d.pipe("orders", "o3", "c3|w2", 15)
			d.expectOut()
			d.pipe("customers", "c3", "Carol", 16)
			d.expectOut("o3:c3|w2+Carol@16")
			d.pipe("customers", "c3", jNull, 17)
			d.expectOut("o3:null@17")
			d.pipe("orders", "o3", "c3|w3", 18)
			d.expectOut()

			// Moving to a foreign key without a right row retracts the
			// result (PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE).
			d.pipe("customers", "c3", "Carol", 19)
			d.expectOut("o3:c3|w3+Carol@19")
			d.pipe("orders", "o3", "c4|v", 20)
			d.expectOut("o3:null@20")
		})
	}
}

func TestJoinForeignKeyLeft(t *testing.T) {
	d := fkJoin(t, LeftJoin, "fk-store")
	d.pipe("orders", "o1", "c1|x", 5)
	d.expectOut("o1:c1|x+null@5")
	d.pipe("customers", "c1", "Alice", 6)
	d.expectOut("o1:c1|x+Alice@6")
	// A new foreign key: the unsubscription from c1 is silent; only the
	// subscription to c2 (absent) answers (Kafka 4.1 sends
	// DELETE_KEY_NO_PROPAGATE where 4.0 answered twice).
	d.pipe("orders", "o1", "c2|y", 7)
	d.expectOut("o1:c2|y+null@7")
	d.pipe("customers", "c2", "Bob", 8)
	d.expectOut("o1:c2|y+Bob@8")
	d.pipe("customers", "c2", jNull, 9)
	d.expectOut("o1:c2|y+null@9")
	// A delete unsubscribes silently and answers once, through a
	// subscription with a null foreign key.
	d.pipe("orders", "o1", jNull, 10)
	d.expectOut("o1:null@10")
	d.pipe("orders", "o5", jNull, 11)
	d.expectOut()
	// The result store follows the tombstones.
	s, err := d.Store("fk-store", 0)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := NewKVStore(s, serdes.String, serdes.Serde[*jv](jvSerde{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, found, err := kv.Get("o1"); err != nil || found {
		t.Fatalf("o1 still in the result store (found=%v, err=%v)", found, err)
	}
}

func TestJoinForeignKeyDropsStaleResponses(t *testing.T) {
	d := fkJoin(t, InnerJoin, "")
	d.pipe("customers", "c1", "Alice", 1)
	d.pipe("orders", "o1", "c1|x", 5)
	d.expectOut("o1:c1|x+Alice@5")
	// A response computed for another left value (an older version in
	// flight) is dropped; one for the current value joins.
	stale := fkValueHash([]byte("c1|old"))
	cur := fkValueHash([]byte("c1|x"))
	for _, h := range []fkHash{stale, cur} {
		if err := d.Pipe(RawRecord{Topic: "app-fk-subscription-response-topic", Partition: 0, Key: []byte("o1"),
			Value: appendResponse(nil, &h, []byte("Injected")), Timestamp: 6}); err != nil {
			t.Fatal(err)
		}
	}
	d.expectOut("o1:c1|x+Injected@6")
}

func TestJoinForeignKeyAcrossPartitions(t *testing.T) {
	// Subscriptions travel to the foreign key's partition and responses
	// come back to the left record's partition.
	d := fkJoin(t, InnerJoin, "fk-store", DefaultPartitions(3))
	for _, c := range []string{"c1", "c2", "c3", "c4"} {
		d.pipe("customers", c, "N"+c, 1)
	}
	orders := map[string]string{"o1": "c1", "o2": "c2", "o3": "c3", "o4": "c4", "o5": "c1", "o6": "c2"}
	var want []string
	for o, c := range orders {
		d.pipe("orders", o, c+"|p", 2)
		want = append(want, o+":"+c+"|p+N"+c+"@2")
	}
	got := d.out("out")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	d.pipe("customers", "c2", "Bob", 3)
	got = d.out("out")
	slices.Sort(got)
	if want := []string{"o2:c2|p+Bob@3", "o6:c2|p+Bob@3"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
