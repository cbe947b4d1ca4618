package sgstream

import (
	"fmt"
	"unsafe"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/serdes"
)

// SourceConfig says how a source node reads a topic.
type SourceConfig[K, V any] struct {
	Topic string
	Key   serdes.Serde[K]
	Value serdes.Serde[V]
	// Timestamp extracts event time from a decoded record (a field of the
	// value); recordTs is the Kafka record timestamp. nil means the Kafka
	// record timestamp, Kafka Streams' default extractor.
	Timestamp  func(key K, value V, valueNull bool, recordTs int64) int64
	Partitions int
	role       engine.TopicRole // engine.TopicExternal (0), or the role of an internal source
	valueView  byteView         // set by readSource: Value decodes to its own bytes
}

// Source reads a topic as a stream.
func Source[K, V any](b *Builder, name string, cfg SourceConfig[K, V]) Stream[K, V] {
	info := b.g.Source(name, engine.TopicSpec{Name: cfg.Topic, Role: cfg.role, Partitions: cfg.Partitions})
	return readSource(b, info, cfg)
}

// readSource makes info, a source node of the graph, read and decode
// cfg.Topic.
func readSource[K, V any](b *Builder, info *nodeInfo, cfg SourceConfig[K, V]) Stream[K, V] {
	s, out := newStream[K, V](b, info)
	cfg.valueView = viewOf(cfg.Value)
	b.addSource(info, cfg.Topic, func(t *task, raw *RawRecord) error {
		r, ok, err := decodeRecord(t, raw, cfg)
		if err != nil || !ok {
			return err
		}
		return out.Process(r)
	})
	return s
}

// decodeRecord turns a raw record into a typed one, extracting its
// timestamp and updating stream time. ok is false when the record must be
// skipped (a negative timestamp under the skip policy).
func decodeRecord[K, V any](t *task, raw *RawRecord, cfg SourceConfig[K, V]) (r Record[K, V], ok bool, err error) {
	if raw.Key == nil {
		r.KeyNull = true
	} else if r.Key, err = cfg.Key.Decode(raw.Key); err != nil {
		return r, false, fmt.Errorf("%w: key: %w", ErrDeserialization, err)
	}
	switch {
	case raw.Value == nil:
		r.ValueNull = true
	case cfg.valueView == viewBytes && raw.Stable:
		// serdes.Bytes would copy the value: keep the record's own bytes,
		// as Kafka Streams' ByteArrayDeserializer does, capped so that an
		// append by the user does not write past them.
		v := raw.Value[:len(raw.Value):len(raw.Value)]
		r.Value = *(*V)(unsafe.Pointer(&v))
	default:
		if r.Value, err = cfg.Value.Decode(raw.Value); err != nil {
			return r, false, fmt.Errorf("%w: value: %w", ErrDeserialization, err)
		}
	}
	ts := raw.Timestamp
	if cfg.Timestamp != nil {
		ts = cfg.Timestamp(r.Key, r.Value, r.ValueNull, raw.Timestamp)
	}
	ts, ok, err = t.observe(raw.Topic, ts)
	if err != nil || !ok {
		return r, false, err
	}
	r.Timestamp = ts
	r.Headers = raw.Headers
	return r, true, nil
}

// Filter keeps the records for which pred is true.
func Filter[K, V any](s Stream[K, V], name string, pred func(key K, value V) bool) Stream[K, V] {
	return filter(s, name, "filter", pred, true)
}

// FilterNot drops the records for which pred is true.
func FilterNot[K, V any](s Stream[K, V], name string, pred func(key K, value V) bool) Stream[K, V] {
	return filter(s, name, "filter_not", pred, false)
}

func filter[K, V any](s Stream[K, V], name, op string, pred func(K, V) bool, keep bool) Stream[K, V] {
	out, next := newStream[K, V](s.b, s.b.addNode(name, op, s.info))
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		if pred(r.Key, r.Value) == keep {
			return next.Process(r)
		}
		return nil
	}))
	return out
}

// Map replaces key and value.
func Map[K, V, K2, V2 any](s Stream[K, V], name string, fn func(key K, value V) (K2, V2)) Stream[K2, V2] {
	out, next := newStream[K2, V2](s.b, s.b.addNode(name, "map", s.info))
	kn, vn := newNullTest[K2](), newNullTest[V2]()
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		k, v := fn(r.Key, r.Value)
		return next.Process(Record[K2, V2]{Key: k, Value: v, KeyNull: kn.of(k), ValueNull: vn.of(v), Timestamp: r.Timestamp, Headers: r.Headers})
	}))
	return out
}

// MapValues replaces the value and keeps the key.
func MapValues[K, V, V2 any](s Stream[K, V], name string, fn func(key K, value V) V2) Stream[K, V2] {
	out, next := newStream[K, V2](s.b, s.b.addNode(name, "map_values", s.info))
	vn := newNullTest[V2]()
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		v := fn(r.Key, r.Value)
		return next.Process(Record[K, V2]{Key: r.Key, KeyNull: r.KeyNull, Value: v, ValueNull: vn.of(v), Timestamp: r.Timestamp, Headers: r.Headers})
	}))
	return out
}

