package main

import (
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// windowProcessor visits the key's windows of the last second and then puts
// the record at its timestamp: SimpleBenchmark's
// streamprocesswithwindowstore with a single-key fetch (the Kafka Streams
// program fetches the same way). It forwards nothing.
type windowProcessor struct {
	store sgstate.WindowStore
	seen  int
}

// NewWindowProcessor makes the processor of one task.
func NewWindowProcessor() sgstream.Processor[string, []byte, string, []byte] {
	return &windowProcessor{}
}

func (p *windowProcessor) Init(ctx *sgstream.ProcessorContext[string, []byte]) error {
	s, err := ctx.StateStore("ws")
	if err != nil {
		return err
	}
	p.store = s.(sgstate.WindowStore)
	return nil
}

func (p *windowProcessor) Process(r sgstream.Record[string, []byte]) error {
	k := []byte(r.Key)
	if err := p.store.Fetch(k, r.Timestamp-1000, r.Timestamp, func(int64, []byte) error {
		p.seen++
		return nil
	}); err != nil {
		return err
	}
	return p.store.Put(k, r.Timestamp, r.Value)
}

func (p *windowProcessor) Close() error { return nil }
