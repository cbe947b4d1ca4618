package sgstream

import (
	"bytes"

	"github.com/streamgen/streamgen/runtime/internal/engine"
)

// QueryReader implements engine.QueryKV's view of a cached store: reads
// through the record cache, as Kafka Streams' interactive queries read
// through CachingKeyValueStore, so they see the latest value of every key,
// cached or not. Unlike the task's own reads, they have no side effects: a
// range does not flush the cache (which would forward records from the
// query's goroutine), and gets do not reorder the cache's LRU list.
func (c *cachedKV) QueryReader() engine.KVReader { return cachedReader{c} }

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
