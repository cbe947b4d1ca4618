package sgstream

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/streamgen/streamgen/internal/toponame"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// ErrSuppressBufferFull is returned (wrapped, with ErrProcessing) when a
// suppress buffer configured to shut down when full goes over capacity
// (Kafka Streams' BufferConfig.shutDownWhenFull). It stops the task under
// every processing policy: the continue and dead-letter policies do not
// apply to it.
var ErrSuppressBufferFull = errors.New("streamgen: suppress buffer full")

// SuppressConfig configures Suppress (KTable#suppress).
type SuppressConfig struct {
	// UntilWindowCloses selects Suppressed.untilWindowCloses: one final
	// result per window, emitted once the window is closed. The table must
	// be windowed and Suppress's bufferTime must return the window end.
	// Otherwise Suppressed.untilTimeLimit(TimeLimit) is used.
	UntilWindowCloses bool
	// Grace is the grace period of the upstream windowed aggregation
	// (UntilWindowCloses only); for session windows pass grace + gap. A
	// window is emitted when windowEnd <= observed stream time - Grace.
	Grace time.Duration
	// TimeLimit is how long an update waits for more updates of its key
	// (untilTimeLimit only): a key first buffered at time T is emitted,
	// with its latest value, when observed stream time reaches T +
	// TimeLimit. 0 forwards every update.
	TimeLimit time.Duration
	// MaxRecords and MaxBytes bound the buffer; 0 means unbounded.
	MaxRecords int
	MaxBytes   int64
	// EmitEarlyWhenFull evicts (emits) the oldest keys while the buffer is
	// over capacity; false shuts down (ErrSuppressBufferFull). Not allowed
	// with UntilWindowCloses, whose buffer must be strict.
	EmitEarlyWhenFull bool
}

// WindowEnd is the buffer time of windowed keys for Suppress with
// UntilWindowCloses.
func WindowEnd[K any](key Windowed[K], _ int64) int64 { return key.End }

// Suppress holds back a table's updates (Kafka Streams' KTable#suppress,
// KTableSuppressProcessorSupplier). Updates are buffered by key in the
// logged store called name; a key keeps the buffer time of its first
// buffered update (later updates replace the value but not the position),
// and is emitted with its latest value, timestamp and headers when
// bufferTime <= observed stream time - limit, where observed stream time is
// the largest timestamp this node has seen, limit is cfg.Grace
// (UntilWindowCloses) or cfg.TimeLimit, and the buffer time is
// bufferTime(key, ts) (nil: the record timestamp). The emitted change's old
// value is the value before the first buffered update. UntilWindowCloses
// drops tombstones. The buffer survives restarts: it is rebuilt from the
// store when the task initialises.
func Suppress[K, V any](t Table[K, V], name string, cfg SuppressConfig, bufferTime func(key K, ts int64) int64) Table[K, V] {
	b := t.b
	info := b.g.Suppress(name, t.info)
	if cfg.UntilWindowCloses && cfg.EmitEarlyWhenFull {
		b.errorf("suppress %q: until window closes needs a strict buffer (shut down when full), not emit early", name)
	}
	if cfg.UntilWindowCloses && bufferTime == nil {
		b.errorf("suppress %q: until window closes needs the window end as buffer time", name)
	}
	// The buffer's store is <name>-store, as Kafka Streams names a named
	// suppression's store, so its changelog is <app id>-<name>-store-changelog.
	b.declareStore(StoreSpec{Name: suppressStoreName(name), Kind: KeyValueStore, Logged: true, OwnLayout: true})
	sendOldValues(t)
	p := &suppressor[K, V]{name: name, cfg: cfg, bufferTime: bufferTime, key: t.Key, value: t.Value}
	if cfg.UntilWindowCloses {
		p.limit = cfg.Grace.Milliseconds()
	} else {
		p.limit = cfg.TimeLimit.Milliseconds()
	}
	var getter func(*task) (valueGetter[K, V], error)
	if pg := t.getter; pg != nil {
		getter = func(tk *task) (valueGetter[K, V], error) {
			g, err := pg(tk)
			if err != nil {
				return nil, err
			}
			return suppressGetter[K, V]{p, g}, nil
		}
	}
	out, next := newTable(b, info, getter, "", t.Key, t.Value)
	out.old.parent = func() {} // the buffer already asked its parent for old values
	p.out = next
	b.onInit(info, p.init)
	t.to(p)
	return out
}

