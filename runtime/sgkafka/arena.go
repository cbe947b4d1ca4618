package sgkafka

import (
	"bytes"
	"context"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// byteArena holds the copies of the keys and values a worker's collector
// hands franz-go, which reads them only when it writes a produce request.
// They are carved one after the other out of 64 KiB chunks, and a chunk
// is carved again once franz-go is done with every record in it. A copy
// per record was an allocation per record; a pool of records with their
// buffers cost about as much in sync.Pool's Get and Put across the
// worker's and franz-go's goroutines; chunks allocated afresh cost their
// zeroing, their page faults and a fifth more garbage collections on a
// pass-through topology.
//
// A record carries its chunk as its kgo.Record.Context, the field franz-go
// leaves to the application for enriching a record and hands back to the
// promise, which calls released. Only the worker carves; the promises, on
// franz-go's goroutines, only count records done.
type byteArena struct {
	cur    *arenaChunk
	carved int64         // records carved from cur
	sealed []*arenaChunk // chunks carved full, oldest first
}

type arenaChunk struct {
	// Context is context.Background(): franz-go asks a record's context
	// whether it is done.
	context.Context
	buf []byte
	// pending is, once the chunk is sealed, the records carved from it
	// that franz-go is not done with. Before, it counts the records done
	// (below zero): sealing adds those carved.
	pending atomic.Int64
}

const (
	chunkSize = 64 << 10
	// arenaMax is the largest key or value carved from a chunk; a larger
	// one is its own allocation, so that a big record does not leave most
	// of a chunk unused.
	arenaMax = chunkSize / 8
	// maxSealed bounds the sealed chunks the arena keeps for carving
	// again (16 MiB): past it, the oldest is left to the garbage
	// collector, so that a burst of records does not hold memory for good.
	maxSealed = 256
)

// emptyBytes is every empty key or value: non-nil, since an empty value
// is not a tombstone.
var emptyBytes = []byte{}

// copies returns copies of key and value that stay as they are until
// franz-go is done with the record, and the chunk holding them for the
// record's Context (nil when neither is carved). nil stays nil.
func (a *byteArena) copies(key, value []byte) (k, v []byte, chunk context.Context) {
	need := carvable(key) + carvable(value)
	if need == 0 {
		return ownCopy(key), ownCopy(value), nil
	}
	c := a.room(need)
	a.carved++
	return c.carve(key), c.carve(value), c
}

// released tells r's chunk, if any, that franz-go is done with r.
func released(r *kgo.Record) {
	if c, ok := r.Context.(*arenaChunk); ok {
		c.pending.Add(-1)
	}
}

func carvable(b []byte) int {
	if len(b) > arenaMax {
		return 0
	}
	return len(b)
}

// ownCopy is a copy of b outside the arena.
func ownCopy(b []byte) []byte {
	switch {
	case b == nil:
		return nil
	case len(b) == 0:
		return emptyBytes
	}
	return bytes.Clone(b)
}

func (c *arenaChunk) carve(b []byte) []byte {
	if carvable(b) == 0 {
		return ownCopy(b)
	}
	n := len(c.buf)
	c.buf = append(c.buf, b...)
	return c.buf[n:len(c.buf):len(c.buf)]
}

// room returns a chunk with need bytes left: the current one, or after
// sealing it the oldest sealed chunk franz-go is done with, or a new one.
func (a *byteArena) room(need int) *arenaChunk {
	if c := a.cur; c != nil && need <= cap(c.buf)-len(c.buf) {
		return c
	}
	if c := a.cur; c != nil {
		c.pending.Add(a.carved)
		a.sealed = append(a.sealed, c)
	}
	a.cur, a.carved = a.reusable(), 0
	if a.cur == nil {
		a.cur = &arenaChunk{Context: context.Background(), buf: make([]byte, 0, chunkSize)}
	}
	return a.cur
}

// reusable takes the oldest sealed chunk no record needs any more, nil if
// there is none.
func (a *byteArena) reusable() *arenaChunk {
	for i, c := range a.sealed {
		if c.pending.Load() == 0 {
			a.sealed = append(a.sealed[:i], a.sealed[i+1:]...)
			c.buf = c.buf[:0]
			return c
		}
	}
	if len(a.sealed) >= maxSealed {
		a.sealed = append(a.sealed[:0], a.sealed[1:]...)
	}
	return nil
}
