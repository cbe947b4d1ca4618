//go:build conformance

package main

import (
	"strconv"

	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// The processor of the scenario. Its twin is Scenarios.Seen in
// conformance/java/src/main/java/io/streamgen/conformance/Scenarios.java, which must compute
// exactly the same thing.

// seen numbers the records of each key in the store "seen" and forwards "<n>:<value>"; a
// tombstone deletes the key's count and forwards "reset", so the count starts again at 1.
type seen struct {
	ctx   *sgstream.ProcessorContext[string, string]
	store sgstate.KeyValueStore
}

// NewSeen makes the processor of one task.
func NewSeen() sgstream.Processor[string, int64, string, string] { return &seen{} }

func (p *seen) Init(ctx *sgstream.ProcessorContext[string, string]) error {
	s, err := ctx.StateStore("seen")
	if err != nil {
		return err
	}
	p.ctx, p.store = ctx, s.(sgstate.KeyValueStore)
	return nil
}

func (p *seen) Process(r sgstream.Record[string, int64]) error {
	k := []byte(r.Key)
	out := sgstream.Record[string, string]{Key: r.Key, Timestamp: r.Timestamp, Headers: r.Headers}
	if r.ValueNull {
		out.Value = "reset"
		if err := p.store.Delete(k); err != nil {
			return err
		}
		return p.ctx.Forward(out)
	}
	n := int64(1)
	b, ok, err := p.store.Get(k)
	if err != nil {
		return err
	}
	if ok {
		prev, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return err
		}
		n = prev + 1
	}
	if err := p.store.Put(k, []byte(strconv.FormatInt(n, 10))); err != nil {
		return err
	}
	out.Value = strconv.FormatInt(n, 10) + ":" + strconv.FormatInt(r.Value, 10)
	return p.ctx.Forward(out)
}

func (p *seen) Close() error { return nil }
