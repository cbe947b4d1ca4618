package sgstream

import (
	"bytes"
	"fmt"

	"github.com/streamgen/streamgen/runtime/sgstate"
)

// KVReader is the read side of a key-value store, as interactive queries
// use it (see QueryKV).
type KVReader interface {
	// Get returns a copy of key's value.
	Get(key []byte) (value []byte, ok bool, err error)
	// Range visits keys in [from, to] (nil bounds are open) ascending;
	// slices are valid during the callback only.
	Range(from, to []byte, fn func(key, value []byte) error) error
}

// QueryKV returns a read-only view of a task's key-value store for readers
// outside the task's processing (interactive queries). The caller must keep
// the task from processing while it reads (the engine holds the worker's
// state lock).
//
// A store behind the record cache is read through it, as Kafka Streams'
// interactive queries read through CachingKeyValueStore: reads see the
// latest value of every key, cached or not. Unlike the task's own reads,
// they have no side effects: a range does not flush the cache (which would
// forward records from the query's goroutine), and gets do not reorder the
// cache's LRU list.
func QueryKV(s sgstate.Store) (KVReader, error) {
	switch kv := s.(type) {
	case *cachedKV:
		return cachedReader{kv}, nil
	case sgstate.KeyValueStore:
		return kv, nil
	}
	return nil, fmt.Errorf("streamgen: store %q is a %T, not a key-value store", s.Name(), s)
}

// cachedReader merges a cached store's namespace into reads of the
// underlying store without flushing it.
type cachedReader struct{ c *cachedKV }

func (r cachedReader) Get(key []byte) ([]byte, bool, error) {
	if v, ok := r.c.ns.Peek(key); ok {
		if v == nil {
			return nil, false, nil
		}
		return bytes.Clone(v), true, nil
	}
	return r.c.KeyValueStore.Get(key)
}

func (r cachedReader) Range(from, to []byte, fn func(key, value []byte) error) error {
	keys, values := r.c.ns.PeekRange(from, to)
	i := 0
	// emit visits the cached entries ordered before k (all of them for k
	// nil); a cached nil value is a delete and hides the stored key.
	emit := func(k []byte) error {
		for ; i < len(keys) && (k == nil || bytes.Compare(keys[i], k) < 0); i++ {
			if values[i] != nil {
				if err := fn(keys[i], values[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := r.c.KeyValueStore.Range(from, to, func(k, v []byte) error {
		if err := emit(k); err != nil {
			return err
		}
		if i < len(keys) && bytes.Equal(keys[i], k) {
			cv := values[i]
			i++
			if cv == nil {
				return nil
			}
			return fn(k, cv)
		}
		return fn(k, v)
	})
	if err != nil {
		return err
	}
	return emit(nil)
}
