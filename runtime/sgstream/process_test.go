package sgstream

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/serdes"
)

// dedupe forwards a value's first occurrence, re-keyed by the value, with
// its source position; a stream-time punctuation reports how many it saw.
type dedupe struct {
	ctx   *ProcessorContext[string, string]
	seen  *KVStore[string, int64]
	count int
}

func (p *dedupe) Init(ctx *ProcessorContext[string, string]) error {
	p.ctx = ctx
	s, err := ctx.StateStore("seen")
	if err != nil {
		return err
	}
	if p.seen, err = NewKVStore(s, serdes.String, serdes.Int64); err != nil {
		return err
	}
	if _, err := ctx.StateStore("undeclared"); err == nil {
		return errors.New("undeclared store was returned")
	}
	ctx.ScheduleStreamTime(10*time.Millisecond, func(ts int64) error {
		_, ok := ctx.RecordMetadata()
		return ctx.Forward(Record[string, string]{Key: "punct", Value: fmt.Sprintf("%d:%v", p.count, ok), Timestamp: ts})
	})
	return nil
}

func (p *dedupe) Process(r Record[string, string]) error {
	p.count++
	_, _, found, err := p.seen.Get(r.Value)
	if err != nil || found {
		return err
	}
	if err := p.seen.Put(r.Value, 1, r.Timestamp); err != nil {
		return err
	}
	md, _ := p.ctx.RecordMetadata()
	return p.ctx.Forward(Record[string, string]{Key: r.Value, Value: fmt.Sprintf("%s/%d/%d", md.Topic, md.Partition, md.Offset), Timestamp: r.Timestamp})
}

func (p *dedupe) Close() error { return nil }

func TestProcessWithStoresPunctuationAndMetadata(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		AddStateStore(b, StoreSpec{Name: "seen", Kind: KeyValueStore, Logged: true})
		AddStateStore(b, StoreSpec{Name: "undeclared", Kind: KeyValueStore})
		s := Source(b, "src", strSrc("in"))
		out := Process(s, "dedupe", func() Processor[string, string, string, string] { return &dedupe{} }, []string{"seen"})
		To(out, "sink", "out", strSink())
	})
	d.pipeS("in", "a", "x", 1)
	d.pipeS("in", "b", "x", 2)
	d.pipeS("in", "c", "y", 12)
	// The punctuation is aligned to 0: first due at 10, fired after the
	// record that moved stream time to 12, with no record metadata.
	wantOut(t, d.outS("out", nil), "x=in/0/0@1", "y=in/0/2@12", "punct=3:false@12")
}

// rekey is a value processor that (wrongly) changes the key.
type rekey struct {
	ctx *ProcessorContext[string, string]
}

func (p *rekey) Init(ctx *ProcessorContext[string, string]) error { p.ctx = ctx; return nil }
func (p *rekey) Process(r Record[string, string]) error {
	if r.Value == "bad" {
		r.Key += "!"
	}
	r.Value += "?"
	return p.ctx.Forward(r)
}
func (p *rekey) Close() error { return nil }

func TestProcessValuesRejectsKeyChange(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		s := Source(b, "src", strSrc("in"))
		To(ProcessValues(s, "pv", func() Processor[string, string, string, string] { return &rekey{} }, nil), "sink", "out", strSink())
	})
	d.pipeS("in", "a", "ok", 1)
	wantOut(t, d.outS("out", nil), "a=ok?@1")
	err := d.Pipe(RawRecord{Topic: "in", Partition: -1, Key: []byte("a"), Value: []byte("bad"), Timestamp: 2})
	if !errors.Is(err, ErrKeyChanged) {
		t.Fatalf("err = %v, want ErrKeyChanged", err)
	}
}

// countingStore is a user-written store: a key-value store that counts
// its puts.
type countingStore struct {
	sgstate.KeyValueStore
	puts *int
}

func (s countingStore) Put(k, v []byte) error { *s.puts++; return s.KeyValueStore.Put(k, v) }

func TestCustomStore(t *testing.T) {
	puts := 0
	d := newTDrv(t, func(b *Builder) {
		AddStateStore(b, StoreSpec{Name: "seen", Kind: KeyValueStore, Custom: func() sgstate.Store {
			return countingStore{sgstate.NewMemoryKeyValue("seen"), &puts}
		}})
		s := Source(b, "src", strSrc("in"))
		Process(s, "dedupe", func() Processor[string, string, string, string] { return &dedupe{} }, []string{"seen"})
	})
	d.pipeS("in", "a", "x", 1)
	d.pipeS("in", "a", "y", 2)
	d.pipeS("in", "a", "y", 3)
	if puts != 2 {
		t.Fatalf("custom store saw %d puts, want 2", puts)
	}

	bad := newTDrv(t, func(b *Builder) {
		AddStateStore(b, StoreSpec{Name: "seen", Custom: func() sgstate.Store { return sgstate.NewMemoryKeyValue("other") }})
		Process(Source(b, "src", strSrc("in")), "p", func() Processor[string, string, string, string] { return &dedupe{} }, []string{"seen"})
	})
	if err := bad.Pipe(RawRecord{Topic: "in", Partition: -1, Value: []byte("x")}); err == nil {
		t.Fatal("custom store with the wrong name was accepted")
	}
}
