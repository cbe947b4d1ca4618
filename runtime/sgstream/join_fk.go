package sgstream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/streamgen/streamgen/internal/topograph"
	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// Foreign-key joins follow KTableImpl.doJoinOnForeignKey and
// kstream/internals/foreignkeyjoin of Kafka Streams 4.x:
//
//	left table ─ subscription send ─▶ <app>-<name>-subscription-registration-topic (keyed by FK)
//	    ─▶ subscription receive (store <name>-subscriptions, keyed by FK+PK)
//	       + subscription join (looks the right table up)      ─┐
//	right table ─ foreign join (prefix scan of the store by FK) ─┴▶ <app>-<name>-subscription-response-topic
//	    (to the left record's partition) ─▶ response join (drops stale responses) ─▶ result table
//
// The two topics split the join into the left table's sub-topology and the
// right table's, exactly like repartition topics; under the testDriver the
// records are piped back in through the engine.Collector.
//
// Stale responses are recognised by a 128-bit hash of the serialized left
// value carried through both topics. Kafka uses Murmur3; we use FNV-1a
// (128 bits): the hash never leaves this runtime, so only its stability
// matters. For the same reason the wire format of the two topics is Kafka's
// layout with our hash, not byte-compatible with a Java application's.

// Subscription instructions (SubscriptionWrapper.Instruction).
const (
	fkDeleteKeyNoPropagate      byte = 0
	fkDeleteKeyAndPropagate     byte = 1
	fkPropagateNullIfNoFKValue  byte = 2
	fkPropagateOnlyIfFKValueSet byte = 3
)

const fkWireVersion byte = 1

type fkHash = [16]byte

// fkValueHash hashes a serialized left value.
func fkValueHash(b []byte) fkHash {
	h := fnv.New128a()
	h.Write(b)
	var out fkHash
	h.Sum(out[:0])
	return out
}

// subscription is a SubscriptionWrapper with the primary key still
// serialized.
type subscription struct {
	hash        *fkHash
	instruction byte
	pk          []byte
	partition   int32
}

// appendSubscription writes Kafka's SubscriptionWrapper v1 layout: version
// byte (0x80 set when the hash is null), instruction, optional 16-byte
// hash, primary key bytes, 4-byte primary partition.
func appendSubscription(dst []byte, s subscription) []byte {
	v := fkWireVersion
	if s.hash == nil {
		v |= 0x80
	}
	dst = append(dst, v, s.instruction)
	if s.hash != nil {
		dst = append(dst, s.hash[:]...)
	}
	dst = append(dst, s.pk...)
	return binary.BigEndian.AppendUint32(dst, uint32(s.partition))
}

func parseSubscription(b []byte) (subscription, error) {
	var s subscription
	if len(b) < 6 {
		return s, fmt.Errorf("subscription of %d bytes", len(b))
	}
	hashNull := b[0]&0x80 != 0
	s.instruction = b[1]
	if s.instruction > fkPropagateOnlyIfFKValueSet {
		return s, fmt.Errorf("unknown subscription instruction %d", s.instruction)
	}
	b = b[2:]
	if !hashNull {
		if len(b) < 16+4 {
			return s, fmt.Errorf("subscription truncated")
		}
		var h fkHash
		copy(h[:], b)
		s.hash = &h
		b = b[16:]
	}
	if len(b) < 4 {
		return s, fmt.Errorf("subscription truncated")
	}
	s.pk = b[:len(b)-4]
	s.partition = int32(binary.BigEndian.Uint32(b[len(b)-4:]))
	return s, nil
}

// appendResponse writes Kafka's SubscriptionResponseWrapper layout:
// version byte (0x80 set when the hash is null), optional hash, foreign
// value bytes. An empty value reads back as null, as in Kafka.
func appendResponse(dst []byte, hash *fkHash, value []byte) []byte {
	if hash == nil {
		return append(append(dst, 0x80), value...)
	}
	dst = append(dst, 0)
	dst = append(dst, hash[:]...)
	return append(dst, value...)
}