// FlatMap turns a record into zero or more records; each keeps the input's
// timestamp and headers.
func FlatMap[K, V, K2, V2 any](s Stream[K, V], name string, fn func(key K, value V) []KeyValue[K2, V2]) Stream[K2, V2] {
	out, next := newStream[K2, V2](s.b, s.b.addNode(name, "flat_map", s.info))
	kn, vn := newNullTest[K2](), newNullTest[V2]()
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		for _, kv := range fn(r.Key, r.Value) {
			if err := next.Process(Record[K2, V2]{Key: kv.Key, Value: kv.Value, KeyNull: kn.of(kv.Key), ValueNull: vn.of(kv.Value), Timestamp: r.Timestamp, Headers: r.Headers}); err != nil {
				return err
			}
		}
		return nil
	}))
	return out
}

// FlatMapValues turns a value into zero or more values under the same key.
func FlatMapValues[K, V, V2 any](s Stream[K, V], name string, fn func(key K, value V) []V2) Stream[K, V2] {
	out, next := newStream[K, V2](s.b, s.b.addNode(name, "flat_map_values", s.info))
	vn := newNullTest[V2]()
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		for _, v := range fn(r.Key, r.Value) {
			if err := next.Process(Record[K, V2]{Key: r.Key, KeyNull: r.KeyNull, Value: v, ValueNull: vn.of(v), Timestamp: r.Timestamp, Headers: r.Headers}); err != nil {
				return err
			}
		}
		return nil
	}))
	return out
}

// SelectKey replaces the key.
func SelectKey[K, V, K2 any](s Stream[K, V], name string, fn func(key K, value V) K2) Stream[K2, V] {
	return selectKeyOn(s, s.b.addNode(name, "select_key", s.info), fn)
}

// selectKeyOn runs the key selection fn as node info.
func selectKeyOn[K, V, K2 any](s Stream[K, V], info *nodeInfo, fn func(key K, value V) K2) Stream[K2, V] {
	out, next := newStream[K2, V](s.b, info)
	kn := newNullTest[K2]()
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		k := fn(r.Key, r.Value)
		return next.Process(Record[K2, V]{Key: k, KeyNull: kn.of(k), Value: r.Value, ValueNull: r.ValueNull, Timestamp: r.Timestamp, Headers: r.Headers})
	}))
	return out
}

// Peek calls fn for every record, then forwards it unchanged.
func Peek[K, V any](s Stream[K, V], name string, fn func(key K, value V)) Stream[K, V] {
	out, next := newStream[K, V](s.b, s.b.addNode(name, "peek", s.info))
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		fn(r.Key, r.Value)
		return next.Process(r)
	}))
	return out
}

// Foreach calls fn for every record; it is a terminal operation.
func Foreach[K, V any](s Stream[K, V], name string, fn func(key K, value V)) {
	s.b.addNode(name, "foreach", s.info)
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		fn(r.Key, r.Value)
		return nil
	}))
}

// Branch is one branch of a Split: a predicate, or nil for the default
// branch (which must be last).
type Branch[K, V any] struct {
	Name string
	Pred func(key K, value V) bool
}

// Split routes each record to the first branch whose predicate matches;
// records that match none go to the default branch, or are dropped when
// there is none (Kafka Streams' split().branch()...).
func Split[K, V any](s Stream[K, V], name string, branches []Branch[K, V]) []Stream[K, V] {
	names := make([]string, len(branches))
	for i, br := range branches {
		names[i] = br.Name
	}
	_, infos := s.b.g.Split(name, s.info, names)
	outs := make([]Stream[K, V], len(branches))
	nexts := make([]recordNode[K, V], len(branches))
	for i, br := range branches {
		if br.Pred == nil && i != len(branches)-1 {
			s.b.errorf("split %q: default branch %q must be last", name, br.Name)
		}
		outs[i], nexts[i] = newStream[K, V](s.b, infos[i])
	}
	s.to(nodeFunc[K, V](func(r Record[K, V]) error {
		for i, br := range branches {
			if br.Pred == nil || br.Pred(r.Key, r.Value) {
				return nexts[i].Process(r)
			}
		}
		return nil
	}))
	return outs
}

// Merge forwards the records of every input stream.
func Merge[K, V any](name string, streams ...Stream[K, V]) Stream[K, V] {
	b := streams[0].b
	parents := make([]*nodeInfo, len(streams))
	for i, s := range streams {
		parents[i] = s.info
	}
	out, next := newStream[K, V](b, b.addNode(name, "merge", parents...))
	for _, s := range streams {
		s.to(next)
	}
	return out
}

// SinkConfig says how a sink writes records. A key serde that implements
// WindowedKeySerde (TimeWindowedSerde, SessionWindowedSerde) makes the sink
// partition by the base key and mark its topic windowed, so the serde is
// stated once.
type SinkConfig[K, V any] struct {
	Key   serdes.Serde[K]
	Value serdes.Serde[V]
}