// suppressStoreName is the store of the suppression named name.
func suppressStoreName(name string) string { return toponame.SuppressStore(name) }

type suppressor[K, V any] struct {
	name       string
	cfg        SuppressConfig
	limit      int64
	bufferTime func(K, int64) int64
	key        serdes.Serde[K]
	value      serdes.Serde[V]
	out        recordNode[K, tableChange[V]]

	t        *task
	store    sgstate.KeyValueStore
	observed int64
	index    map[string]*bufEntry[K]
	queue    bufQueue[K]
	bytes    int64
	kbuf     []byte
	vbuf     []byte
}

// bufEntry is one buffered key. Values are kept serialized: they are
// written to the store anyway and decoded once, on emit.
type bufEntry[K any] struct {
	key      K
	keyBytes string
	time     int64 // buffer time, fixed at first insertion
	ts       int64 // timestamp of the latest update
	prior    []byte
	hasPrior bool
	value    []byte
	hasValue bool
	headers  []Header
	size     int64
	pos      int // index in the queue
}

func (e *bufEntry[K]) computeSize() {
	e.size = int64(len(e.keyBytes)+len(e.prior)+len(e.value)) + 24
	for _, h := range e.headers {
		e.size += int64(len(h.Key) + len(h.Value))
	}
}

// bufQueue orders entries by buffer time, then key bytes (Kafka's
// BufferKey order).
type bufQueue[K any] []*bufEntry[K]

func (q bufQueue[K]) Len() int { return len(q) }
func (q bufQueue[K]) Less(i, j int) bool {
	if q[i].time != q[j].time {
		return q[i].time < q[j].time
	}
	return q[i].keyBytes < q[j].keyBytes
}
func (q bufQueue[K]) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].pos, q[j].pos = i, j
}
func (q *bufQueue[K]) Push(x any) {
	e := x.(*bufEntry[K])
	e.pos = len(*q)
	*q = append(*q, e)
}
func (q *bufQueue[K]) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (p *suppressor[K, V]) init(t *task) error {
	s, err := t.Store(suppressStoreName(p.name))
	if err != nil {
		return err
	}
	kv, ok := s.(sgstate.KeyValueStore)
	if !ok {
		return fmt.Errorf("streamgen: suppress %q: store is a %T, not a key-value store", p.name, s)
	}
	p.t, p.store = t, kv
	p.observed = math.MinInt64
	p.index = map[string]*bufEntry[K]{}
	p.queue = p.queue[:0]
	p.bytes = 0
	return kv.All(func(kb, raw []byte) error {
		e, err := p.decodeEntry(kb, raw)
		if err != nil {
			return err
		}
		p.index[e.keyBytes] = e
		heap.Push(&p.queue, e)
		p.bytes += e.size
		return nil
	})
}