func parseResponse(b []byte) (hash *fkHash, value []byte, err error) {
	if len(b) < 1 {
		return nil, nil, fmt.Errorf("empty subscription response")
	}
	hashNull := b[0]&0x80 != 0
	b = b[1:]
	if !hashNull {
		if len(b) < 16 {
			return nil, nil, fmt.Errorf("subscription response truncated")
		}
		var h fkHash
		copy(h[:], b)
		hash = &h
		b = b[16:]
	}
	if len(b) == 0 {
		return hash, nil, nil
	}
	return hash, b, nil
}

// combinedKey is CombinedKeySchema: FK length (4 bytes), FK bytes, PK
// bytes. A prefix scan by length+FK finds an FK's subscribers in PK order.
func combinedKey(dst, fk, pk []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(fk)))
	dst = append(dst, fk...)
	return append(dst, pk...)
}

// foreignKeyJoin is what every processor of one foreign-key join shares: its name,
// topics, store, serdes and functions. Kafka Streams splits the join into
// one processor per step, and so does this file: fkSubscriptionSend (left
// table → registration topic), fkSubscriptionReceive and
// fkSubscriptionJoinForeign (registration topic → subscription store →
// response topic), fkForeignJoin (right table → response topic) and
// fkResponseResolver (response topic → result table).
type foreignKeyJoin[K, V1, KO, V2, VR any] struct {
	name                string
	regTopic, respTopic string
	subStore            string
	leftJoin            bool
	task                *task
	sd                  ForeignKeySerdes[K, V1, KO, VR]
	rValue              serdesOf[V2]
	fk                  func(V1) KO
	joiner              Joiner[K, V1, V2, VR]

	// lVersioned and rVersioned say that a side has versioned semantics:
	// its out-of-order updates are dropped (KIP-914).
	lVersioned, rVersioned bool
}

