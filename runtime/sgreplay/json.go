package sgreplay

import (
	"encoding/json"
	"fmt"

	"github.com/streamgen/streamgen/serdes"
)

// JSONTopic makes the codec of a topic whose key or value (or both, as
// keyJSON and valueJSON say) is in the json format. The replay JSON of
// such a side is the wire JSON itself, put through the topic's serde both
// ways, so an input line holds what a producer of the topic writes
// (json_name members, enum names, the topic's timestamps) and --print
// shows what a consumer of the topic reads. Other sides are as in Topic.
func JSONTopic[K, V any](name string, key serdes.Serde[K], value serdes.Serde[V], keyJSON, valueJSON bool) TopicCodec {
	return &jsonCodec[K, V]{topicCodec: topicCodec[K, V]{name: name, key: key, value: value}, keyJSON: keyJSON, valueJSON: valueJSON}
}

type jsonCodec[K, V any] struct {
	topicCodec[K, V]
	keyJSON, valueJSON bool
}

func (c *jsonCodec[K, V]) EncodeJSON(key, value json.RawMessage) (k, v []byte, err error) {
	if k, err = encodeSide(c.key, key, c.keyJSON); err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	if v, err = encodeSide(c.value, value, c.valueJSON); err != nil {
		return nil, nil, fmt.Errorf("value: %w", err)
	}
	return k, v, nil
}

func (c *jsonCodec[K, V]) DecodeJSON(k, v []byte) (key, value json.RawMessage, err error) {
	if key, err = decodeSide(c.key, k, c.keyJSON); err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	if value, err = decodeSide(c.value, v, c.valueJSON); err != nil {
		return nil, nil, fmt.Errorf("value: %w", err)
	}
	return key, value, nil
}

// encodeSide turns the replay JSON of one side into Kafka bytes: for a
// json side, the JSON decoded and re-encoded by the serde (normalized, and
// checked as the topology would read it).
func encodeSide[T any](s serdes.Serde[T], m json.RawMessage, wire bool) ([]byte, error) {
	if !wire || isJSONNull(m) {
		return encodeJSON(s, m)
	}
	v, err := s.Decode(m)
	if err != nil {
		return nil, err
	}
	return s.Append([]byte{}, v)
}

// decodeSide turns Kafka bytes into the replay JSON of one side: for a json
// side, the bytes as the serde reads and writes them.
func decodeSide[T any](s serdes.Serde[T], b []byte, wire bool) (json.RawMessage, error) {
	if !wire || b == nil {
		return decodeJSON(s, b)
	}
	v, err := s.Decode(b)
	if err != nil {
		return nil, err
	}
	out, err := s.Append(nil, v)
	return json.RawMessage(out), err
}