func (p *suppressor[K, V]) Process(r Record[K, tableChange[V]]) error {
	if r.Timestamp > p.observed {
		p.observed = r.Timestamp
	}
	var err error
	if p.kbuf, err = p.key.Append(p.kbuf[:0], r.Key); err != nil {
		return fmt.Errorf("%w: suppress %q: serialize key: %w", ErrProcessing, p.name, err)
	}
	e, ok := p.index[string(p.kbuf)]
	if ok {
		p.bytes -= e.size
	} else {
		bt := r.Timestamp
		if p.bufferTime != nil {
			bt = p.bufferTime(r.Key, r.Timestamp)
		}
		e = &bufEntry[K]{key: r.Key, keyBytes: string(p.kbuf), time: bt}
		if !r.Value.OldNull {
			e.hasPrior = true
			if e.prior, err = p.value.Append(nil, r.Value.Old); err != nil {
				return fmt.Errorf("%w: suppress %q: serialize value: %w", ErrProcessing, p.name, err)
			}
		}
	}
	e.ts, e.headers = r.Timestamp, r.Headers
	e.value, e.hasValue = nil, !r.Value.NewNull
	if e.hasValue {
		if e.value, err = p.value.Append(nil, r.Value.New); err != nil {
			return fmt.Errorf("%w: suppress %q: serialize value: %w", ErrProcessing, p.name, err)
		}
	}
	e.computeSize()
	p.bytes += e.size
	if !ok {
		p.index[e.keyBytes] = e
		heap.Push(&p.queue, e)
	}
	if err := p.store.Put(p.kbuf, p.encodeEntry(e)); err != nil {
		return err
	}
	return p.enforce()
}

func (p *suppressor[K, V]) overCapacity() bool {
	return (p.cfg.MaxRecords > 0 && len(p.queue) > p.cfg.MaxRecords) || (p.cfg.MaxBytes > 0 && p.bytes > p.cfg.MaxBytes)
}

func (p *suppressor[K, V]) enforce() error {
	expiry := p.observed - p.limit
	if p.observed == math.MinInt64 {
		return nil
	}
	for len(p.queue) > 0 && p.queue[0].time <= expiry {
		if err := p.evict(); err != nil {
			return err
		}
	}
	if !p.overCapacity() {
		return nil
	}
	if !p.cfg.EmitEarlyWhenFull {
		return fmt.Errorf("%w: %w: %q has %d records (max %d) and %d bytes (max %d)", ErrProcessing, ErrSuppressBufferFull,
			p.name, len(p.queue), p.cfg.MaxRecords, p.bytes, p.cfg.MaxBytes)
	}
	for p.overCapacity() && len(p.queue) > 0 {
		if err := p.evict(); err != nil {
			return err
		}
	}
	return nil
}

// evict removes the oldest entry and forwards it, unless it is a tombstone
// of a final-results buffer.
func (p *suppressor[K, V]) evict() error {
	e := heap.Pop(&p.queue).(*bufEntry[K])
	delete(p.index, e.keyBytes)
	p.bytes -= e.size
	if err := p.store.Delete([]byte(e.keyBytes)); err != nil {
		return err
	}
	if !e.hasValue && p.cfg.UntilWindowCloses {
		return nil
	}
	ch := tableChange[V]{NewNull: !e.hasValue, OldNull: !e.hasPrior}
	var err error
	if e.hasValue {
		if ch.New, err = p.value.Decode(e.value); err != nil {
			return fmt.Errorf("%w: suppress %q: decode value: %w", ErrProcessing, p.name, err)
		}
	}
	if e.hasPrior {
		if ch.Old, err = p.value.Decode(e.prior); err != nil {
			return fmt.Errorf("%w: suppress %q: decode value: %w", ErrProcessing, p.name, err)
		}
	}
	return p.out.Process(Record[K, tableChange[V]]{Key: e.key, Value: ch, Timestamp: e.ts, Headers: e.headers})
}

