package sgstream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/streamgen/streamgen/runtime/sgstate"
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
// right table's, exactly like repartition topics; under the TestDriver the
// records are piped back in through the Collector.
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

func joinForeignKey[K, V1, KO, V2, VR any](l Table[K, V1], r Table[KO, V2], name string, kind JoinKind, fk func(V1) KO, joiner func(K, V1, V2) VR, store string, sd ForeignKeySerdes[K, V1, KO, VR]) Table[K, VR] {
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
		b.Errorf("join %q: a foreign-key join needs the left key and value serdes and the right key and value serdes", name)
	}
	if kind != InnerJoin && kind != LeftJoin {
		b.Errorf("join %q: a foreign-key join is inner or left, not %v", name, kind)
	}
	lf, rf := l.Getter(), r.Getter()
	if lf == nil {
		b.Errorf("join %q: table %q cannot be looked up; materialize it", name, l.info.Name)
	}
	if rf == nil {
		b.Errorf("join %q: table %q cannot be looked up; materialize it", name, r.info.Name)
	}
	// Kafka enables old values on both tables: the left side needs the old
	// foreign key to unsubscribe, and both sides' upstream filters then
	// skip updates that stay filtered out.
	SendOldValues(l)
	SendOldValues(r)

	regTopic := b.InternalTopic(name + "-subscription-registration-topic")
	respTopic := b.InternalTopic(name + "-subscription-response-topic")
	subStore := name + "-subscriptions"
	b.AddTopic(TopicSpec{Name: regTopic, Role: TopicInternal})
	b.AddTopic(TopicSpec{Name: respTopic, Role: TopicInternal})
	leftJoin := kind == LeftJoin
	task := b.task

	// --- left side: subscription send -----------------------------------
	sendInfo := b.AddNode(name+"-subscription-registration-send", "fk_subscription_send", l.info)
	sendInfo.Writes = append(sendInfo.Writes, regTopic)
	var vbuf, kbuf, fbuf, obuf []byte
	serFK := func(ko KO) ([]byte, bool, error) {
		if isNull(ko) {
			return nil, true, nil
		}
		var err error
		if fbuf, err = sd.ForeignKey.Append(fbuf[:0], ko); err != nil {
			return nil, false, fmt.Errorf("%w: join %q: serialize foreign key: %w", ErrProcessing, name, err)
		}
		return append([]byte(nil), fbuf...), false, nil
	}
	l.To(NodeFunc[K, Change[V1]](func(rec Record[K, Change[V1]]) error {
		if rec.KeyNull {
			task.Drop()
			return nil
		}
		var err error
		if kbuf, err = sd.Key.Append(kbuf[:0], rec.Key); err != nil {
			return fmt.Errorf("%w: join %q: serialize key: %w", ErrProcessing, name, err)
		}
		pk := append([]byte(nil), kbuf...)
		nv, newNull := newOf(rec.Value)
		ov, oldNull := rec.Value.Old, rec.Value.OldNull || isNull(rec.Value.Old)
		var hash *fkHash
		if !newNull {
			if vbuf, err = sd.Value.Append(vbuf[:0], nv); err != nil {
				return fmt.Errorf("%w: join %q: serialize value: %w", ErrProcessing, name, err)
			}
			h := fkValueHash(vbuf)
			hash = &h
		}
		send := func(fkb []byte, fkNull bool, instr byte) error {
			obuf = appendSubscription(obuf[:0], subscription{hash: hash, instruction: instr, pk: pk, partition: task.ID.Partition})
			var key []byte
			if !fkNull {
				key = fkb
			}
			return task.Send(regTopic, -1, key, obuf, rec.Timestamp, rec.Headers, key)
		}
		skipNullFK := func() error {
			task.Logger().Warn("skipping record due to null foreign key", "join", name)
			task.Drop()
			return nil
		}
		// The instructions are those of Kafka Streams 4.1's
		// SubscriptionSendProcessorSupplier. A left join unsubscribes a
		// changed foreign key without a response (the new subscription
		// answers for the new value) and always (re)subscribes, a null
		// foreign key included. An inner join answers with null only
		// where a previous result may have to be retracted: on a delete
		// (or a foreign key turning null) and when the foreign key
		// changes; an update that keeps its foreign key, or a first
		// subscription, answers only when the right row exists.
		var oldFK, newFK []byte
		oldFKNull, newFKNull := true, true
		if !oldNull {
			if oldFK, oldFKNull, err = serFK(fk(ov)); err != nil {
				return err
			}
		}
		if !newNull {
			if newFK, newFKNull, err = serFK(fk(nv)); err != nil {
				return err
			}
		}
		if leftJoin {
			if oldNull && newNull {
				return nil
			}
			if !oldNull && !oldFKNull && (newFKNull || !bytes.Equal(newFK, oldFK)) {
				if err := send(oldFK, false, fkDeleteKeyNoPropagate); err != nil {
					return err
				}
			}
			return send(newFK, newFKNull, fkPropagateNullIfNoFKValue)
		}
		switch {
		case !oldNull:
			switch {
			case oldFKNull && newFKNull:
				return skipNullFK()
			case oldFKNull:
				return send(newFK, false, fkPropagateOnlyIfFKValueSet)
			case newFKNull:
				return send(oldFK, false, fkDeleteKeyAndPropagate)
			case !bytes.Equal(newFK, oldFK):
				if err := send(oldFK, false, fkDeleteKeyNoPropagate); err != nil {
					return err
				}
				return send(newFK, false, fkPropagateNullIfNoFKValue)
			}
			return send(newFK, false, fkPropagateOnlyIfFKValueSet)
		case !newNull:
			if newFKNull {
				return skipNullFK()
			}
			return send(newFK, false, fkPropagateOnlyIfFKValueSet)
		}
		return nil
	}))

	// --- right side: subscription receive + join, foreign join ----------
	regSource := b.AddNode(name+"-subscription-registration-source", "source")
	recvInfo := b.AddNode(name+"-subscription-receive", "fk_subscription_receive", regSource, r.info)
	recvInfo.Writes = append(recvInfo.Writes, respTopic)
	b.AddStore(recvInfo, StoreSpec{Name: subStore, Kind: KeyValueStore, Logged: true})
	if st := r.StoreName(); st != "" {
		b.UseStore(recvInfo, st)
	}
	foreignInfo := b.AddNode(name+"-foreign-join-subscription", "fk_foreign_join", r.info)
	foreignInfo.Writes = append(foreignInfo.Writes, respTopic)
	b.UseStore(foreignInfo, subStore)

	var subs sgstate.KeyValueStore
	var rg ValueGetter[KO, V2]
	b.OnInit(recvInfo, func(tk *Task) error {
		s, err := tk.Store(subStore)
		if err != nil {
			return err
		}
		kv, ok := s.(sgstate.KeyValueStore)
		if !ok {
			return fmt.Errorf("streamgen: store %q is a %T, not a key-value store", subStore, s)
		}
		subs = kv
		rg, err = rf(tk)
		return err
	})
	var rvbuf, rbuf, ckbuf, svbuf []byte
	respond := func(pk []byte, partition int32, hash *fkHash, v V2, vNull bool, ts int64, headers []Header) error {
		var vb []byte
		if !vNull {
			var err error
			if rvbuf, err = r.Value.Append(rvbuf[:0], v); err != nil {
				return fmt.Errorf("%w: join %q: serialize foreign value: %w", ErrProcessing, name, err)
			}
			vb = rvbuf
		}
		rbuf = appendResponse(rbuf[:0], hash, vb)
		return task.Send(respTopic, partition, pk, rbuf, ts, headers, pk)
	}
	b.AddSource(regSource, regTopic, func(tk *Task, raw *RawRecord) error {
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
			return fmt.Errorf("%w: join %q: %w", ErrDeserialization, name, err)
		}
		fkNull := raw.Key == nil
		if fkNull && sub.instruction != fkPropagateNullIfNoFKValue {
			tk.Logger().Warn("skipping subscription due to null foreign key", "join", name)
			tk.Drop()
			return nil
		}
		if !fkNull {
			ckbuf = combinedKey(ckbuf[:0], raw.Key, sub.pk)
			switch sub.instruction {
			case fkDeleteKeyAndPropagate, fkDeleteKeyNoPropagate:
				err = subs.Delete(ckbuf)
			default:
				// A timestamped store value, as Kafka's subscription store.
				svbuf = binary.BigEndian.AppendUint64(svbuf[:0], uint64(ts))
				svbuf = append(svbuf, raw.Value...)
				err = subs.Put(ckbuf, svbuf)
			}
			if err != nil {
				return err
			}
		}
		// SubscriptionJoinProcessorSupplier.
		var fv V2
		found := false
		var fts int64
		if !fkNull {
			ko, err := sd.ForeignKey.Decode(raw.Key)
			if err != nil {
				return fmt.Errorf("%w: join %q: foreign key: %w", ErrDeserialization, name, err)
			}
			if fv, fts, found, err = lookup(rg, ko); err != nil {
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
			return respond(pk, sub.partition, sub.hash, none, true, rts, raw.Headers)
		case fkPropagateNullIfNoFKValue:
			return respond(pk, sub.partition, sub.hash, fv, !found, rts, raw.Headers)
		case fkPropagateOnlyIfFKValueSet:
			if found {
				return respond(pk, sub.partition, sub.hash, fv, false, rts, raw.Headers)
			}
		}
		return nil
	})

	type subscriber struct {
		pk        []byte
		hash      *fkHash
		partition int32
	}
	var pbuf []byte
	r.To(NodeFunc[KO, Change[V2]](func(rec Record[KO, Change[V2]]) error {
		if rec.KeyNull {
			task.Drop()
			return nil
		}
		fkb, _, err := serFK(rec.Key)
		if err != nil {
			return err
		}
		pbuf = binary.BigEndian.AppendUint32(pbuf[:0], uint32(len(fkb)))
		pbuf = append(pbuf, fkb...)
		var found []subscriber
		err = subs.PrefixScan(pbuf, func(k, v []byte) error {
			if len(v) < 8 {
				return fmt.Errorf("%w: join %q: store %q: value of %d bytes", ErrProcessing, name, subStore, len(v))
			}
			sub, err := parseSubscription(v[8:])
			if err != nil {
				return fmt.Errorf("%w: join %q: store %q: %w", ErrProcessing, name, subStore, err)
			}
			found = append(found, subscriber{pk: append([]byte(nil), k[len(pbuf):]...), hash: sub.hash, partition: sub.partition})
			return nil
		})
		if err != nil {
			return err
		}
		nv, newNull := newOf(rec.Value)
		for _, s := range found {
			if err := respond(s.pk, s.partition, s.hash, nv, newNull, rec.Timestamp, rec.Headers); err != nil {
				return err
			}
		}
		return nil
	}))

	// --- left side again: response join and result ----------------------
	respSource := b.AddNode(name+"-subscription-response-source", "source")
	resolver := b.AddNode(name+"-subscription-response-resolver", "fk_response_join", respSource, l.info)
	if st := l.StoreName(); st != "" {
		b.UseStore(resolver, st)
	}
	resultInfo := b.AddNode(name, "fk_join_result", resolver)
	var getter func(*Task) (ValueGetter[K, VR], error)
	if store != "" {
		if sd.Result == nil {
			b.Errorf("join %q: a materialized join needs the result value serde", name)
		}
		b.AddStore(resultInfo, StoreSpec{Name: store, Kind: KeyValueStore, Logged: true})
		getter = storeGetter(store, sd.Key, sd.Result)
	}
	out, next := NewTable(b, resultInfo, getter, store, sd.Key, sd.Result)
	self := out.old
	var lg ValueGetter[K, V1]
	var kv *KVStore[K, VR]
	b.OnInit(resolver, func(tk *Task) (err error) {
		lg, err = lf(tk)
		return err
	})
	if store != "" {
		b.OnInit(resultInfo, func(tk *Task) (err error) {
			if kv, err = OpenKVStore(tk, store, sd.Key, sd.Result); err != nil {
				return err
			}
			kv.SetFlushListener(func(k K, ch Change[VR], ts int64) error {
				if !self.sendOld {
					var zero VR
					ch.Old, ch.OldNull = zero, true
				}
				return next.Process(Record[K, Change[VR]]{Key: k, Value: ch, Timestamp: ts})
			})
			return nil
		})
	}
	var hbuf []byte
	b.AddSource(respSource, respTopic, func(tk *Task, raw *RawRecord) error {
		ts, ok, err := tk.observe(raw.Topic, raw.Timestamp)
		if err != nil || !ok {
			return err
		}
		if raw.Key == nil || raw.Value == nil {
			tk.Drop()
			return nil
		}
		key, err := sd.Key.Decode(raw.Key)
		if err != nil {
			return fmt.Errorf("%w: join %q: key: %w", ErrDeserialization, name, err)
		}
		msgHash, fvb, err := parseResponse(raw.Value)
		if err != nil {
			return fmt.Errorf("%w: join %q: %w", ErrDeserialization, name, err)
		}
		// ResponseJoinProcessorSupplier: only a response computed for the
		// left value that is current now may produce a result.
		cur, _, found, err := lookup(lg, key)
		if err != nil {
			return err
		}
		var curHash *fkHash
		if found {
			if hbuf, err = sd.Value.Append(hbuf[:0], cur); err != nil {
				return fmt.Errorf("%w: join %q: serialize value: %w", ErrProcessing, name, err)
			}
			h := fkValueHash(hbuf)
			curHash = &h
		}
		if (msgHash == nil) != (curHash == nil) || (msgHash != nil && *msgHash != *curHash) {
			tk.Logger().Debug("dropping stale foreign-key join response", "join", name)
			return nil
		}
		var res VR
		resNull := true
		if fvb != nil || (leftJoin && found) {
			var fv V2
			if fvb != nil {
				if fv, err = r.Value.Decode(fvb); err != nil {
					return fmt.Errorf("%w: join %q: foreign value: %w", ErrDeserialization, name, err)
				}
			}
			res = joiner(key, cur, fv)
			resNull = isNull(res)
		}
		// The result node: KTableSource, through the store when
		// materialized.
		ch := Change[VR]{New: res, NewNull: resNull, OldNull: true}
		if kv != nil {
			old, _, oldFound, err := kv.Get(key)
			if err != nil {
				return err
			}
			if self.sendOld && oldFound {
				ch.Old, ch.OldNull = old, false
			}
			if resNull {
				err = kv.Delete(key)
			} else {
				err = kv.Put(key, res, ts)
			}
			if err != nil || !kv.Forwards() {
				return err
			}
		}
		return next.Process(Record[K, Change[VR]]{Key: key, Value: ch, Timestamp: ts, Headers: raw.Headers})
	})
	return out
}
