package sgreplay

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// TopicCodec converts a topic's records between Kafka bytes and the JSON of
// the replay format, where records are objects keyed by the spec's field
// names, primitives are plain JSON values and null is a tombstone.
type TopicCodec interface {
	// Name is the topic name.
	Name() string
	// EncodeJSON turns JSON key and value into Kafka bytes (nil for null).
	EncodeJSON(key, value json.RawMessage) (k, v []byte, err error)
	// DecodeJSON turns Kafka bytes into JSON key and value.
	DecodeJSON(k, v []byte) (key, value json.RawMessage, err error)
}

// Topic makes the codec of a topic with key type K and value type V. Values
// travel through encoding/json on the Go types, which is fine for replay
// and tests; the hot path never uses it.
func Topic[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V]) TopicCodec {
	return &topicCodec[K, V]{name: name, key: key, value: value}
}

type topicCodec[K, V any] struct {
	name  string
	key   serdes.Serde[K]
	value serdes.Serde[V]
}

func (c *topicCodec[K, V]) Name() string { return c.name }

func (c *topicCodec[K, V]) EncodeJSON(key, value json.RawMessage) (k, v []byte, err error) {
	if k, err = encodeJSON(c.key, key); err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	if v, err = encodeJSON(c.value, value); err != nil {
		return nil, nil, fmt.Errorf("value: %w", err)
	}
	return k, v, nil
}

func (c *topicCodec[K, V]) DecodeJSON(k, v []byte) (key, value json.RawMessage, err error) {
	if key, err = decodeJSON(c.key, k); err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	if value, err = decodeJSON(c.value, v); err != nil {
		return nil, nil, fmt.Errorf("value: %w", err)
	}
	return key, value, nil
}

func isJSONNull(m json.RawMessage) bool {
	return len(m) == 0 || string(m) == "null"
}

func encodeJSON[T any](s serdes.Serde[T], m json.RawMessage) ([]byte, error) {
	if isJSONNull(m) {
		return nil, nil
	}
	var v T
	if err := json.Unmarshal(m, &v); err != nil {
		return nil, err
	}
	b, err := s.Append(nil, v)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{} // an empty value is not a tombstone
	}
	return b, nil
}

func decodeJSON[T any](s serdes.Serde[T], b []byte) (json.RawMessage, error) {
	if b == nil {
		return json.RawMessage("null"), nil
	}
	v, err := s.Decode(b)
	if err != nil {
		return nil, err
	}
	return MarshalJSON(v)
}

// TimeWindowedTopic makes the codec of a topic whose keys are time windows
// size long, as Kafka Streams writes them: the key bytes followed by the
// 8-byte window start (the end is start + size). Their JSON form is
// {"key": <key>, "start": <ms>, "end": <ms>}.
func TimeWindowedTopic[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V], size time.Duration) TopicCodec {
	return &windowedCodec[K, V]{topicCodec: topicCodec[K, V]{name: name, key: key, value: value}, size: size.Milliseconds()}
}

// SessionWindowedTopic makes the codec of a topic whose keys are session
// windows, as Kafka Streams writes them: the key bytes, the 8-byte end and
// the 8-byte start. Their JSON form is that of TimeWindowedTopic.
func SessionWindowedTopic[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V]) TopicCodec {
	return &windowedCodec[K, V]{topicCodec: topicCodec[K, V]{name: name, key: key, value: value}, session: true}
}

type windowedCodec[K, V any] struct {
	topicCodec[K, V]
	session bool
	size    int64
}

type windowedJSON struct {
	Key   json.RawMessage `json:"key"`
	Start int64           `json:"start"`
	End   int64           `json:"end"`
}

func (c *windowedCodec[K, V]) EncodeJSON(key, value json.RawMessage) (k, v []byte, err error) {
	if !isJSONNull(key) {
		var w windowedJSON
		if err := json.Unmarshal(key, &w); err != nil {
			return nil, nil, fmt.Errorf("key: want {\"key\", \"start\", \"end\"}: %w", err)
		}
		if k, err = encodeJSON(c.key, w.Key); err != nil {
			return nil, nil, fmt.Errorf("key: %w", err)
		}
		if c.session {
			k = binary.BigEndian.AppendUint64(k, uint64(w.End))
		}
		k = binary.BigEndian.AppendUint64(k, uint64(w.Start))
	}
	if v, err = encodeJSON(c.value, value); err != nil {
		return nil, nil, fmt.Errorf("value: %w", err)
	}
	return k, v, nil
}

func (c *windowedCodec[K, V]) DecodeJSON(k, v []byte) (key, value json.RawMessage, err error) {
	if k == nil {
		key = json.RawMessage("null")
	} else {
		suffix := 8
		if c.session {
			suffix = 16
		}
		if len(k) < suffix {
			return nil, nil, fmt.Errorf("key: windowed key of %d bytes is shorter than its %d-byte window suffix", len(k), suffix)
		}
		base := k[:len(k)-suffix]
		var w windowedJSON
		if c.session {
			w.End = int64(binary.BigEndian.Uint64(k[len(k)-16:]))
			w.Start = int64(binary.BigEndian.Uint64(k[len(k)-8:]))
		} else {
			w.Start = int64(binary.BigEndian.Uint64(k[len(k)-8:]))
			w.End = w.Start + c.size
		}
		if w.Key, err = decodeJSON(c.key, base); err != nil {
			return nil, nil, fmt.Errorf("key: %w", err)
		}
		if key, err = MarshalJSON(w); err != nil {
			return nil, nil, err
		}
	}
	if value, err = decodeJSON(c.value, v); err != nil {
		return nil, nil, fmt.Errorf("value: %w", err)
	}
	return key, value, nil
}