// Store layout of a buffered key's value: buffer time (8), record
// timestamp (8), flags (1: bit 0 prior present, bit 1 value present),
// prior length (4), prior, value length (4), value, header count (4), then
// per header key length (4), key, value length (4, 0xFFFFFFFF = null),
// value.
func (p *suppressor[K, V]) encodeEntry(e *bufEntry[K]) []byte {
	b := p.vbuf[:0]
	b = binary.BigEndian.AppendUint64(b, uint64(e.time))
	b = binary.BigEndian.AppendUint64(b, uint64(e.ts))
	var flags byte
	if e.hasPrior {
		flags |= 1
	}
	if e.hasValue {
		flags |= 2
	}
	b = append(b, flags)
	b = appendChunk(b, e.prior)
	b = appendChunk(b, e.value)
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.headers)))
	for _, h := range e.headers {
		b = appendChunk(b, []byte(h.Key))
		if h.Value == nil {
			b = binary.BigEndian.AppendUint32(b, math.MaxUint32)
		} else {
			b = appendChunk(b, h.Value)
		}
	}
	p.vbuf = b
	return b
}

func appendChunk(b, c []byte) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(c))), c...)
}

var errBadBufferEntry = errors.New("streamgen: corrupt suppress buffer entry")

func readChunk(b []byte) (chunk, rest []byte, null bool, err error) {
	if len(b) < 4 {
		return nil, nil, false, errBadBufferEntry
	}
	n := binary.BigEndian.Uint32(b)
	if n == math.MaxUint32 {
		return nil, b[4:], true, nil
	}
	if int(n) > len(b)-4 {
		return nil, nil, false, errBadBufferEntry
	}
	return bytes.Clone(b[4 : 4+n]), b[4+n:], false, nil
}

func (p *suppressor[K, V]) decodeEntry(kb, raw []byte) (*bufEntry[K], error) {
	k, err := p.key.Decode(kb)
	if err != nil {
		return nil, fmt.Errorf("streamgen: suppress %q: decode buffered key: %w", p.name, err)
	}
	e := &bufEntry[K]{key: k, keyBytes: string(kb)}
	if len(raw) < 17 {
		return nil, fmt.Errorf("%w in %q", errBadBufferEntry, p.name)
	}
	e.time = int64(binary.BigEndian.Uint64(raw))
	e.ts = int64(binary.BigEndian.Uint64(raw[8:]))
	flags := raw[16]
	e.hasPrior, e.hasValue = flags&1 != 0, flags&2 != 0
	rest := raw[17:]
	if e.prior, rest, _, err = readChunk(rest); err != nil {
		return nil, fmt.Errorf("%w in %q", err, p.name)
	}
	if e.value, rest, _, err = readChunk(rest); err != nil {
		return nil, fmt.Errorf("%w in %q", err, p.name)
	}
	if len(rest) < 4 {
		return nil, fmt.Errorf("%w in %q", errBadBufferEntry, p.name)
	}
	n := int(binary.BigEndian.Uint32(rest))
	rest = rest[4:]
	for i := 0; i < n; i++ {
		var hk, hv []byte
		var null bool
		if hk, rest, _, err = readChunk(rest); err != nil {
			return nil, fmt.Errorf("%w in %q", err, p.name)
		}
		if hv, rest, null, err = readChunk(rest); err != nil {
			return nil, fmt.Errorf("%w in %q", err, p.name)
		}
		if !null && hv == nil {
			hv = []byte{}
		}
		e.headers = append(e.headers, Header{Key: string(hk), Value: hv})
	}
	e.computeSize()
	return e, nil
}

// suppressGetter is the suppressed table's view: a buffered key still
// shows the value it had before its first buffered update.
type suppressGetter[K, V any] struct {
	p      *suppressor[K, V]
	parent valueGetter[K, V]
}

func (g suppressGetter[K, V]) Get(key K) (v V, ts int64, found bool, err error) {
	p := g.p
	if p.index != nil {
		if p.kbuf, err = p.key.Append(p.kbuf[:0], key); err != nil {
			return v, 0, false, err
		}
		if e, ok := p.index[string(p.kbuf)]; ok {
			if !e.hasPrior {
				return v, 0, false, nil
			}
			v, err = p.value.Decode(e.prior)
			// The prior value's own timestamp is not kept; the first
			// buffered update's buffer time stands in for it.
			return v, e.time, err == nil, err
		}
	}
	return g.parent.Get(key)
}
