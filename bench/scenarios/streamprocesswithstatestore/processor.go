package main

import (
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// kvProcessor reads the record's key from the store and writes the record's
// value under it: SimpleBenchmark's streamprocesswithstatestore. It forwards
// nothing.
type kvProcessor struct {
	store sgstate.KeyValueStore
}

// NewKVProcessor makes the processor of one task.
func NewKVProcessor() sgstream.Processor[string, []byte, string, []byte] { return &kvProcessor{} }

func (p *kvProcessor) Init(ctx *sgstream.ProcessorContext[string, []byte]) error {
	s, err := ctx.StateStore("kv")
	if err != nil {
		return err
	}
	p.store = s.(sgstate.KeyValueStore)
	return nil
}

func (p *kvProcessor) Process(r sgstream.Record[string, []byte]) error {
	k := []byte(r.Key)
	if _, _, err := p.store.Get(k); err != nil {
		return err
	}
	return p.store.Put(k, r.Value)
}

func (p *kvProcessor) Close() error { return nil }