// WindowedKeySerde is a serde of windowed keys. PartitionKey returns the
// bytes to partition by, the base key of a serialized windowed key, so a
// key's windows land on its partition (Kafka's WindowedStreamPartitioner).
type WindowedKeySerde[K any] interface {
	serdes.Serde[K]
	PartitionKey(key K, keyBytes []byte) []byte
}

// windowedKey is the key serde of cfg as a WindowedKeySerde, or nil.
func (cfg SinkConfig[K, V]) windowedKey() WindowedKeySerde[K] {
	wk, _ := cfg.Key.(WindowedKeySerde[K])
	return wk
}

// To writes the stream to a topic.
func To[K, V any](s Stream[K, V], name, topic string, cfg SinkConfig[K, V]) {
	s.b.g.Sink(name, engine.TopicSpec{Name: topic, Windowed: cfg.windowedKey() != nil}, s.info)
	s.to(newSink(s.b, topic, nil, cfg))
}

// ToDynamic writes each record to the topic choose returns; the topic must
// be one of allowed (the topics the spec declares).
func ToDynamic[K, V any](s Stream[K, V], name string, choose func(key K, value V) string, allowed []string, cfg SinkConfig[K, V]) {
	ok := map[string]bool{}
	topics := make([]engine.TopicSpec, len(allowed))
	for i, t := range allowed {
		ok[t] = true
		topics[i] = engine.TopicSpec{Name: t, Windowed: cfg.windowedKey() != nil}
	}
	s.b.g.DynamicSink(name, topics, s.info)
	s.to(newSink(s.b, "", func(k K, v V) (string, error) {
		t := choose(k, v)
		if !ok[t] {
			return "", fmt.Errorf("%w: node %q: topic chooser returned %q, which the spec does not declare", ErrProcessing, name, t)
		}
		return t, nil
	}, cfg))
}

type sink[K, V any] struct {
	t          *task
	topic      string
	choose     func(K, V) (string, error)
	cfg        SinkConfig[K, V]
	windowed   WindowedKeySerde[K] // cfg.Key when it partitions by base key
	kview      byteView            // cfg.Key encodes as the key's own bytes
	vview      byteView
	kbuf, vbuf []byte
}

func newSink[K, V any](b *Builder, topic string, choose func(K, V) (string, error), cfg SinkConfig[K, V]) *sink[K, V] {
	return &sink[K, V]{t: b.task, topic: topic, choose: choose, cfg: cfg, windowed: cfg.windowedKey(),
		kview: viewOf(cfg.Key), vview: viewOf(cfg.Value)}
}

func (s *sink[K, V]) Process(r Record[K, V]) error {
	topic := s.topic
	if s.choose != nil {
		var err error
		if topic, err = s.choose(r.Key, r.Value); err != nil {
			return err
		}
	}
	var key, value []byte
	var err error
	// An empty key or value is not a null one: encodeView keeps it non-nil.
	if !r.KeyNull {
		if key, s.kbuf, err = encodeView(s.kview, s.cfg.Key, s.kbuf, &r.Key); err != nil {
			return fmt.Errorf("%w: serialize key for %q: %w", ErrProcessing, topic, err)
		}
	}
	if !r.ValueNull {
		if value, s.vbuf, err = encodeView(s.vview, s.cfg.Value, s.vbuf, &r.Value); err != nil {
			return fmt.Errorf("%w: serialize value for %q: %w", ErrProcessing, topic, err)
		}
	}
	pk := key
	if s.windowed != nil && !r.KeyNull {
		pk = s.windowed.PartitionKey(r.Key, key)
	}
	return s.t.Send(topic, -1, key, value, r.Timestamp, r.Headers, pk)
}

// Repartition writes the stream through the internal topic
// <app id>-<name>-repartition and reads it back, so records are partitioned
// by their current key (Kafka Streams' repartition()). partitions 0 means as
// many as the source topics.
func Repartition[K, V any](s Stream[K, V], name string, partitions int, key serdes.Serde[K], value serdes.Serde[V]) Stream[K, V] {
	sink, source := s.b.g.Repartition(name, partitions, s.info)
	return repartitionThrough(s, sink, source, key, value)
}

// repartitionThrough writes s through the repartition sink and reads it
// back from source, the nodes of a repartition layout.
func repartitionThrough[K, V any](s Stream[K, V], sink, source *nodeInfo, key serdes.Serde[K], value serdes.Serde[V]) Stream[K, V] {
	topic := sink.Writes[0]
	out := newSink(s.b, topic, nil, SinkConfig[K, V]{Key: key, Value: value})
	// A repartition topic is partitioned by the whole serialized key, a
	// windowed one too: Kafka Streams gives its sink no partitioner, and
	// only a `to` with a windowed serializer gets the
	// WindowedStreamPartitioner.
	out.windowed = nil
	s.to(out)
	t := s.b.g.Topics[topic]
	return readSource(s.b, source, SourceConfig[K, V]{Topic: topic, Key: key, Value: value, Partitions: t.Partitions, role: engine.TopicRepartition})
}

// nonNil keeps an empty encoding distinct from null, which Kafka records
// tell apart: a nil slice would be written as a tombstone.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