// serdesOf is the part of a serde the join needs for the right value.
type serdesOf[T any] interface {
	Append(dst []byte, v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// skip drops a table update the join does not process, counted as dropped:
// one with a null key, or an out-of-order update of a versioned side, which
// Kafka Streams' SubscriptionSendProcessorSupplier and
// ForeignTableJoinProcessorSupplier skip with versioned semantics.
func (j *foreignKeyJoin[K, V1, KO, V2, VR]) skip(keyNull bool) {
	if !keyNull {
		j.task.Logger().Info("skipping out-of-order record from versioned table", "join", j.name)
	}
	j.task.Drop()
}

// serFK serializes a foreign key into a fresh slice (nil and true for a
// null foreign key), using buf as scratch space.
func (j *foreignKeyJoin[K, V1, KO, V2, VR]) serFK(buf *[]byte, ko KO) ([]byte, bool, error) {
	if isNull(ko) {
		return nil, true, nil
	}
	var err error
	if *buf, err = j.sd.ForeignKey.Append((*buf)[:0], ko); err != nil {
		return nil, false, fmt.Errorf("%w: join %q: serialize foreign key: %w", ErrProcessing, j.name, err)
	}
	return append([]byte(nil), *buf...), false, nil
}

func joinForeignKey[K, V1, KO, V2, VR any](l Table[K, V1], r Table[KO, V2], name string, kind JoinKind, fk func(V1) KO, joiner Joiner[K, V1, V2, VR], store string, sd ForeignKeySerdes[K, V1, KO, VR]) Table[K, VR] {
	b := l.b
	j := newFKJoin(l, r, name, kind, fk, joiner, sd)
	sd = j.sd // with the defaults filled in
	lf, rf := l.getter, r.getter
	if lf == nil {
		b.errorf("join %q: table %q cannot be looked up; materialize it", name, l.info.Name)
	}
	if rf == nil {
		b.errorf("join %q: table %q cannot be looked up; materialize it", name, r.info.Name)
	}
	// Kafka enables old values on both tables: the left side needs the old
	// foreign key to unsubscribe, and both sides' upstream filters then
	// skip updates that stay filtered out.
	sendOldValues(l)
	sendOldValues(r)
	// The nodes: on the left, subscription send and the registration
	// sink; on the right, receive a subscription and join it with the right
	// table, and the foreign join of right-table updates with their
	// subscribers; on the left again, resolve responses into the result.
	nodes := b.g.ForeignKeyJoin(name, l.info, r.info, l.lookupStore(), r.lookupStore(), store)
	b.declareStore(StoreSpec{Name: j.subStore, Kind: KeyValueStore, Logged: true, OwnLayout: true})
	l.to(&fkSubscriptionSend[K, V1, KO, V2, VR]{j: j})

	recv := &fkSubscriptionReceive[K, V1, KO, V2, VR]{j: j, join: fkSubscriptionJoinForeign[K, V1, KO, V2, VR]{j: j, out: fkResponder[K, V1, KO, V2, VR]{j: j}}}
	foreign := &fkForeignJoin[K, V1, KO, V2, VR]{j: j, out: fkResponder[K, V1, KO, V2, VR]{j: j}}
	b.onInit(nodes.Receive, func(tk *task) error {
		subs, err := fkStore(tk, j.subStore)
		if err != nil {
			return err
		}
		recv.subs, foreign.subs = subs, subs
		recv.join.rg, err = rf(tk)
		return err
	})
	b.addSource(nodes.RegSource, j.regTopic, recv.Process)
	r.to(foreign)

	res := &fkResponseResolver[K, V1, KO, V2, VR]{j: j}
	var getter func(*task) (valueGetter[K, VR], error)
	if store != "" {
		if sd.Result == nil {
			b.errorf("join %q: a materialized join needs the result value serde", name)
		}
		b.declareStore(StoreSpec{Name: store, Kind: KeyValueStore, Logged: true, Timestamped: true})
		getter = storeGetter(store, sd.Key, sd.Result)
	}
	out, next := newTable(b, nodes.Result, getter, store, sd.Key, sd.Result)
	res.result = fkResult[K, VR]{next: next, self: out.old}
	b.onInit(nodes.Resolver, func(tk *task) (err error) {
		res.lg, err = lf(tk)
		return err
	})
	if store != "" {
		b.onInit(nodes.Result, func(tk *task) error { return res.result.open(tk, store, sd.Key, sd.Result) })
	}
	b.addSource(nodes.RespSource, j.respTopic, res.Process)
	return out
}

// newFKJoin checks and completes the serdes and names the join's topics
// and store.
func newFKJoin[K, V1, KO, V2, VR any](l Table[K, V1], r Table[KO, V2], name string, kind JoinKind, fk func(V1) KO, joiner Joiner[K, V1, V2, VR], sd ForeignKeySerdes[K, V1, KO, VR]) *foreignKeyJoin[K, V1, KO, V2, VR] {
	b := l.b
	if sd.Key == nil {
		sd.Key = l.Key
	}
	if sd.Value == nil {
		sd.Value = l.Value
	}
	if sd.ForeignKey == nil {
		sd.ForeignKey = r.Key
	}
	if sd.Key == nil || sd.Value == nil || sd.ForeignKey == nil || r.Value == nil {
		b.errorf("join %q: a foreign-key join needs the left key and value serdes and the right key and value serdes", name)
	}
	if kind != InnerJoin && kind != LeftJoin {
		b.errorf("join %q: a foreign-key join is inner or left, not %v", name, kind)
	}
	return &foreignKeyJoin[K, V1, KO, V2, VR]{
		name:      name,
		regTopic:  b.internalTopic(toponame.FKRegistrationTopic(name)),
		respTopic: b.internalTopic(toponame.FKResponseTopic(name)),
		subStore:  topograph.FKSubscriptionStore(name),
		leftJoin:  kind == LeftJoin,
		task:      b.task,
		sd:        sd,
		rValue:    r.Value,
		fk:        fk,
		joiner:    joiner,

		lVersioned: l.versioned,
		rVersioned: r.versioned,
	}
}

// fkStore opens the subscription store.
func fkStore(tk *task, name string) (sgstate.KeyValueStore, error) {
	s, err := tk.Store(name)
	if err != nil {
		return nil, err
	}
	kv, ok := s.(sgstate.KeyValueStore)
	if !ok {
		return nil, fmt.Errorf("streamgen: store %q is a %T, not a key-value store", name, s)
	}
	return kv, nil
}

// fkSubscriptionSend is SubscriptionSendProcessorSupplier: each left-table
// update (un)subscribes its primary key with the foreign key's partition of
// the right side.
type fkSubscriptionSend[K, V1, KO, V2, VR any] struct {
	j                      *foreignKeyJoin[K, V1, KO, V2, VR]
	vbuf, kbuf, fbuf, obuf []byte
	// pk and hash are those of the record being processed.
	pk   []byte
	hash *fkHash
	rec  Record[K, tableChange[V1]]
}

func (p *fkSubscriptionSend[K, V1, KO, V2, VR]) Process(rec Record[K, tableChange[V1]]) error {
	j := p.j
	if rec.KeyNull || (j.lVersioned && rec.Value.NotLatest) {
		j.skip(rec.KeyNull)
		return nil
	}
	var err error
	if p.kbuf, err = j.sd.Key.Append(p.kbuf[:0], rec.Key); err != nil {
		return fmt.Errorf("%w: join %q: serialize key: %w", ErrProcessing, j.name, err)
	}
	p.pk, p.hash, p.rec = append([]byte(nil), p.kbuf...), nil, rec
	nv, newNull := newOf(rec.Value)
	ov, oldNull := rec.Value.Old, rec.Value.OldNull || isNull(rec.Value.Old)
	if !newNull {
		if p.vbuf, err = j.sd.Value.Append(p.vbuf[:0], nv); err != nil {
			return fmt.Errorf("%w: join %q: serialize value: %w", ErrProcessing, j.name, err)
		}
		h := fkValueHash(p.vbuf)
		p.hash = &h
	}
	var oldFK, newFK []byte
	oldFKNull, newFKNull := true, true
	if !oldNull {
		if oldFK, oldFKNull, err = j.serFK(&p.fbuf, j.fk(ov)); err != nil {
			return err
		}
	}
	if !newNull {
		if newFK, newFKNull, err = j.serFK(&p.fbuf, j.fk(nv)); err != nil {
			return err
		}
	}
	if j.leftJoin {
		return p.left(oldNull, newNull, oldFK, oldFKNull, newFK, newFKNull)
	}
	return p.inner(oldNull, newNull, oldFK, oldFKNull, newFK, newFKNull)
}

// The instructions are those of Kafka Streams 4.1's
// SubscriptionSendProcessorSupplier. A left join unsubscribes a changed
// foreign key without a response (the new subscription answers for the new
// value) and always (re)subscribes, a null foreign key included.
func (p *fkSubscriptionSend[K, V1, KO, V2, VR]) left(oldNull, newNull bool, oldFK []byte, oldFKNull bool, newFK []byte, newFKNull bool) error {
	if oldNull && newNull {
		return nil
	}
	if !oldNull && !oldFKNull && (newFKNull || !bytes.Equal(newFK, oldFK)) {
		if err := p.send(oldFK, false, fkDeleteKeyNoPropagate); err != nil {
			return err
		}
	}
	return p.send(newFK, newFKNull, fkPropagateNullIfNoFKValue)
}

// An inner join answers with null only where a previous result may have to
// be retracted: on a delete (or a foreign key turning null) and when the
// foreign key changes; an update that keeps its foreign key, or a first
// subscription, answers only when the right row exists.
func (p *fkSubscriptionSend[K, V1, KO, V2, VR]) inner(oldNull, newNull bool, oldFK []byte, oldFKNull bool, newFK []byte, newFKNull bool) error {
	switch {
	case !oldNull:
		switch {
		case oldFKNull && newFKNull:
			return p.skipNullFK()
		case oldFKNull:
			return p.send(newFK, false, fkPropagateOnlyIfFKValueSet)
		case newFKNull:
			return p.send(oldFK, false, fkDeleteKeyAndPropagate)
		case !bytes.Equal(newFK, oldFK):
			if err := p.send(oldFK, false, fkDeleteKeyNoPropagate); err != nil {
				return err
			}
			return p.send(newFK, false, fkPropagateNullIfNoFKValue)
		}
		return p.send(newFK, false, fkPropagateOnlyIfFKValueSet)
	case !newNull:
		if newFKNull {
			return p.skipNullFK()
		}
		return p.send(newFK, false, fkPropagateOnlyIfFKValueSet)
	}
	return nil
}

// send writes one subscription of the current record, keyed by the
// foreign key (null for a null foreign key).
func (p *fkSubscriptionSend[K, V1, KO, V2, VR]) send(fkb []byte, fkNull bool, instr byte) error {
	t := p.j.task
	p.obuf = appendSubscription(p.obuf[:0], subscription{hash: p.hash, instruction: instr, pk: p.pk, partition: t.id.Partition})
	var key []byte
	if !fkNull {
		key = fkb
	}
	return t.Send(p.j.regTopic, -1, key, p.obuf, p.rec.Timestamp, p.rec.Headers, key)
}

func (p *fkSubscriptionSend[K, V1, KO, V2, VR]) skipNullFK() error {
	p.j.task.Logger().Warn("skipping record due to null foreign key", "join", p.j.name)
	p.j.task.Drop()
	return nil
}

// fkResponder writes responses to the response topic, to the partition of
// the left record that subscribed.
type fkResponder[K, V1, KO, V2, VR any] struct {
	j           *foreignKeyJoin[K, V1, KO, V2, VR]
	rvbuf, rbuf []byte
}

func (o *fkResponder[K, V1, KO, V2, VR]) respond(pk []byte, partition int32, hash *fkHash, v V2, vNull bool, ts int64, headers []Header) error {
	var vb []byte
	if !vNull {
		var err error
		if o.rvbuf, err = o.j.rValue.Append(o.rvbuf[:0], v); err != nil {
			return fmt.Errorf("%w: join %q: serialize foreign value: %w", ErrProcessing, o.j.name, err)
		}
		vb = o.rvbuf
	}
	o.rbuf = appendResponse(o.rbuf[:0], hash, vb)
	return o.j.task.Send(o.j.respTopic, partition, pk, o.rbuf, ts, headers, pk)
}

// fkSubscriptionReceive is SubscriptionReceiveProcessorSupplier: it reads
// the registration topic and keeps the subscription store (keyed by
// foreign key + primary key), then hands the subscription to the join.
type fkSubscriptionReceive[K, V1, KO, V2, VR any] struct {
	j            *foreignKeyJoin[K, V1, KO, V2, VR]
	subs         sgstate.KeyValueStore
	ckbuf, svbuf []byte
	join         fkSubscriptionJoinForeign[K, V1, KO, V2, VR]
}

func (p *fkSubscriptionReceive[K, V1, KO, V2, VR]) Process(tk *task, raw *RawRecord) error {
	ts, ok, err := tk.observe(raw.Topic, raw.Timestamp)
	if err != nil || !ok {
		return err
	}
	if raw.Value == nil {
		tk.Drop()
		return nil
	}
	sub, err := parseSubscription(raw.Value)
	if err != nil {
		return fmt.Errorf("%w: join %q: %w", ErrDeserialization, p.j.name, err)
	}
	fkNull := raw.Key == nil
	if fkNull && sub.instruction != fkPropagateNullIfNoFKValue {
		tk.Logger().Warn("skipping subscription due to null foreign key", "join", p.j.name)
		tk.Drop()
		return nil
	}
	if !fkNull {
		p.ckbuf = combinedKey(p.ckbuf[:0], raw.Key, sub.pk)
		switch sub.instruction {
		case fkDeleteKeyAndPropagate, fkDeleteKeyNoPropagate:
			err = p.subs.Delete(p.ckbuf)
		default:
			// A timestamped store value, as Kafka's subscription store.
			p.svbuf = binary.BigEndian.AppendUint64(p.svbuf[:0], uint64(ts))
			p.svbuf = append(p.svbuf, raw.Value...)
			err = p.subs.Put(p.ckbuf, p.svbuf)
		}
		if err != nil {
			return err
		}
	}
	return p.join.process(raw, sub, fkNull, ts)
}

// fkSubscriptionJoinForeign is SubscriptionJoinProcessorSupplier: it looks
// the subscribed foreign key up in the right table and answers as the
// subscription's instruction says.
type fkSubscriptionJoinForeign[K, V1, KO, V2, VR any] struct {
	j   *foreignKeyJoin[K, V1, KO, V2, VR]
	rg  valueGetter[KO, V2]
	out fkResponder[K, V1, KO, V2, VR]
}

func (p *fkSubscriptionJoinForeign[K, V1, KO, V2, VR]) process(raw *RawRecord, sub subscription, fkNull bool, ts int64) error {
	var fv V2
	found := false
	var fts int64
	if !fkNull {
		ko, err := p.j.sd.ForeignKey.Decode(raw.Key)
		if err != nil {
			return fmt.Errorf("%w: join %q: foreign key: %w", ErrDeserialization, p.j.name, err)
		}
		if fv, fts, found, err = lookup(p.rg, ko); err != nil {
			return err
		}
	}
	rts := ts
	if found {
		rts = max(ts, fts)
	}
	pk := append([]byte(nil), sub.pk...)
	switch sub.instruction {
	case fkDeleteKeyAndPropagate:
		var none V2
		return p.out.respond(pk, sub.partition, sub.hash, none, true, rts, raw.Headers)
	case fkPropagateNullIfNoFKValue:
		return p.out.respond(pk, sub.partition, sub.hash, fv, !found, rts, raw.Headers)
	case fkPropagateOnlyIfFKValueSet:
		if found {
			return p.out.respond(pk, sub.partition, sub.hash, fv, false, rts, raw.Headers)
		}
	}
	return nil
}

// fkForeignJoin is ForeignTableJoinProcessorSupplier: a right-table update
// answers every subscriber of its key, found by a prefix scan of the
// subscription store.
type fkForeignJoin[K, V1, KO, V2, VR any] struct {
	j          *foreignKeyJoin[K, V1, KO, V2, VR]
	subs       sgstate.KeyValueStore
	fbuf, pbuf []byte
	out        fkResponder[K, V1, KO, V2, VR]
}

type fkSubscriber struct {
	pk        []byte
	hash      *fkHash
	partition int32
}

func (p *fkForeignJoin[K, V1, KO, V2, VR]) Process(rec Record[KO, tableChange[V2]]) error {
	j := p.j
	if rec.KeyNull || (j.rVersioned && rec.Value.NotLatest) {
		j.skip(rec.KeyNull)
		return nil
	}
	fkb, _, err := j.serFK(&p.fbuf, rec.Key)
	if err != nil {
		return err
	}
	p.pbuf = binary.BigEndian.AppendUint32(p.pbuf[:0], uint32(len(fkb)))
	p.pbuf = append(p.pbuf, fkb...)
	var found []fkSubscriber
	err = p.subs.PrefixScan(p.pbuf, func(k, v []byte) error {
		if len(v) < 8 {
			return fmt.Errorf("%w: join %q: store %q: value of %d bytes", ErrProcessing, j.name, j.subStore, len(v))
		}
		sub, err := parseSubscription(v[8:])
		if err != nil {
			return fmt.Errorf("%w: join %q: store %q: %w", ErrProcessing, j.name, j.subStore, err)
		}
		found = append(found, fkSubscriber{pk: append([]byte(nil), k[len(p.pbuf):]...), hash: sub.hash, partition: sub.partition})
		return nil
	})
	if err != nil {
		return err
	}
	nv, newNull := newOf(rec.Value)
	for _, s := range found {
		if err := p.out.respond(s.pk, s.partition, s.hash, nv, newNull, rec.Timestamp, rec.Headers); err != nil {
			return err
		}
	}
	return nil
}

// fkResponseResolver is ResponseJoinProcessorSupplier: only a response
// computed for the left value that is current now may produce a result,
// which goes to the result table.
type fkResponseResolver[K, V1, KO, V2, VR any] struct {
	j      *foreignKeyJoin[K, V1, KO, V2, VR]
	lg     valueGetter[K, V1]
	hbuf   []byte
	result fkResult[K, VR]
}

func (p *fkResponseResolver[K, V1, KO, V2, VR]) Process(tk *task, raw *RawRecord) error {
	j := p.j
	ts, ok, err := tk.observe(raw.Topic, raw.Timestamp)
	if err != nil || !ok {
		return err
	}
	if raw.Key == nil || raw.Value == nil {
		tk.Drop()
		return nil
	}
	key, err := j.sd.Key.Decode(raw.Key)
	if err != nil {
		return fmt.Errorf("%w: join %q: key: %w", ErrDeserialization, j.name, err)
	}
	msgHash, fvb, err := parseResponse(raw.Value)
	if err != nil {
		return fmt.Errorf("%w: join %q: %w", ErrDeserialization, j.name, err)
	}
	cur, _, found, err := lookup(p.lg, key)
	if err != nil {
		return err
	}
	var curHash *fkHash
	if found {
		if p.hbuf, err = j.sd.Value.Append(p.hbuf[:0], cur); err != nil {
			return fmt.Errorf("%w: join %q: serialize value: %w", ErrProcessing, j.name, err)
		}
		h := fkValueHash(p.hbuf)
		curHash = &h
	}
	if (msgHash == nil) != (curHash == nil) || (msgHash != nil && *msgHash != *curHash) {
		tk.Logger().Debug("dropping stale foreign-key join response", "join", j.name)
		return nil
	}
	var res VR
	resNull := true
	if fvb != nil || (j.leftJoin && found) {
		var fv V2
		if fvb != nil {
			if fv, err = j.rValue.Decode(fvb); err != nil {
				return fmt.Errorf("%w: join %q: foreign value: %w", ErrDeserialization, j.name, err)
			}
		}
		res = j.joiner(key, cur, fv, missingSides(false, fvb == nil))
		resNull = isNull(res)
	}
	return p.result.process(key, res, resNull, ts, raw.Headers)
}

// fkResult is the join's result node: a KTableSource, through the store
// when the join is materialized.
type fkResult[K, VR any] struct {
	next recordNode[K, tableChange[VR]]
	self *tableOpts
	kv   *KVStore[K, VR]
}

// open opens the result store and forwards what its cache flushes.
func (p *fkResult[K, VR]) open(tk *task, store string, key serdes.Serde[K], value serdes.Serde[VR]) error {
	kv, err := openKVStore(tk, store, key, value)
	if err != nil {
		return err
	}
	p.kv = kv
	kv.setFlushListener(func(k K, ch tableChange[VR], ts int64) error {
		if !p.self.sendOld {
			var zero VR
			ch.Old, ch.OldNull = zero, true
		}
		return p.next.Process(Record[K, tableChange[VR]]{Key: k, Value: ch, Timestamp: ts})
	})
	return nil
}

func (p *fkResult[K, VR]) process(key K, res VR, resNull bool, ts int64, headers []Header) error {
	ch := tableChange[VR]{New: res, NewNull: resNull, OldNull: true}
	if kv := p.kv; kv != nil {
		old, _, oldFound, err := kv.Get(key)
		if err != nil {
			return err
		}
		if p.self.sendOld && oldFound {
			ch.Old, ch.OldNull = old, false
		}
		if resNull {
			err = kv.Delete(key)
		} else {
			err = kv.Put(key, res, ts)
		}
		if err != nil || !kv.forwards() {
			return err
		}
	}
	return p.next.Process(Record[K, tableChange[VR]]{Key: key, Value: ch, Timestamp: ts, Headers: headers})
}
